"""Naming a wrong stage's mistake: the student's answers compared with those of each known mistake of the stage.

The known mistakes are the course's own known-wrong versions of each stage (tests/variants/<stage>/wrong_*.py),
each described in the lesson's words by its docstring's first line. Their answers on every board the stage's
plan asks are computed by the course, never by running student code again: each variant is our own trusted
code, run as the child would run it (one fresh module, the visible steps then the hidden ones, through
child.run_step) in a spawned worker process, and kept between runs (course/cache.py) under the suite's hash and
the variants' own digest.

The student's side is what the parent already read and judged from the sandboxed children: each step's answer
and judging's verdict on it (TestResult.wrong_steps); a known mistake's answers get their verdict from the same
judge_calls (judged_wrong), so right and wrong are decided in one place.
A mistake matches when it gives the very answer the student gave on nearly all of their wrong answers
(MATCH_SHARE) and never a wrong answer where the student was right; two mistakes together may cover a stage
(two functions of one stage, or two slips in one). Anything else stays "not a known mistake".
"""

import functools
import hashlib
import multiprocessing
import os
import signal
import sys
import time
import types
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from autograder.course.cache import built_once, cached
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGE_BY_ID, Stage
from autograder.grading import child
from autograder.grading.judging import Unanswered, judge_calls, judge_memo
from autograder.grading.plan import MEMO_KINDS, Plan, stage_plan, wire_step
from autograder.grading.protocol import Replies, parse_replies
from autograder.record import Diagnosis, Outcome

VARIANTS = ROOT / "tests" / "variants"
MATCH_SHARE = 0.9  # "nearly all" of the student's wrong answers
MAX_MISTAKES = 2  # a stage is explained by at most this many known mistakes at once
ONE_OF = " or "  # between known mistakes the student's answers cannot tell apart (their names, and their words)
BUILD_JOBS = 2
# A variant's answers are cut off after VARIANT_CALLS calls of its own functions (every function its module defines,
# counted as its recursion looks them up), not after some CPU seconds: a count of calls is the same on every machine,
# fast or slow or busy, so the same course and variants give the same catalogue anywhere. Counted on the variants of
# 2026-12-03: at most 1.7 million calls for all the answers of one (03's wrong_no_undo_in_choose, uncached), except
# the plain searches over every board of the memo stage (04's wrong_never_looked_up and wrong_unused_memo, 10.8
# million, 7 s here), whose answers are the right ones anyway (what is wrong with them is their memo): the steps
# not answered within the count are left out of the comparison, everywhere alike.
VARIANT_CALLS = 3_000_000
# Only a safety stop, never a cut-off: a variant still computing after this much wall-clock time (a loop that calls
# nothing, a machine far too slow) is an error of the course (VariantTooSlow), not a shorter catalogue on that machine.
VARIANT_WALL_SECONDS = 600.0
RECURSION_LIMIT = 3000  # the child's own limit

# step id -> the answer's signature (see signature); an experiment's check (the memo's or pruning's, judged from a
# child of its own) by its check id -> PASSED or FAILED
Answers = dict[int | str, str]


@dataclass(frozen=True)
class Known:
    """One known mistake of a stage: its variant's name, what it does in the lesson's words, and its answers."""

    name: str
    says: str
    answers: Answers
    wrong: frozenset = frozenset()  # the steps and checks where its answer is wrong (judged_wrong)


def signature(reply: dict | tuple | None) -> str | None:
    """A reply as one comparable string: the value's encoding, or "!" and the error's kind; None: no answer."""
    if reply is None:
        return None
    if isinstance(reply, tuple):
        return reply[1]
    if reply.get("ok"):
        return reply["value"]
    return None if reply["error"] == "slow" else "!" + reply["error"]


def variant_files(stage: Stage) -> list:
    return sorted((VARIANTS / stage.id).glob("wrong_*.py"))


def _says(source: str) -> str:
    """The first line of the variant's docstring: what the mistake is, in the lesson's words."""
    text = source.lstrip()
    for quote in ('"""', "'''"):
        if text.startswith(quote):
            return text[3:].split("\n", 1)[0].strip().rstrip(".")
    return ""


def _digest(stage: Stage) -> str:
    digest = hashlib.sha256()
    for path in variant_files(stage):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


@built_once  # the grader's threads judge stages at once: one of them builds, the others wait
def known_mistakes(stage_id: str) -> tuple[Known, ...]:
    """Every known mistake of the stage with its answers, built once for this suite and these variants."""
    stage, plan = STAGE_BY_ID[stage_id], stage_plan(stage_id)
    try:
        catalogue = cached(f"{stage_id}-mistakes-{_digest(stage)}", lambda: _build(stage))
    except VariantTooSlow as error:  # the course's own error, said once a run: this stage names no mistake
        print(f"autograde: {error}: a course error, so no mistake of {stage_id} is named", file=sys.stderr)
        return ()
    # Judged here, once a run, by judging itself: the answers are what is kept, the verdict is the grader's.
    return tuple(replace(known, wrong=judged_wrong(stage, plan, known.answers)) for known in catalogue)


