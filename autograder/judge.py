"""Judge one stage of one submission: build the child's job, run it in the sandbox, compare in the trusted process.

Nothing the child prints, exits with or writes decides a result: only values it reports on its reply
channel, decoded strictly and compared here with exact types against the oracle's answers.
"""

import functools
import json
import signal
from dataclasses import dataclass, field
from pathlib import Path

from autograder import sandbox
from autograder.board import draw_with_key
from autograder.checks import Case, Check, stage_checks
from autograder.child import encode
from autograder.course import STAGES, Stage

MEMO_POSITIONS = 5478
MEMO_CALLS_LIMIT = 40_000  # a memoized score of the empty board makes about 16,000 calls; plain minimax 549,946
SHOWN_FAILURES = 3  # failing examples shown for a visible check


@dataclass
class TestResult:
    stage: str
    check: str
    function: str
    name: str
    points: int
    score: float
    outcome: str  # passed, failed, error, missing, timeout, crashed, output-limit, not-run
    visible: bool
    output: str


@dataclass
class StageResult:
    stage: str
    score: float
    max_score: int
    outcome: str  # the worst outcome of its tests, or "missing"/"unreadable" for the file itself
    message: str
    tests: list[TestResult] = field(default_factory=list)
    seconds: float = 0.0


OUTCOME_ORDER = ["passed", "not-run", "failed", "error", "missing", "timeout", "output-limit", "crashed"]


DEFAULT_SECONDS = 60  # per stage; the slowest honest answers (plain searches in slow Python) need about 10


def stage_limits(seconds: float = DEFAULT_SECONDS) -> sandbox.Limits:
    return sandbox.Limits(cpu_seconds=seconds, wall_seconds=seconds * 1.5)


@functools.cache
def child_source() -> bytes:
    return (Path(__file__).parent / "child.py").read_bytes()


# Functions whose calls can be slow in honest code (plain searches) get a timer per call, so one slow
# board costs that board only; the cheap ones rely on the stage's limits, since arming a timer costs time.
SEARCHES = frozenset({"count_games", "score", "choose_move", "count_results", "quickest_move"})
CALL_SECONDS = 10


@dataclass(frozen=True)
class Plan:
    """Everything about a stage's checks that is the same for every submission, worked out once."""

    steps: tuple[dict, ...]  # the child's steps, one per distinct call (a board two checks share is asked once)
    step_by_id: dict[int, dict]
    job: bytes  # the child's job as sent on its stdin
    # check id -> [(step id, the child's encodings of every right answer, the case)], for judging at speed
    expected: dict[str, list[tuple[int, frozenset[str], Case]]]
    memo_step: int | None
    # check id -> (step ids of its cases with one right form, those forms, [(step id, forms)] of the others):
    # a check whose answers are all right is then decided by comparing two lists and a short loop
    quick: dict[str, tuple[list[int], list[str], list[tuple[int, frozenset[str]]]]]


def encodings(answers) -> frozenset[str]:
    """Every form the child may report a right answer in: a tally may come back as a list or a tuple."""
    forms = set()
    for answer in answers:
        if isinstance(answer, tuple):
            forms |= {encode(list(answer)), encode(answer)}
        else:
            forms.add(encode(answer))
    return frozenset(forms)


@functools.cache
def stage_plan(stage_id: str) -> Plan:
    checks = stage_checks(stage_id)
    steps, ids, expected, memo_step = [], {}, {}, None
    for check in checks:
        if check.kind in ("memo-size", "memo-speed"):
            if memo_step is None:
                memo_step = len(steps)
                board = "".join(check.cases[0].args[0])
                # The memo experiment goes first: it starts from an empty memo.
                steps.insert(0, {"id": memo_step, "call": check.function, "args": [board], "memo": True})
            continue
        expected[check.id] = []
        for one in check.cases:
            key = (check.function, one.args)
            if key not in ids:
                ids[key] = len(steps)
                step = {"id": ids[key], "call": check.function, "args": ["".join(one.args[0]), *one.args[1:]]}
                if check.function in SEARCHES:
                    step["seconds"] = CALL_SECONDS
                steps.append(step)
            expected[check.id].append((ids[key], encodings(one.accept), one))
    module = next(stage.module for stage in STAGES if stage.id == stage_id)
    job = json.dumps({"module": module, "steps": steps}).encode()
    quick = {}
    for check_id, cases in expected.items():
        single = [(step_id, next(iter(right))) for step_id, right, _ in cases if len(right) == 1]
        several = [(step_id, right) for step_id, right, _ in cases if len(right) != 1]
        quick[check_id] = ([step_id for step_id, _ in single], [form for _, form in single], several)
    return Plan(tuple(steps), {step["id"]: step for step in steps}, job, expected, memo_step, quick)


