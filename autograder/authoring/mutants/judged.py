"""Does the grader's hidden suite catch a mutant? Its hidden checks judged by the grader's own code
(child.run_step, child.memo_experiment, judging.py) on calls made in this process."""

import marshal
import time
import types
from collections.abc import Callable

from autograder.authoring.mutants.wrong import PRUNE_CALLS_LIMIT, limit_calls
from autograder.course.checks import Check, stage_checks
from autograder.course.stages import Stage
from autograder.grading import child, judging
from autograder.grading.plan import MEMO_KINDS, stage_plan, wire_step
from autograder.grading.protocol import parse_replies
from autograder.grading.sandbox.run_result import RunResult


class _Buffer(child.Replies):
    """The child's replies, written to memory instead of file descriptor 3."""

    def __init__(self):
        super().__init__(-1)
        self.data = bytearray()
        self.send({"import": "ok"})

    def _write(self, text):
        self.data += text.encode()

    def finished(self) -> bytes:
        self.flush()
        return bytes(self.data)


def first_hidden_failure(
    stage: Stage, fresh: Callable[[], types.ModuleType], plain: Callable[[], types.ModuleType] | None = None
) -> str | None:
    """The id of the first hidden check the module fails (or why it failed), or None when it passes them all.

    fresh() gives the module as a new child would import it; plain() (fresh() when None) the same without any
    cache, for the memo or prune experiment, which counts calls and measures CPU time. The checks stop at the
    first failure (only whether the suite catches the mutant matters), so the cheap ones go first: the memo
    experiment before the calls (a memo that is not used makes every call a plain search), the prune experiment
    after them (it runs plain, the calls are cached), and the calls checks with the fewest cases first.
    """
    hidden = [check for check in stage_checks(stage.id) if not check.visible]
    experiment = [check for check in hidden if check.kind in MEMO_KINDS]
    prune = any(check.kind == "prune" for check in experiment)
    calls = sorted((check for check in hidden if check.kind == "calls"), key=lambda check: len(check.cases))
    if experiment and not prune and (failure := _experiment_failure(stage, (plain or fresh)(), experiment)):
        return failure
    if failure := _calls_failure(stage, fresh(), calls):
        return failure
    if experiment and prune:
        return _experiment_failure(stage, (plain or fresh)(), experiment)
    return None


def _experiment_failure(stage: Stage, module: types.ModuleType, checks: list[Check]) -> str | None:
    """The first check of the memo or prune experiment the module fails, judged by the grader's code, or None."""
    from autograder.grading.judge import memo_limits
    from autograder.record import Outcome

    plan, buffer = stage_plan(stage.id), _Buffer()
    prune = next((check for check in checks if check.kind == "prune"), None)
    if prune is not None:
        # Past PRUNE_CALLS_LIMIT calls of alphabeta in one scoring the experiment's CPU time is over
        # judging.PRUNE_CPU_THRESHOLD (see PRUNE_CALLS_LIMIT), so score/prunes fails either way.
        limit_calls(module, stage.counted, PRUNE_CALLS_LIMIT, per=prune.function)
    else:
        # The grader lets it run on and fails memo/speed when the first scoring makes more than
        # MEMO_CALLS_LIMIT calls, or the scoring again (one call a board for a memo) is wrong or slow: past
        # this many calls one of those happens, so the verdict is the same.
        limit_calls(module, stage.counted, judging.MEMO_CALLS_LIMIT + len(plan.memo_again))
    experiment = marshal.loads(plan.memo_job)["experiment"]  # the job: the module's name and the experiment itself
    start = time.process_time()
    child.memo_experiment(module, stage.filename, experiment, buffer)
    cpu = time.process_time() - start
    run = RunResult("exited", 0, buffer.finished(), b"", cpu, cpu, "")
    replies = parse_replies(run.reply, plan, False, memo=True)
    limits = memo_limits()
    ended = judging.unanswered(run, limits, limits.cpu_seconds, "the memo experiment")
    for check in checks:
        if judging.judge_memo(check, plan, replies, run, ended, stage.filename).outcome != Outcome.PASSED:
            return check.id
    return None


def _calls_failure(stage: Stage, module: types.ModuleType, checks: list[Check]) -> str | None:
    """The first calls check the module fails (or board-unchanged), judged by the grader's code, or None."""
    from autograder.record import Outcome

    plan, buffer, asked = stage_plan(stage.id), _Buffer(), set()
    never = judging.Unanswered(Outcome.CRASHED, "")
    for check in checks:
        for step_id, right in plan.expected[check.id]:
            if step_id not in asked:
                asked.add(step_id)
                reply = child.run_step(module, stage.filename, wire_step(plan.step_by_id[step_id]))
                if type(reply) is not tuple or reply[1] not in right:
                    # An error, a wrong answer or a changed board: the grader fails this check (or board-unchanged)
                    # whatever the other calls answer, so they are not made.
                    wrong_answer = type(reply) is not tuple and not ("changed" in reply and reply["value"] in right)
                    return check.id if type(reply) is tuple or wrong_answer else "board-unchanged"
                buffer.add(reply)
        replies = parse_replies(buffer.finished(), plan, False)
        if replies.tampered:
            return f"{check.id} (replies unreadable: {replies.tampered})"
        if judging.judge_calls(check, plan, replies, never).outcome != Outcome.PASSED:
            return check.id
        if any("changed" in reply for reply in replies.details.values()):
            return "board-unchanged"
    return None
