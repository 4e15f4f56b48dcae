"""Judge one stage of one submission: build the child's job, run it in the sandbox, compare in the trusted process.

Student code shares the child's process, so nothing the child says about itself is taken on trust: its
replies are read under a strict protocol (protocol.py: any break of it is tampering and gives the stage 0),
every value is compared here with exact types against the oracle's answers (judging.py), and what is measured
(the memo experiment's CPU time) is measured by the sandbox. What the child is asked is the stage's plan
(plan.py); every sentence the student reads is in feedback.py. Every string that comes from the child is capped
and cleaned as it is read, and every text made here is bounded, so one submission cannot stop or bloat a batch.
"""

import functools
import re
from pathlib import Path

from autograder.course.checks import stage_checks
from autograder.course.stages import Stage
from autograder.grading import feedback, sandbox
from autograder.grading.judging import fail_all, judge_calls, judge_memo, judge_unchanged, unanswered
from autograder.grading.plan import AGAIN_SECONDS, CALL_SECONDS, MEMO_KINDS, stage_plan
from autograder.grading.protocol import parse_replies
from autograder.grading.record import Outcome, StageResult

DEFAULT_SECONDS = 60  # CPU seconds per stage; the slowest honest answers (plain searches in slow Python) need about 10
MEMO_CPU_CAP = CALL_SECONDS + AGAIN_SECONDS + 1  # the memo child's whole CPU limit: a forger cannot spend more


class Cancelled(Exception):
    """The run was stopped from outside (sandbox.stop_all, e.g. Ctrl-C): there is no result to store."""


def stage_limits(seconds: float = DEFAULT_SECONDS) -> sandbox.Limits:
    # CPU time of all the stage's processes decides; the wall clock is only a backstop for code that sleeps or blocks.
    return sandbox.Limits(cpu_seconds=seconds, wall_seconds=sandbox.wall_backstop(seconds))


def memo_limits(seconds: float = DEFAULT_SECONDS) -> sandbox.Limits:
    return stage_limits(min(seconds, MEMO_CPU_CAP))


@functools.cache
def child_source() -> bytes:
    return (Path(__file__).parent / "child.py").read_bytes()


def _killed(run: sandbox.RunResult) -> bool:
    return run.status != "exited"


def judge_stage(
    stage: Stage,
    run: sandbox.RunResult,
    limits: sandbox.Limits,
    memo_run: sandbox.RunResult | None = None,
    memo_limits: sandbox.Limits | None = None,
    seconds: float = DEFAULT_SECONDS,
) -> StageResult:
    """Judge what the stage's child (and the memo child, for the stage that has one) reported."""
    if run.status == "cancelled" or (memo_run is not None and memo_run.status == "cancelled"):
        raise Cancelled(stage.id)
    checks = stage_checks(stage.id)
    plan = stage_plan(stage.id)
    elapsed = run.wall_seconds + (memo_run.wall_seconds if memo_run is not None else 0.0)
    cpu = run.cpu_seconds + (memo_run.cpu_seconds if memo_run is not None else 0.0)
    replies = parse_replies(run.reply, plan, _killed(run))
    memo_replies = parse_replies(memo_run.reply, plan, _killed(memo_run), memo=True) if memo_run else None
    tampered = feedback.tampered(replies.tampered) if replies.tampered else ""
    if memo_replies is not None and memo_replies.tampered:
        tampered = tampered or feedback.tampered(memo_replies.tampered, in_memo_child=True)
    if tampered:
        result = fail_all(stage, Outcome.TAMPERED, tampered, phase="calls")
        result.seconds, result.cpu_seconds = elapsed, cpu
        return result
    imported = replies.imported
    ended = unanswered(run, limits, seconds)
    if imported is None or imported["import"] != "ok":
        if imported is not None:
            message = feedback.import_failed(stage.filename, imported)
        elif run.status == "exited":
            message = feedback.exited_while_imported(stage.filename, run.returncode)
        else:
            message = feedback.stopped_before_tested(stage.filename, ended.why)
        outcome = ended.outcome if imported is None else import_outcome(imported)
        result = fail_all(stage, outcome, message, phase="import")
        result.seconds, result.cpu_seconds = elapsed, cpu
        return result
    memo_ended = ended
    if memo_run is not None:
        memo_ended = unanswered(memo_run, memo_limits, memo_limits.cpu_seconds, "the memo experiment")
    tests = []
    for check in checks:
        if check.kind in MEMO_KINDS:
            tests.append(judge_memo(check, plan, memo_replies, memo_run, memo_ended, stage.filename))
        elif check.kind == "calls":
            tests.append(judge_calls(check, plan, replies, ended))
    answered = any(test.outcome == Outcome.PASSED for test in tests)
    for check in checks:
        if check.kind == "unchanged":
            tests.append(judge_unchanged(check, plan, replies, answered))
    order = {check.id: index for index, check in enumerate(checks)}
    tests.sort(key=lambda test: order[test.check])
    for test in tests:
        test.stage = stage.id
    score = sum(t.score for t in tests)
    outcome = Outcome.worst(t.outcome for t in tests)
    message = ""
    if not replies.done:
        message = ended.why if run.status != "exited" else feedback.ended_early()
    starter = score == 0 and _only_not_implemented(replies)
    return StageResult(stage.id, score, stage.points, outcome, message, tests, elapsed, cpu, starter=starter)