@dataclass
class Replies:
    """What the child reported, read strictly: anything malformed is counted and ignored."""

    imported: dict | None = None  # the import line
    values: dict = field(default_factory=dict)  # step id -> encoded value, for calls that simply returned
    details: dict[int, dict] = field(default_factory=dict)  # step id -> full reply (errors, changed boards, memo)
    done: bool = False
    garbled: int = 0

    def reply(self, step_id: int) -> dict | None:
        """One step's reply in the full form, whichever form it came in."""
        if step_id in self.details:
            return self.details[step_id]
        if step_id in self.values:
            return {"id": step_id, "ok": True, "value": self.values[step_id]}
        return None


def parse_replies(raw: bytes) -> Replies:
    """Each line is a batch of replies, or a single message (the import line, done)."""
    replies = Replies()
    for line in raw.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            replies.garbled += 1
            continue
        if not isinstance(message, dict):
            replies.garbled += 1
        elif "ids" in message:
            ids, values, details = message.get("ids"), message.get("values"), message.get("details")
            if type(ids) is list and type(values) is list and len(ids) == len(values) and type(details) is list:
                replies.values.update(zip(ids, values, strict=True))  # checked when judged, never trusted
                for detail in details:
                    if type(detail) is dict and type(detail.get("id")) is int:
                        replies.details.setdefault(detail["id"], detail)
                    else:
                        replies.garbled += 1
            else:
                replies.garbled += 1
        elif "import" in message and replies.imported is None:
            replies.imported = message
        elif message.get("done") is True:
            replies.done = True
        else:
            replies.garbled += 1
    return replies


def decode(encoded, depth: int = 0):
    """The Python value of the child's exact-type encoding (see child.encode); an Other for anything else."""
    if type(encoded) is not str or not encoded:
        return Other("an unreadable value")
    tag, body = encoded[0], encoded[1:]
    if tag == "n" and not body:
        return None
    if tag == "b" and body in ("0", "1"):
        return body == "1"
    if tag == "i":
        try:
            return int(body)
        except ValueError:
            return Other("an unreadable number")
    if tag == "s":
        return body
    if tag == "f":
        return Other(f"the float {body[:40]}")
    if tag in "lt" and depth < 2:
        try:
            items = json.loads(body)
        except ValueError:
            return Other("an unreadable list")
        if type(items) is not list:
            return Other("an unreadable list")
        values = [decode(item, depth + 1) for item in items]
        return values if tag == "l" else tuple(values)
    if tag == "o":
        return Other(f"an object of type {body.split(':', 1)[0][:40]}")
    return Other("an unreadable value")


@dataclass(frozen=True)
class Other:
    """A returned value of a type the contract never allows; only its description travels."""

    description: str

    def __repr__(self):
        return f"<{self.description}>"


def shown(value) -> str:
    if isinstance(value, Other):
        return value.description
    if type(value) is bool:
        return f"{value!r} (a bool, not a number)"
    return repr(value)


def type_problem(function: str, value, board) -> str | None:
    """Why value cannot be an answer of function at all (wrong type, off the board, taken square), or None."""
    if function in ("winner", "to_move"):
        allowed = ("X", "O", None) if function == "winner" else ("X", "O")
        if not (value is None or type(value) is str) or value not in allowed:
            return f"returned {shown(value)}, but {function} must return " + " or ".join(map(repr, allowed))
        return None
    if function == "count_results":
        if type(value) not in (list, tuple) or len(value) != 3 or any(type(v) is not int for v in value):
            return (
                f"returned {shown(value)}, but count_results must return a list of three ints [x_wins, o_wins, draws]"
            )
        return None
    if type(value) is not int:
        return f"returned {shown(value)}, but {function} must return an int"
    if function in ("choose_move", "quickest_move", "winning_square"):
        if function == "winning_square" and value == -1:
            return None
        if not 0 <= value <= 8:
            return f"returned {value}, which is not a square (squares are 0 to 8)"
        if board[value] != " ":
            return f"returned {value}, but square {value} is already taken"
    return None


def call_text(function: str, args: tuple) -> str:
    extra = "".join(f", {arg!r}" for arg in args[1:])
    return f"{function}(board{extra})"