def _build(stage: Stage) -> tuple[Known, ...]:
    files = variant_files(stage)
    if not files:
        return ()
    # Spawned, not forked: the grader runs threads. Each worker sets the child's recursion limit and call timer.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(BUILD_JOBS, len(files)), mp_context=context, initializer=_start_worker) as pool:
        runs = [pool.submit(variant_answers, stage.id, path.read_text(), VARIANT_WALL_SECONDS) for path in files]
        answers = []
        for path, run in zip(files, runs, strict=True):
            try:
                answers.append(run.result())
            except VariantTooSlow as error:
                raise VariantTooSlow(f"tests/variants/{stage.id}/{path.name} {error}") from None
    return tuple(
        Known(path.stem, _says(path.read_text()), found) for path, found in zip(files, answers, strict=True) if found
    )


class VariantTooSlow(Exception):
    """A variant still computing at the wall-clock safety stop: an error of the course, never a shorter catalogue."""


class _Meter:
    """The calls a variant's own functions may still make; past them each call raises child.CallTimeout."""

    def __init__(self, calls: int):
        self.left, self.spent = calls, False

    def count(self, module: types.ModuleType, filename: str) -> None:
        """Each function the module defines replaced by one that counts its calls (the recursion looks the name up
        at each call, so it is counted too)."""
        for name, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and value.__code__.co_filename == filename:
                setattr(module, name, self._counted(value))

    def _counted(self, function):
        @functools.wraps(function)
        def counted(*args, **kwargs):
            self.left -= 1
            if self.left < 0:
                self.spent = True
                raise child.CallTimeout()
            return function(*args, **kwargs)

        return counted


_alarm = [False]  # the safety stop went off


def _on_alarm(signum, frame) -> None:
    _alarm[0] = True
    raise child.CallTimeout()


def _start_worker() -> None:
    sys.setrecursionlimit(2 * RECURSION_LIMIT)  # the child's depth: each counted call is two frames here
    signal.signal(signal.SIGPROF, child.on_timer)
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - a variant must not write into the grader's output


def variant_answers(stage_id: str, source: str, wall_seconds: float = VARIANT_WALL_SECONDS) -> Answers:
    """A variant's answer to every step of the stage's plan, asked as the child asks them: in one fresh module, the
    visible job's steps and then the hidden job's, within VARIANT_CALLS calls of its functions in all.

    Raises VariantTooSlow when it is still computing after wall_seconds (the worker's SIGALRM, _start_worker)."""
    _alarm[0] = False
    signal.setitimer(signal.ITIMER_REAL, wall_seconds)
    try:
        answers = _answers(stage_id, source)
        if _alarm[0]:
            raise child.CallTimeout()
        return answers
    except child.CallTimeout:
        raise VariantTooSlow(f"was still computing after {wall_seconds:g} s of wall-clock time") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _answers(stage_id: str, source: str) -> Answers:
    from autograder.authoring.mutants.inprocess import cached_module, load
    from autograder.authoring.mutants.make import student_functions

    stage, plan = STAGE_BY_ID[stage_id], stage_plan(stage_id)
    # No CPU timer of the child's (seconds 0): the meter's count decides, the same everywhere.
    steps = [
        (*wire_step(step)[:3], 0)
        for ids in (plan.visible_ids, plan.hidden_ids)
        for step in plan.steps
        if step["id"] in ids
    ]
    memo = bool(stage.memo)  # a memo's state carries from call to call: nothing may be cached around it

    def ask(cache: bool) -> tuple[Answers, list[str]]:
        answers, changed, meter = {}, [], _Meter(VARIANT_CALLS)
        try:
            module = load(stage, source)
        except Exception:  # noqa: BLE001 - a variant that does not load has no answers to compare
            return {}, []
        meter.count(module, stage.filename)
        if cache:
            cached_module(module, student_functions(stage), changed)
        for step in steps:
            reply = child.run_step(module, stage.filename, step)
            if meter.spent or _alarm[0]:
                return answers, changed  # this step and the rest are left out
            found = signature(reply)
            if found is not None:
                answers[step[0]] = found
        return answers, changed

    answers, changed = ask(cache=not memo)
    if changed:  # the variant changes its board: its cached answers are not the plain code's
        answers, _ = ask(cache=False)
    if plan.memo_job is not None and not _alarm[0]:
        answers |= _experiment(stage, plan, source)
    return answers


