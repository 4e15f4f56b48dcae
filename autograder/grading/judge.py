"""Judge one stage of one submission: build the child's job, run it in the sandbox, compare in the trusted process.

Student code shares the child's process, so nothing the child says about itself is taken on trust: its
replies are read under a strict protocol (protocol.py: any break of it is tampering and gives the stage 0),
every value is compared here with exact types against the oracle's answers (judging.py), and what is measured
(the memo experiment's CPU time) is measured by the sandbox. What the child is asked is the stage's plan
(plan.py); every sentence the student reads is in feedback.py. Every string that comes from the child is capped
and cleaned as it is read, and every text made here is bounded, so one submission cannot stop or bloat a batch.

The visible and the hidden checks' boards are asked of one child in two jobs (plan.py), and the hidden job is
handed over only once every reply to the visible one has been read (protocol.StageReader), so that what student
code writes cannot carry a hidden board to the student: the visible job's texts (what it raised, returned or
printed as an error) were all written before the child could know a hidden board, and are shown as they are; what
it writes after reaches only the hidden checks' own details, which results.json marks after_published and
`autograde publish` holds back until the grades are out. Whatever else is decided once the hidden job was handed
over (the stage's message, its tampering, how the child ended) is said in the grader's own words, from its kind
alone. A child that ends before its visible replies are all in gets no hidden job: that job is then asked of a
child of its own, as a fresh start, so a crash on one worked example does not cost the hidden checks.
"""

import functools
import importlib.util
import marshal
import re
from pathlib import Path

from autograder.course.checks import stage_checks, stage_outline
from autograder.course.stages import Stage
from autograder.grading import feedback, sandbox
from autograder.grading.diagnosis import diagnose
from autograder.grading.judging import (
    Unanswered,
    check_result,
    fail_all,
    judge_calls,
    judge_memo,
    judge_unchanged,
    passes_quickly,
    unanswered,
)
from autograder.grading.plan import AGAIN_SECONDS, CALL_SECONDS, MEMO_KINDS, stage_plan
from autograder.grading.protocol import Replies, ReplyReader, StageReader, parse_replies, parse_stage_replies
from autograder.grading.tables import table_look_once
from autograder.record import Outcome, StageKind, StageResult

# The memo child's whole CPU limit, within the stage's (--time-limit): the experiment's one call (CALL_SECONDS) and
# its scoring again (AGAIN_SECONDS), and a second to start; a forger cannot spend more.
MEMO_CPU_CAP = CALL_SECONDS + AGAIN_SECONDS + 1


class Cancelled(Exception):
    """The run was stopped from outside (sandbox.stop_all, e.g. Ctrl-C): there is no result to store."""


def stage_limits(seconds: float, wall_left: float | None = None) -> sandbox.Limits:
    # seconds: the stage's CPU limit (what is left of it), of all the stage's processes: it decides; the wall clock
    # is only a backstop for code that sleeps or blocks. wall_left: what is left of the student's wall-clock
    # budget, a hard bound for this run.
    return sandbox.Limits(cpu_seconds=seconds, wall_seconds=sandbox.wall_backstop(seconds), wall_cap=wall_left)


def memo_limits(seconds: float = MEMO_CPU_CAP, wall_left: float | None = None) -> sandbox.Limits:
    """The memo child's: the stage's CPU limit, at most MEMO_CPU_CAP (the experiment's own, when run alone)."""
    return stage_limits(min(seconds, MEMO_CPU_CAP), wall_left)


@functools.cache
def child_source() -> bytes:
    return (Path(__file__).parent / "child.py").read_bytes()


@functools.cache
def child_program() -> tuple[str, bytes]:
    """The child as the sandbox gets it (its file name, its bytes): child.pyc, compiled here once, when the children's
    interpreter runs this interpreter's bytecode (the same magic number); else child.py, which it compiles at each
    start, a tenth of a stage-one child's CPU time."""
    if sandbox.child_magic() != importlib.util.MAGIC_NUMBER:
        return "child.py", child_source()
    code = compile(child_source(), "child.py", "exec", dont_inherit=True, optimize=0)
    return "child.pyc", importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)  # run as a script: no checks


def _killed(run: sandbox.RunResult) -> bool:
    return run.status not in ("exited", "done")