def judge_calls(check: Check, plan: Plan, replies: Replies, fate: str) -> TestResult:
    """Compare every case of a call check; the first problems found make the feedback."""
    values = replies.values
    step_ids, forms, several = plan.quick[check.id]
    try:
        if [values.get(step_id) for step_id in step_ids] == forms and all(
            values.get(step_id) in right for step_id, right in several
        ):
            return _result(check, "passed", 0, [])  # the common case, decided without decoding anything
    except TypeError:  # a value that cannot be looked up (a forged list, say): the loop below says what it is
        pass
    wrong, problems, outcome = 0, [], "passed"
    for step_id, right, one in plan.expected[check.id]:
        value = values.get(step_id)
        if type(value) is str and value in right:
            continue  # the common case, decided without decoding anything
        reply = replies.reply(step_id)
        board = one.args[0]
        if reply is None:
            outcome, wrong = _worse(outcome, fate), wrong + 1
            problems.append((board, one, f"was never answered: {_fate_text(fate)}"))
            continue
        if not reply.get("ok"):
            error = str(reply.get("error", "error"))
            outcome, wrong = _worse(outcome, "missing" if error == "missing" else "error"), wrong + 1
            problems.append((board, one, _error_text(check.function, reply)))
            continue
        value = decode(reply.get("value"))
        why = type_problem(check.function, value, board)
        if why is None and _hashable(value) in one.accept:
            continue
        outcome, wrong = _worse(outcome, "failed"), wrong + 1
        problems.append((board, one, why or f"returned {shown(value)}", value))
    return _result(check, outcome, wrong, problems)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def _worse(a: str, b: str) -> str:
    return max(a, b, key=OUTCOME_ORDER.index)


def _fate_text(fate: str) -> str:
    return {
        "timeout": "the stage ran out of time before this call",
        "crashed": "the program stopped before this call",
        "output-limit": "the program printed too much and was stopped",
    }.get(fate, "the program stopped before this call")


def _error_text(function: str, reply: dict) -> str:
    error, message = str(reply.get("error", "")), str(reply.get("message", ""))[:300]
    if error == "NotImplementedError":
        return f"{function} is not written yet (it raises NotImplementedError)"
    if error == "missing":
        return message
    if error == "slow":
        return f"{function} {message}"
    where = f" at {reply['where']}" if isinstance(reply.get("where"), str) else ""
    return f"{function} raised {error}{where}: {message}" if message else f"{function} raised {error}{where}"


def _result(check: Check, outcome: str, wrong: int, problems: list) -> TestResult:
    passed = outcome == "passed"
    texts = {problem[2] for problem in problems}
    if (
        len(texts) == 1
        and wrong == len(check.cases)
        and outcome in ("error", "missing")
        and "raised" not in next(iter(texts))
    ):
        # Not written yet, or not there at all: one line says it all, no board needed.
        problems = []
        lines = [next(iter(texts)) + "."]
    else:
        lines = [] if passed else [_summary(check, wrong)]
    if not passed:
        for problem in problems[: SHOWN_FAILURES if check.visible else 1]:
            board, one, text = problem[0], problem[1], problem[2]
            drawing = draw_with_key(board)
            lines.append(f"On this board ({call_text(check.function, one.args)}):\n\n```\n{drawing}\n```\n")
            lines.append(f"your function {text}" if text.startswith("returned") else text)
            if check.visible and len(problem) > 3:
                answers = sorted(one.accept, key=repr)
                lines.append(f"expected {answers[0]!r}" if len(answers) == 1 else f"expected one of {answers!r}")
            lines.append("")
        if check.hint:
            lines.append(f"Try this: {check.hint}")
    return _test(check, outcome, "\n".join(lines).strip())


def _summary(check: Check, wrong: int) -> str:
    total = len(check.cases)
    if total == 1:
        return f"{check.function} did not give the right answer here."
    return f"{check.function} was not right on {wrong} of {total} boards."


def judge_memo(check: Check, plan: Plan, replies: Replies, fate: str) -> TestResult:
    reply = replies.reply(plan.memo_step)
    problems, outcome = [], "passed"
    if reply is None:
        outcome = fate
        problems.append(f"The memo experiment was never answered: {_fate_text(fate)}.")
    elif not reply.get("ok"):
        outcome = "missing" if reply.get("error") in ("missing", "memo") else "error"
        problems.append(_error_text(check.function, reply) + ".")
    else:
        value, size, calls = decode(reply.get("value")), reply.get("memo_size"), reply.get("calls")
        if type(value) is not int or _hashable(value) not in check.cases[0].accept:
            outcome = "failed"
            problems.append(f"score of the empty board returned {shown(value)}, which is not its score.")
        elif check.kind == "memo-size" and size != MEMO_POSITIONS:
            outcome = "failed"
            problems.append(
                f"After memo.clear() and score of the empty board, memo held {size} boards; "
                f"every reachable position ({MEMO_POSITIONS:,}) should be in it, each once."
            )
        elif check.kind == "memo-speed" and not (type(calls) is int and calls <= MEMO_CALLS_LIMIT):
            outcome = "failed"
            problems.append(
                f"Scoring the empty board from an empty memo called score {calls:,} times; plain minimax makes "
                f"549,946 calls, and with the memo it should need under {MEMO_CALLS_LIMIT:,}."
            )
    passed = outcome == "passed"
    text = "\n".join(problems + ([f"Try this: {check.hint}"] if not passed and check.hint else []))
    return _test(check, outcome, text)