def _experiment(stage: Stage, plan: Plan, source: str) -> Answers:
    """The variant's verdict on each check of the stage's memo or prune experiment: the child's own experiment
    (child.memo_experiment) run here, its report read and judged as the parent judges a student's, but with no
    CPU time of a whole child to read (a search that does not memoize or prune is still stopped by the
    experiment's own timers); the CPU time it took here stands for the child's."""
    import marshal
    import tempfile

    from autograder.authoring.mutants.inprocess import load

    try:
        module = load(stage, source)
    except Exception:  # noqa: BLE001 - a variant that does not load has no answers to compare
        return {}
    with tempfile.TemporaryFile() as file:
        replies = child.Replies(file.fileno())
        replies.send({"import": "ok"})
        start = time.process_time()
        child.memo_experiment(module, stage.filename, marshal.loads(plan.memo_job)["experiment"], replies)
        run = types.SimpleNamespace(cpu_seconds=time.process_time() - start)
        replies.send({"done": True})
        file.seek(0)
        read = parse_replies(file.read(), plan, killed=False, memo=True)
    ended = Unanswered(Outcome.CRASHED, "")
    return {
        check.id: str(judge_memo(check, plan, read, run, ended, stage.filename).outcome)
        for check in stage_checks(stage.id)
        if check.kind in MEMO_KINDS
    }


# ---------------------------------------------------------------------------------------------------------------
# The student's side, from what the parent judged


def student_answers(plan: Plan, replies: Replies, tests: list) -> tuple[Answers, Answers]:
    """(wrong, right): the student's answered steps, split by judging's verdict (TestResult.wrong_steps), each with
    its signature; and the checks of the experiment (tests: the stage's judged TestResults), passed or failed."""
    wrong, right = {}, {}
    for test in tests:
        if test.check not in plan.expected:
            if test.points and test.outcome in (Outcome.PASSED, Outcome.FAILED):  # not an advisory, not stopped
                (right if test.outcome == Outcome.PASSED else wrong)[test.check] = str(test.outcome)
            continue
        for step_id, _ in plan.expected[test.check]:
            found = signature(replies.reply(step_id))
            if found is None or step_id in wrong or step_id in right:
                continue  # unanswered, or a board two checks share, judged alike
            (wrong if step_id in test.wrong_steps else right)[step_id] = found
    return wrong, right


def judged_wrong(stage: Stage, plan: Plan, answers: Answers) -> frozenset:
    """The steps and checks where answers (a known mistake's) are wrong, as judging judges a student's."""
    replies = Replies({"import": "ok"}, done=True)
    for step_id, found in answers.items():
        if isinstance(step_id, str):
            continue  # a check of the experiment: its verdict is its answer
        if found.startswith("!"):
            replies.details[step_id] = {"id": step_id, "ok": False, "error": found[1:], "message": ""}
        else:
            replies.values[step_id] = found
    never = Unanswered(Outcome.CRASHED, "")
    wrong = {check_id for check_id, found in answers.items() if isinstance(check_id, str) and found != Outcome.PASSED}
    for check in stage_checks(stage.id):
        if check.id in plan.expected:
            wrong |= judge_calls(check, plan, replies, never).wrong_steps & answers.keys()
    return frozenset(wrong)


def diagnose(stage: Stage, replies: Replies, tests: list) -> tuple[tuple[Diagnosis, ...], int]:
    """(the known mistakes that explain the stage's wrong answers, best first, or none; how many wrong answers).

    replies: both runs' replies, as the parent read them; tests: the stage's TestResults, as it judged them."""
    plan = stage_plan(stage.id)
    wrong, right = student_answers(plan, replies, tests)
    if not wrong:
        return (), 0
    try:
        catalogue = known_mistakes(stage.id)
    except Exception:  # noqa: BLE001 - advice only: a catalogue that cannot be built names nothing, grades stand
        return (), len(wrong)
    candidates = []
    for known in catalogue:
        # A mistake that gives a wrong answer where the student was right is not theirs.
        if not known.wrong.isdisjoint(right):
            continue
        explained = frozenset(step_id for step_id, found in wrong.items() if known.answers.get(step_id) == found)
        if explained:
            candidates.append((known, explained))
    # Mistakes that explain the very same answers cannot be told apart on this student's boards: one of them.
    alike: dict[frozenset, list[Known]] = {}
    for known, explained in candidates:
        alike.setdefault(explained, []).append(known)
    groups = sorted(alike.items(), key=lambda item: (-len(item[0]), item[1][0].name))
    if not groups:
        return (), len(wrong)
    chosen, covered = [groups[0]], groups[0][0]
    # A second mistake (two slips in one stage) only when it explains most of what the first leaves.
    while len(chosen) < MAX_MISTAKES and len(covered) < len(wrong):
        rest = [group for group in groups if group not in chosen]
        best = max(rest, key=lambda group: len(group[0] - covered), default=None)
        if best is None or 2 * len(best[0] - covered) < len(wrong) - len(covered):
            break
        chosen.append(best)
        covered |= best[0]
    if len(covered) < MATCH_SHARE * len(wrong):
        return (), len(wrong)
    found = tuple(
        Diagnosis(ONE_OF.join(k.name for k in knowns), ONE_OF.join(k.says for k in knowns), len(explained), len(wrong))
        for explained, knowns in chosen
    )
    return found, len(wrong)
