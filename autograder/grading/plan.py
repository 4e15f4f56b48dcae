"""What the sandboxed children are asked for one stage, worked out once from the stage's checks.

A stage's calls are split into two jobs for one child, asked in turn: the visible job asks the boards of the
visible checks (the worked examples every student has), the hidden job every other board, and the hidden job is
handed over only once the parent has read every reply to the visible one (judge.py). Nothing the child wrote
while it could know a hidden board reaches the visible checks' texts, which are shown to the student as they are;
what it writes later goes only into the hidden checks' details, which are held back until the grades are
published. Each job lists the calls to make (a board two checks share asked once); the judge gets, per check, the
step ids of its cases and the child's encodings of every right answer, so a submission whose answers are right is
judged by comparing strings, without decoding anything.
"""

import marshal
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from autograder.course.cache import built_once, cached
from autograder.course.checks import Check, stage_checks
from autograder.course.stages import FUNCTIONS, STAGE_BY_ID, Stage
from autograder.grading.child import encode
from autograder.grading.sandbox.outbox import MORE_FD

# Functions whose calls can be slow in honest code (plain searches) get a timer per call, so one slow
# board costs that board only; the cheap ones rely on the stage's limits, since arming a timer costs time.
CALL_SECONDS = 10  # CPU seconds of one slow call (within the stage's limit, sandbox.DEFAULT_STAGE_SECONDS)
IMPORT_SECONDS = 10  # CPU seconds the child's timer gives the student module's import (within the stage's limit)

# The memo experiment runs in a child of its own (see child.memo_experiment). After the counted scoring of the
# empty board it scores the empty board AGAIN_EMPTY more times and then every reachable board, all within
# AGAIN_SECONDS of its CPU time: a memo answers them all in milliseconds, a plain search needs 549,946 calls for
# each empty board and over two million for the rest (seconds). This timer is the child's own (student code can
# switch it off): it only stops an honest plain search early. What decides is the CPU time of the whole child, as
# the sandbox measures it (judging.MEMO_CPU_THRESHOLD, no looser than AGAIN_SECONDS).
AGAIN_EMPTY = 3
AGAIN_SECONDS = 0.5
# The prune experiment of the alpha-beta stage runs in the same kind of child, with no memo to read: it scores the
# empty board (within PRUNE_SECONDS of CPU time) and then the nine openings (within PRUNE_SECONDS again); the
# parent reads that child's CPU time, which decides (judging.PRUNE_CPU_THRESHOLD, under PRUNE_SECONDS).
PRUNE_SECONDS = 1.0
MEMO_KINDS = ("memo-size", "memo-speed", "prune")  # the checks judged from the experiment's child


@dataclass(frozen=True)
class Plan:
    """Everything about a stage's checks that is the same for every submission, worked out once."""

    job: bytes  # the visible job as sent on the child's stdin: the visible checks' steps
    # check id -> [(step id, the child's encodings of every right answer)], one per case of the check, in its order:
    # judging pairs them with the check's cases (a plan does not hold them again: it loads in half the time)
    expected: dict[str, list[tuple[int, frozenset[str]]]]
    # check id -> (step ids of its cases with one right form, those forms, [(step id, forms)] of the others):
    # a check whose answers are all right is then decided by comparing two lists and a short loop
    quick: dict[str, tuple[list[int], list[str], list[tuple[int, frozenset[str]]]]]
    forms: frozenset[str]  # every right answer's encoding: values among them need no further reading
    step_ids: frozenset[int]
    visible_ids: frozenset[int] = frozenset()  # the steps of the visible job
    hidden_ids: frozenset[int] = frozenset()  # the steps of the hidden job: boards no visible check asks
    hidden_job: bytes = b""  # the hidden job: sent after the visible replies, or on stdin to a child of its own
    memo_job: bytes | None = None  # the memo experiment's job, for the stage that has one
    memo_name: str = ""  # the memo dict the experiment reads (Stage.memo; "" for the prune experiment)
    memo_again: tuple[int | None, ...] = ()  # the right answers of the scoring again, in the job's order
    memo_scores: dict[str, int] = field(default_factory=dict)  # what a right memo holds: each key (a board) -> score
    memo_counts: Counter = field(default_factory=Counter)  # how many of those boards score 1, 0 and -1

    @cached_property
    def steps(self) -> tuple[dict, ...]:
        """Every step of both jobs, one per distinct call (a board two checks share is asked once), in id order:
        {"id", "call", "args": [board, *more], "seconds" when the call has a timer of its own}.

        Read back from the two jobs when first asked (a wrong answer, a diagnosis), not kept in the plan: most
        graders never need these ten thousand dicts of stage one, and loading them was half of the plan's load."""
        steps = []
        for job in (self.job, self.hidden_job):
            calls = marshal.loads(job)["calls"]
            ids, boards, args, timers = calls["ids"], calls["boards"], calls["args"], calls["seconds"]
            for name, start, stop in calls["runs"]:
                timer = {"seconds": timers[name]} if name in timers else {}
                for at in range(start, stop):
                    steps.append(
                        {"id": ids[at], "call": name, "args": [boards[9 * at : 9 * at + 9], *args[at]], **timer}
                    )
        return tuple(sorted(steps, key=lambda step: step["id"]))

    @cached_property
    def step_by_id(self) -> dict[int, dict]:
        return {step["id"]: step for step in self.steps}

    def __getstate__(self) -> dict:
        """What pickle keeps (the checks' cache): the fields, not the steps read back from the jobs."""
        return {key: value for key, value in self.__dict__.items() if key not in ("steps", "step_by_id")}