def judge_unchanged(check: Check, plan: Plan, replies: Replies, answered: bool) -> TestResult:
    """Passes only when some other check of the stage passed and no call changed its board.

    Requiring a passed check keeps this point out of reach of code that returns without doing anything.
    """
    changed = [
        (plan.step_by_id[step_id], reply)
        for step_id, reply in sorted(replies.details.items())
        if "changed" in reply and step_id in plan.step_by_id
    ]
    outcome, text = "passed", ""
    if changed:
        step, reply = changed[0]
        after = decode(reply["changed"])
        outcome = "failed"
        text = (
            f"{len(changed)} calls changed the board they were given. {step['call']} was given:\n\n```\n"
            f"{draw_with_key(step['args'][0])}\n```\n\nand left it as:\n\n```\n"
            f"{draw_with_key(after) if isinstance(after, list) and len(after) == 9 else shown(after)}\n```"
        )
    elif not answered:
        outcome = "not-run"
        text = "No function of this stage gave right answers yet, so this is not counted yet."
    if outcome != "passed" and check.hint:
        text += f"\n\nTry this: {check.hint}"
    return _test(check, outcome, text)


def _test(check: Check, outcome: str, output: str) -> TestResult:
    """A check's result: all its points when it passed, none otherwise."""
    score = check.points if outcome == "passed" else 0
    return TestResult("", check.id, check.function, check.title, check.points, score, outcome, check.visible, output)


def fail_all(stage: Stage, outcome: str, message: str) -> StageResult:
    """Every check of the stage failed for one reason (not submitted, unreadable, did not import)."""
    tests = [_test(check, outcome, message) for check in stage_checks(stage.id)]
    for test in tests:
        test.stage = stage.id
    return StageResult(stage.id, 0, stage.points, outcome, message, tests)


def grade_stage(
    stage: Stage, source: str, isolation: "sandbox.Isolation | None" = None, seconds: float = DEFAULT_SECONDS
) -> StageResult:
    """Run the student's module for one stage in a sandboxed child and judge every check."""
    checks = stage_checks(stage.id)
    plan = stage_plan(stage.id)
    files = {"child.py": child_source(), stage.filename: source.encode()}
    limits = stage_limits(seconds)
    run = sandbox.run(files, "child.py", plan.job, limits, isolation)
    replies = parse_replies(run.reply)
    imported = replies.imported
    fate = {"timeout": "timeout", "output-limit": "output-limit"}.get(run.status, "crashed")
    if run.status == "killed" and (run.returncode == -signal.SIGXCPU or run.cpu_seconds >= limits.cpu_seconds - 0.5):
        fate = "timeout"  # the CPU limit's signal: to a student, that is running out of time
    if imported is None or imported.get("import") != "ok":
        if imported is not None:
            where = f" at {imported['where']}" if isinstance(imported.get("where"), str) else ""
            message = (
                f"{stage.filename} could not be imported: {imported.get('error')}{where}: {imported.get('message')}"
            )
        elif run.status == "exited":
            message = f"{stage.filename} ended the program (exit code {run.returncode}) while it was imported"
        else:
            message = f"{stage.filename} stopped before it could be tested: {run.detail or _fate_text(fate)}"
        result = fail_all(stage, "error" if imported is not None else fate, message)
        result.seconds = run.wall_seconds
        return result
    tests = []
    for check in checks:
        if check.kind in ("memo-size", "memo-speed"):
            tests.append(judge_memo(check, plan, replies, fate))
        elif check.kind == "calls":
            tests.append(judge_calls(check, plan, replies, fate))
    answered = any(test.outcome == "passed" for test in tests)
    for check in checks:
        if check.kind == "unchanged":
            tests.append(judge_unchanged(check, plan, replies, answered))
    order = {check.id: index for index, check in enumerate(checks)}
    tests.sort(key=lambda test: order[test.check])
    for test in tests:
        test.stage = stage.id
    score = sum(t.score for t in tests)
    outcome = max((t.outcome for t in tests), key=OUTCOME_ORDER.index)
    notes = [run.detail] if not replies.done and run.detail else []
    if replies.garbled:
        notes.append(f"{replies.garbled} unreadable reply lines were ignored")
    return StageResult(stage.id, score, stage.points, outcome, " ".join(notes), tests, run.wall_seconds)