def judge_stage(
    stage: Stage,
    run: sandbox.RunResult,
    limits: sandbox.Limits,
    memo_run: sandbox.RunResult | None,
    memo_limits: sandbox.Limits | None,
    seconds: float,
    replies: Replies | None = None,
    hidden: Replies | None = None,
    memo_replies: Replies | None = None,
    hidden_run: sandbox.RunResult | None = None,
    hidden_limits: sandbox.Limits | None = None,
) -> StageResult:
    """Judge what the stage's children reported: its child (run), the memo child, and the hidden job's own child.

    seconds: the stage's CPU limit (--time-limit), which the messages about running out of it name.
    replies, hidden: what the child's StageReader read of its visible and hidden jobs (without them, run's reply
    bytes are read so); hidden None: the hidden job was never handed over. hidden_run: the child of its own that
    the hidden job was then asked of, whose replies hidden are. memo_replies: the memo child's, read the same way.

    A stage whose plan has hidden steps needs its hidden job answered; without that its hidden calls count as never
    answered.
    """
    runs = [one for one in (run, memo_run, hidden_run) if one is not None]
    if any(one.status == "cancelled" for one in runs):
        raise Cancelled(stage.id)
    # The checks without their cases: a check passed on the quick path needs none (stage one's cases are ten
    # thousand objects to load); one that was not is judged on the whole check.
    checks = stage_outline(stage.id)
    plan = stage_plan(stage.id)
    elapsed, cpu = sum(one.wall_seconds for one in runs), sum(one.cpu_seconds for one in runs)
    if replies is None:
        replies, hidden = parse_stage_replies(run.reply, plan, _killed(run))
    if memo_replies is None and memo_run is not None:
        memo_replies = parse_replies(memo_run.reply, plan, _killed(memo_run), memo=True)
    if hidden is None and hidden_run is not None:
        hidden = parse_replies(hidden_run.reply, plan, _killed(hidden_run), ids=plan.hidden_ids)
    # How the child ended was chosen by code that had the hidden job, once it was handed over to that same child.
    saw_hidden = hidden is not None and hidden_run is None
    tampered = feedback.tampered(replies.tampered) if replies.tampered else ""
    if memo_replies is not None and memo_replies.tampered:
        tampered = tampered or feedback.tampered(memo_replies.tampered, in_memo_child=True)
    if hidden is not None and hidden.tampered:
        tampered = tampered or feedback.TAMPERED_HIDDEN  # how it broke the protocol may quote what it wrote
    if tampered:
        result = fail_all(stage, Outcome.TAMPERED, tampered, phase="calls")
        result.seconds, result.cpu_seconds = elapsed, cpu
        return result
    imported = replies.imported
    ended = unanswered(run, limits, seconds, hidden=saw_hidden)
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
    hidden_ran = hidden_run if hidden_run is not None else run
    hidden_ended, hidden_done = _hidden_ended(stage, hidden, hidden_ran, hidden_limits or limits, seconds)
    both = _merged(stage, replies, hidden)
    tests = []
    passed = {check.id for check in checks if check.kind == "calls" and passes_quickly(check.id, plan, both)}
    needs_cases = any(check.kind in MEMO_KINDS or check.kind == "calls" and check.id not in passed for check in checks)
    whole = {check.id: check for check in stage_checks(stage.id)} if needs_cases else {}
    for check in checks:
        if check.kind in MEMO_KINDS:
            tests.append(judge_memo(whole[check.id], plan, memo_replies, memo_run, memo_ended, stage.filename))
        elif check.id in passed:
            tests.append(check_result(check, Outcome.PASSED, ""))
        elif check.kind == "calls":
            tests.append(judge_calls(whole[check.id], plan, both, ended, hidden_ended))
    answered = any(test.outcome == Outcome.PASSED for test in tests)
    for check in checks:
        if check.kind == "unchanged":
            tests.append(judge_unchanged(check, plan, both, answered))
    order = {check.id: index for index, check in enumerate(checks)}
    tests.sort(key=lambda test: order[test.check])
    for test in tests:
        test.stage = stage.id
    score = sum(t.score for t in tests)
    outcome = Outcome.worst(t.outcome for t in tests if t.points)  # an advisory check (no points) decides nothing
    message = ""
    if not replies.done:
        message = ended.why if run.status != "exited" else feedback.ended_early()
    elif not hidden_done:
        message = hidden_ended.why
    starter = score == 0 and _only_not_implemented(both)
    result = StageResult(stage.id, score, stage.points, outcome, message, tests, elapsed, cpu, starter=starter)
    if result.status.kind == StageKind.WRONG:  # from the answers judged above: the child is not asked again
        try:
            result.diagnosis, result.wrong_answers = diagnose(stage, both, tests)
        except Exception:  # noqa: BLE001 - advice only: a diagnosis that fails names nothing, and the grade stands
            pass
    return result