def encodings(answers) -> frozenset[str]:
    """Every form the child may report a right answer in: a tally may come back as a list or a tuple."""
    forms = set()
    for answer in answers:
        if isinstance(answer, tuple) and answer and isinstance(answer[0], tuple):
            forms.add(encode([list(item) for item in answer]))  # boards (symmetries): a list of lists
        elif isinstance(answer, tuple):
            forms |= {encode(list(answer)), encode(answer)}
        else:
            forms.add(encode(answer))
    return frozenset(forms)


@built_once
def stage_plan(stage_id: str) -> Plan:
    """The stage's plan: its children's jobs and every answer they are judged against, kept between runs."""
    return cached(f"{stage_id}-plan", lambda: _build_plan(stage_id))


def _build_plan(stage_id: str) -> Plan:
    checks = stage_checks(stage_id)
    stage = STAGE_BY_ID[stage_id]
    steps, ids, expected, memo = [], {}, {}, {}
    for check in checks:
        if check.kind in MEMO_KINDS:
            memo = _memo_plan(stage, check)
            continue
        expected[check.id] = []
        for one in check.cases:
            key = (check.function, one.args)
            if key not in ids:
                ids[key] = len(steps)
                step = {"id": ids[key], "call": check.function, "args": ["".join(one.args[0]), *one.args[1:]]}
                if FUNCTIONS[check.function].slow:
                    step["seconds"] = CALL_SECONDS
                steps.append(step)
            expected[check.id].append((ids[key], encodings(one.accept)))
    # A step of a visible check is asked in the visible job, even when a hidden check shares it: it is no secret.
    visible_ids = frozenset(step_id for check in checks if check.visible for step_id, _ in expected[check.id])
    hidden_ids = frozenset(step["id"] for step in steps) - visible_ids
    more = {"more": MORE_FD} if hidden_ids else {}  # the hidden job follows on that descriptor (judge.py)
    job = _job(stage, calls=wire_calls([step for step in steps if step["id"] in visible_ids]), **more)
    hidden_job = _job(stage, calls=wire_calls([step for step in steps if step["id"] in hidden_ids]))
    quick = {}
    for check_id, cases in expected.items():
        single = [(step_id, next(iter(right))) for step_id, right in cases if len(right) == 1]
        several = [(step_id, right) for step_id, right in cases if len(right) != 1]
        quick[check_id] = ([step_id for step_id, _ in single], [form for _, form in single], several)
    forms = frozenset(form for cases in expected.values() for _, right in cases for form in right)
    step_ids = frozenset(step["id"] for step in steps)
    plan = Plan(
        job,
        expected,
        quick,
        forms,
        step_ids,
        visible_ids,
        hidden_ids,
        hidden_job,
        **memo,
    )
    if plan.steps != tuple(steps):
        raise AssertionError(f"{stage_id}: the plan's jobs do not give back its steps")
    return plan


def _job(stage: Stage, **work) -> bytes:
    """A child's job as its stdin carries it: marshal (child.main reads it), version 4, which every Python 3 loads."""
    return marshal.dumps({"module": stage.module, "import_seconds": IMPORT_SECONDS, **work}, 4)


def wire_step(step: dict) -> tuple:
    """A step as child.run_step takes it: (id, function, arguments, CPU seconds or 0)."""
    return step["id"], step["call"], tuple(step["args"]), step.get("seconds", 0)


def wire_calls(steps: list[dict]) -> dict:
    """Steps as child.run_steps takes them, in columns: the ids, every board in one str (nine characters each), the
    arguments after the board, the CPU seconds of the functions that have a timer, and the stretches of calls of one
    function, each (function, first call, end), which the child makes in chunks when they need nothing more.

    A job of thousands of calls then loads in a few objects: as one tuple per call, loading it was a tenth of a
    stage-one child's CPU time."""
    if any(len(step["args"][0]) != 9 for step in steps):
        raise ValueError("a call's board is not nine squares")
    seconds = {step["call"]: step.get("seconds", 0) for step in steps}
    if len(seconds) != len({(step["call"], step.get("seconds", 0)) for step in steps}):
        raise ValueError("a function's calls have different timers")  # the child reads one per function
    runs: list[tuple[str, int, int]] = []  # (function, first call, end): each stretch of calls of one function
    for at, step in enumerate(steps):
        if runs and runs[-1][0] == step["call"]:
            runs[-1] = (step["call"], runs[-1][1], at + 1)
        else:
            runs.append((step["call"], at, at + 1))
    return {
        "ids": [step["id"] for step in steps],
        "boards": "".join(step["args"][0] for step in steps),
        "args": [tuple(step["args"][1:]) for step in steps],
        "seconds": {call: limit for call, limit in seconds.items() if limit},
        "runs": runs,
    }


def _memo_plan(stage: Stage, check: Check) -> dict:
    from autograder.course.oracle import oracle

    positions = oracle().positions  # every reachable board, the empty board first
    scores = {"".join(board): oracle().score(board) for board in positions}
    board = "".join(check.cases[0].args[0])
    if check.kind == "prune":  # no memo: the empty board, then the nine openings
        again = ["".join(child) for child in oracle().children(check.cases[0].args[0]).values()]
        experiment = {"call": check.function, "board": board, "seconds": PRUNE_SECONDS, "table": None}
        experiment.update(again=again, again_seconds=PRUNE_SECONDS)
        contents = {}
    else:
        again = [board] * AGAIN_EMPTY + list(scores)
        experiment = {"call": check.function, "board": board, "seconds": CALL_SECONDS, "table": stage.memo}
        experiment.update(again=again, again_seconds=AGAIN_SECONDS)
        contents = scores if check.memo_contents is None else dict(check.memo_contents)
    return {
        "memo_job": _job(stage, experiment=experiment),
        "memo_name": experiment["table"] or "",
        "memo_again": tuple(scores[board] for board in again),
        "memo_scores": contents,
        "memo_counts": Counter(contents.values()),
    }