def import_outcome(imported: dict) -> Outcome:
    """A failed import's outcome: the memory limit when it ran out of memory (the sandbox's limit), else an error."""
    return Outcome.MEMORY_LIMIT if imported.get("error") == "MemoryError" else Outcome.ERROR


def _only_not_implemented(replies) -> bool:
    """Every call the child made raised NotImplementedError: the functions are still the starter's."""
    return (
        not replies.values
        and bool(replies.details)
        and all(reply.get("error") == "NotImplementedError" for reply in replies.details.values())
    )


_PYTHON_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def is_starter(stage: Stage, source: str) -> bool:
    """The submitted module is the released starter (line endings and trailing blanks aside)."""
    try:
        starter = stage.starter_path.read_text(encoding="utf-8")
    except OSError:
        return False
    return _normalized(source) == _normalized(starter)


def _normalized(source: str) -> list[str]:
    """The lines as Python counts them (\\n, \\r\\n, \\r; str.splitlines also breaks at \\x0c, \\x1c, \\u2028...)."""
    return [line.rstrip(" \t") for line in _PYTHON_LINE_BREAK.split(source.strip(" \t\n\r"))]


def _source_bytes(source: str) -> bytes:
    """The module's bytes: undecodable bytes kept as they were read, any other lone surrogate written as is."""
    try:
        return source.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return source.encode("utf-8", "surrogatepass")  # not valid UTF-8: the child reports a SyntaxError


def grade_stage(
    stage: Stage, source: str, isolation: "sandbox.Isolation | None" = None, seconds: float = DEFAULT_SECONDS
) -> StageResult:
    """Run the student's module for one stage in a sandboxed child (two for the memo stage) and judge every check.

    Raises Cancelled when the sandbox was stopped from outside: such a stage has no result.
    """
    plan = stage_plan(stage.id)
    files = {"child.py": child_source(), stage.filename: _source_bytes(source)}
    memo_run = memo_limit = None
    if plan.memo_job is not None:
        # First, within the stage's time: the memo experiment, in a child whose CPU time only the sandbox measures.
        memo_limit = memo_limits(seconds)
        memo_run = sandbox.run(files, "child.py", plan.memo_job, memo_limit, isolation)
        if memo_run.status == "cancelled":
            raise Cancelled(stage.id)
    limits = stage_limits(max(seconds - (memo_run.cpu_seconds if memo_run else 0.0), 0.01))
    run = sandbox.run(files, "child.py", plan.job, limits, isolation)
    result = judge_stage(stage, run, limits, memo_run, memo_limit, seconds)
    if result.score == 0 and is_starter(stage, source):
        result.starter = True
    return result