def _hidden_ended(stage: Stage, hidden: Replies | None, run, limits, seconds: float) -> tuple[Unanswered, bool]:
    """What became of the hidden job's unanswered calls, in the grader's words only, and whether it finished.

    run: the child that was asked the hidden job (the stage's own, or one of its own)."""
    if hidden is None:
        return Unanswered(Outcome.CRASHED, feedback.stopped_before_call()), not stage_plan(stage.id).hidden_ids
    if hidden.imported is not None and hidden.imported["import"] != "ok":  # loaded the first time, not here
        return Unanswered(import_outcome(hidden.imported), feedback.hidden_import_failed(stage.filename)), False
    ended = unanswered(run, limits, seconds, hidden=True)
    if run.status == "exited" and not hidden.done:
        ended = Unanswered(ended.outcome, feedback.ended_early())
    return ended, hidden.done


def _merged(stage: Stage, visible: Replies, hidden: Replies | None) -> Replies:
    """The replies of both runs by step id (their ids never overlap: each run answers only its own job's).

    A missing function is said in the grader's words, whichever run reported it.
    """
    both = Replies(visible.imported, dict(visible.values), dict(visible.details), visible.done)
    if hidden is not None:
        both.values.update(hidden.values)
        both.details.update(hidden.details)
    plan = stage_plan(stage.id)
    for step_id, reply in both.details.items():
        if reply.get("ok") is False and reply["error"] == "missing":
            message = feedback.no_function(stage.filename, plan.step_by_id[step_id]["call"])
            both.details[step_id] = {**reply, "message": message}
    return both


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


def _less(wall_left: float | None, run: sandbox.RunResult) -> float | None:
    """What is left of the student's wall-clock budget after run."""
    return None if wall_left is None else max(wall_left - run.wall_seconds, 0.0)


def grade_stage(
    stage: Stage,
    source: str,
    isolation: "sandbox.Isolation | None" = None,
    *,
    seconds: float,
    wall_left: float | None = None,
) -> StageResult:
    """Run the student's module for one stage in a sandboxed child (two for the memo stage) and judge every check.

    seconds: the stage's CPU limit (--time-limit), for all its children together.
    wall_left: what is left of the student's wall-clock budget (sandbox.student_budget), a hard bound for the
    stage's runs together. Raises Cancelled when the sandbox was stopped from outside: such a stage has no result.
    """
    plan = stage_plan(stage.id)
    program, child = child_program()
    files = {program: child, stage.filename: _source_bytes(source)}
    memo_run = memo_limit = memo_replies = None
    if plan.memo_job is not None:
        # First, within the stage's time: the memo experiment, in a child whose CPU time only the sandbox measures.
        memo_limit = memo_limits(seconds, wall_left)
        memo_reader = ReplyReader(plan, memo=True)
        memo_run = sandbox.run(files, program, plan.memo_job, memo_limit, isolation, memo_reader)
        if memo_run.status == "cancelled":
            raise Cancelled(stage.id)
        memo_replies = memo_reader.finish(_killed(memo_run))
        wall_left = _less(wall_left, memo_run)
    limits = stage_limits(max(seconds - (memo_run.cpu_seconds if memo_run else 0.0), 0.01), wall_left)
    reader = StageReader(plan)  # read as they arrive: the grader holds no more than asked
    run = sandbox.run(files, program, plan.job, limits, isolation, reader, reader.outbox)
    replies, hidden = reader.finish(_killed(run))
    hidden_run = hidden_limit = None
    imported = (replies.imported or {}).get("import") == "ok"
    if hidden is None and plan.hidden_ids and imported and not replies.tampered and run.status != "cancelled":
        # The child ended before its visible replies were all in: the hidden job from a fresh start, in a child of its
        # own, within what is left of the stage's time.
        hidden_limit = stage_limits(max(limits.cpu_seconds - run.cpu_seconds, 0.01), _less(wall_left, run))
        hidden_reader = ReplyReader(plan, ids=plan.hidden_ids)
        hidden_run = sandbox.run(files, program, plan.hidden_job, hidden_limit, isolation, hidden_reader)
        hidden = hidden_reader.finish(_killed(hidden_run))
    result = judge_stage(
        stage, run, limits, memo_run, memo_limit, seconds, replies, hidden, memo_replies, hidden_run, hidden_limit
    )
    if result.score == 0 and is_starter(stage, source):
        result.starter = True
    result.look = table_look_once(source, stage.filename)  # read here, in the parent: the child's word is not needed
    return result
