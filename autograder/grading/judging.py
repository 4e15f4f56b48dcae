"""Judging what a child reported against the oracle's answers, with exact types, in the trusted process.

A check earns all its points or none. The words of every result come from feedback.py; what is decided here
is whether each answer is right, and when it is not, of which kind the fault is (an Outcome).
"""

import signal
from collections import Counter
from dataclasses import dataclass

from autograder.course.checks import Check, stage_outline
from autograder.course.stages import FUNCTIONS, Stage
from autograder.grading import feedback
from autograder.grading.feedback import Problem
from autograder.grading.plan import AGAIN_SECONDS, PRUNE_SECONDS, Plan
from autograder.grading.protocol import Replies, clean, decode
from autograder.grading.sandbox.run_result import WALL_CAP, memory_detail
from autograder.record import Counterexample, Mistake, Outcome, StageResult, TestResult

MEMO_POSITIONS = 5478
MEMO_CALLS_LIMIT = 40_000  # a memoized score of the empty board makes about 16,000 calls; plain minimax 549,946
# Student code shares the memo child's process, so what that child says of itself (its count of calls, that its
# own CPU timer did not stop the scoring again, the board keys it read in memo) can be forged: a module can ignore
# SIGPROF, patch the counter or send a report of its own. What decides is what the parent can check: every answer
# of the scoring again right, and the CPU time of the whole memo child, measured by the sandbox, under
# MEMO_CPU_THRESHOLD. The call count and the child's own timer (plan.AGAIN_SECONDS) only stop honest plain
# searches early and tell them why; the threshold is no looser than that timer, so switching it off gains nothing.
# Measured on the 2-core grading machine (RunResult.cpu_seconds of the memo child, 3 runs each, 2026-12-01):
#   solutions/04_memoization and the ok_ variants (str, tuple, str(board) keys, memo.get):   0.04-0.06 s
#   solutions/10_symmetry and its variants (canonical keys):                                 0.05-0.07 s
#   tests/hostile/memoization/ignore_sigprof.py (a slow alpha-beta, no memo, timer off):     0.65-0.85 s
#   plain minimax made to answer every board again (AGAIN_SECONDS lifted):                   4.4-4.7 s
# so honest memo code is 7x under the threshold. A quick alpha-beta without a memo (about 0.3 s) passes:
# that is a limit of timing, not of trust (README, "Known limits").
MEMO_CPU_THRESHOLD = 0.5
# The prune experiment of 08_alpha_beta (its own child, like the memo experiment): scoring the empty board and then
# the nine openings. The whole child's CPU time, read by the parent, must stay under PRUNE_CPU_THRESHOLD. Measured on
# the 2-core grading machine (RunResult.cpu_seconds of that child, medians of 5 runs; bench/prune_experiment.py):
#   solutions/08_alpha_beta and ok_infinite_window (square order, 18,297 calls for the empty board):  0.10 s
#   wrong_no_pruning (plain minimax) and wrong_fresh_window, cut short by PRUNE_SECONDS:             1.5 s
# so honest square-order alpha-beta is 6x under the threshold and a search that does not prune 2.5x over it.
PRUNE_CPU_THRESHOLD = 0.6

MAX_MISTAKES = 12  # wrong answers kept per check for the class statistics (the feedback shows fewer)
MISTAKES_PER_KIND = 4  # of one kind (boards won on a row, a column, a diagonal... need a few)
SQUARE_RULES = ("empty square", "empty square or -1")  # answers that name a square of the board
COUNTEREXAMPLE_CAP = 200  # characters of what a counterexample says came back, and of what was right


@dataclass(frozen=True)
class Unanswered:
    """What became of the calls a child never answered: their outcome and why, from how its run ended."""

    outcome: Outcome
    why: str


def unanswered(run, limits, seconds: float, what: str = "the stage", hidden: bool = False) -> Unanswered:
    """run: the sandbox's RunResult; limits: the Limits it ran under; seconds: the CPU limit the student set.

    hidden: the run had the hidden job, so its words must carry nothing the child chose (a signal it killed itself
    with, an exit code): only the kind of ending and the grader's own limits.
    """
    # The sandbox ends a run at its CPU limit itself; SIGXCPU is the per-process limit kept as a backstop.
    if run.status == "timeout" and run.detail.startswith(WALL_CAP):
        return Unanswered(Outcome.TIMEOUT, feedback.stopped(run.detail))
    if run.status == "timeout" or (run.status == "killed" and run.returncode == -signal.SIGXCPU):
        return Unanswered(Outcome.TIMEOUT, feedback.out_of_cpu(what, seconds))
    if run.status == "waiting":
        return Unanswered(Outcome.TIMEOUT, feedback.waited(limits.wall_seconds))
    if run.status == "output-limit":
        return Unanswered(Outcome.OUTPUT_LIMIT, feedback.wrote_too_much())
    if run.status == "killed" and run.detail == memory_detail(limits):
        return Unanswered(Outcome.MEMORY_LIMIT, feedback.stopped(run.detail))
    if run.status == "killed":
        return Unanswered(Outcome.CRASHED, feedback.stopped("" if hidden else run.detail))
    if run.status == "sandbox-error":
        return Unanswered(Outcome.CRASHED, feedback.could_not_run("" if hidden else run.detail))
    return Unanswered(Outcome.CRASHED, feedback.stopped_before_call())


def check_result(check: Check, outcome: Outcome, output: str) -> TestResult:
    """A check's result: all its points when it passed, none otherwise. Its text is bounded and clean."""
    score = check.points if outcome == Outcome.PASSED else 0
    output = feedback.test_output(output)
    return TestResult("", check.id, check.function, check.title, check.points, score, outcome, check.visible, output)


def fail_all(stage: Stage, outcome: Outcome, message: str, phase: str = "intake") -> StageResult:
    """Every check of the stage failed for one reason (not submitted, unreadable, did not import, tampered).

    phase: how far the stage got (StageResult.phase): "intake" when there was no module to run.
    """
    message = feedback.stage_message(message)
    tests = [check_result(check, outcome, message) for check in stage_outline(stage.id)]
    for test in tests:
        test.stage = stage.id
    return StageResult(stage.id, 0, stage.points, Outcome(outcome), message, tests, phase=phase)


# ---------------------------------------------------------------------------------------------------------------
# Call checks


def type_problem(function: str, value, board) -> str | None:
    """Why value cannot be an answer of function at all (wrong type, off the board, taken square), or None.

    The rule is the function's in the stage manifest (course/stages.py, Function.returns)."""
    contract = FUNCTIONS[function]
    rule = contract.returns
    if rule == "one of":
        if not (value is None or type(value) is str) or value not in contract.allowed:
            return feedback.not_one_of(function, value, contract.allowed)
        return None
    if rule == "tally":
        if type(value) not in (list, tuple) or len(value) != 3 or any(type(v) is not int for v in value):
            return feedback.not_a_tally(value)
        return None
    if rule == "squares":
        if type(value) not in (list, tuple) or any(type(v) is not int or not 0 <= v <= 8 for v in value):
            return feedback.not_squares(value)
        return None
    if rule == "eight boards":
        if type(value) is not list or len(value) != 8 or any(type(v) is not list or len(v) != 9 for v in value):
            return feedback.not_eight_boards(value)
        return None
    if rule == "board string":
        return None if type(value) is str and len(value) == 9 else feedback.not_a_board_string(value)
    if type(value) is not int:
        return feedback.not_an_int(function, value)
    if rule in SQUARE_RULES:
        if rule == "empty square or -1" and value == -1:
            return None
        if not 0 <= value <= 8:
            return feedback.not_a_square(value)
        if board[value] != " ":
            return feedback.square_taken(value)
    return None


def passes_quickly(check_id: str, plan: Plan, replies: Replies) -> bool:
    """Whether every case of a call check was answered in one of its right forms: most checks of most submissions,
    decided by comparing strings, without the check's cases."""
    values = replies.values
    step_ids, forms, several = plan.quick[check_id]
    return list(map(values.get, step_ids)) == forms and all(values.get(step_id) in right for step_id, right in several)


def judge_calls(
    check: Check, plan: Plan, replies: Replies, unanswered: Unanswered, hidden_unanswered: Unanswered | None = None
) -> TestResult:
    """Compare every case of a call check; the first problems found make the feedback.

    unanswered: what became of the calls of the visible job never answered; hidden_unanswered: those of the
    hidden job (plan.hidden_ids), when there was one.
    """
    values = replies.values
    if passes_quickly(check.id, plan, replies):
        return check_result(check, Outcome.PASSED, "")  # the common case, decided without decoding anything
    wrong, problems, outcome, mistakes, wrong_steps = 0, [], Outcome.PASSED, [], set()
    for (step_id, right), one in zip(plan.expected[check.id], check.cases, strict=True):
        value = values.get(step_id)
        if value in right:
            continue  # the common case, decided without decoding anything
        wrong_steps.add(step_id)  # right after all only when its value decodes to an accepted answer (below)
        reply = replies.reply(step_id)
        if reply is None:
            ended = hidden_unanswered if hidden_unanswered and step_id in plan.hidden_ids else unanswered
            outcome, wrong = outcome.worse(ended.outcome), wrong + 1
            problems.append(Problem(one, feedback.never_answered(ended.why)))
            continue
        if not reply["ok"]:
            outcome, wrong = outcome.worse(Outcome.MISSING if reply["error"] == "missing" else Outcome.ERROR), wrong + 1
            problems.append(Problem(one, feedback.error_text(check.function, reply)))
            if reply["error"] != "missing":
                mistakes.append(Mistake(f"raised {reply['error']}", _squares(one.args[0]), str(reply["error"])))
            continue
        value = decode(reply["value"])
        why = type_problem(check.function, value, one.args[0])
        if why is None and _hashable(value) in one.accept:
            wrong_steps.discard(step_id)
            continue
        outcome, wrong = outcome.worse(Outcome.FAILED), wrong + 1
        problems.append(Problem(one, why or feedback.returned(value), wrong_value=True))
        mistakes.append(mistake(check.function, value, one.args[0], why))
    texts = {problem.text for problem in problems}
    # Not written yet, or not there at all: one line says it all, no board needed.
    one_reason = (
        len(texts) == 1
        and wrong == len(check.cases)
        and outcome in (Outcome.ERROR, Outcome.MISSING)
        and "raised" not in next(iter(texts))
    )
    passed = outcome == Outcome.PASSED
    result = check_result(check, outcome, feedback.call_check(check, passed, one_reason, wrong, problems))
    result.mistakes = kept_mistakes(mistakes)
    result.wrong_steps = frozenset(wrong_steps)
    if not check.visible and not passed and not one_reason:
        result.counterexample = counterexample(check, feedback.simplest(problems))
    return result


def counterexample(check: Check, problem: Problem) -> Counterexample:
    """The board, the call, what came back and what was right, as the hidden check's output words them: each one
    clean line of at most COUNTEREXAMPLE_CAP characters."""
    one = problem.case

    def line(text: str) -> str:
        return clean(feedback.shorten(text, COUNTEREXAMPLE_CAP), COUNTEREXAMPLE_CAP)

    said = problem.text.removeprefix(f"{check.function} ")  # it follows the call
    right = feedback.expected(one) if one.accept else ""
    return Counterexample(
        _squares(one.args[0]), line(feedback.call_text(check.function, one.args)), line(said), line(right)
    )


def kept_mistakes(mistakes: list[Mistake]) -> tuple[Mistake, ...]:
    """At most MAX_MISTAKES, and of one kind at most MISTAKES_PER_KIND: enough boards to tell the clusters apart,
    few enough that a module that raises everywhere adds little to its results.json."""
    seen: Counter = Counter()
    kept = []
    for found in mistakes:
        seen[found.kind] += 1
        if seen[found.kind] <= MISTAKES_PER_KIND:
            kept.append(found)
    return tuple(kept[:MAX_MISTAKES])


def mistake(function: str, value, board, why: str | None) -> Mistake:
    """A wrong answer by kind: the words the class statistics group by (never the expected answer)."""
    shown = feedback.shorten(feedback.shown(value), 60)
    if why is not None:  # not an answer of the function at all
        if isinstance(value, int) and type(value) is int and FUNCTIONS[function].returns in SQUARE_RULES:
            kind = "returned a taken square" if 0 <= value <= 8 else "returned a square off the board"
        elif value is None:
            kind = "returned None"
        else:
            kind = "returned the wrong type" if type(value) not in (str, int) else f"returned {shown}"
    else:
        kind = FUNCTIONS[function].wrong or f"returned {shown}"
    return Mistake(kind, _squares(board), shown)


def _squares(board) -> str:
    return "".join(square if square in ("X", "O") else " " for square in list(board)[:9])


def _hashable(value):
    return tuple(_hashable(item) for item in value) if isinstance(value, list | tuple) else value


# ---------------------------------------------------------------------------------------------------------------
# The board left unchanged


def judge_unchanged(check: Check, plan: Plan, replies: Replies, answered: bool) -> TestResult:
    """Passes only when some other check of the stage passed and no call changed its board, as the child says.

    Advisory (no points, checks.unchanged): the board after a call is seen only by the child, whose process the
    student's code shares, so a module can make the child say "unchanged" whatever it did.
    """
    changed = [
        (plan.step_by_id[step_id], reply) for step_id, reply in sorted(replies.details.items()) if "changed" in reply
    ]
    outcome, text = Outcome.PASSED, ""
    if changed:
        step, reply = changed[0]
        outcome, text = Outcome.FAILED, feedback.changed_board(len(changed), step, decode(reply["changed"]))
    elif not answered:
        outcome, text = Outcome.NOT_RUN, feedback.NOT_COUNTED_YET
    if outcome == Outcome.FAILED:
        text += feedback.ADVISORY
    if outcome != Outcome.PASSED:
        text = feedback.with_hint(text, check, "\n\n")
    return check_result(check, outcome, text)


# ---------------------------------------------------------------------------------------------------------------
# The memo experiment


def judge_memo(
    check: Check, plan: Plan, replies: Replies | None, run, unanswered: Unanswered, filename: str
) -> TestResult:
    """The memo experiment, from its own child: memo's contents, the call count, the answers and the CPU time."""
    imported = replies.imported if replies else None
    reply = replies.memo if replies else None
    problems, outcome = [], Outcome.PASSED
    if imported is not None and imported["import"] != "ok":
        outcome = Outcome.ERROR
        problems.append(feedback.memo_import_failed(filename, imported))
    elif reply is None:
        outcome = unanswered.outcome
        problems.append(feedback.memo_never_answered(unanswered.why))
    elif not reply["ok"]:
        absent = reply["error"] == "missing" or (plan.memo_name and reply["error"] == plan.memo_name)
        outcome = Outcome.MISSING if absent else Outcome.ERROR
        problems.append(feedback.error_text(check.function, reply) + ".")
    else:
        value = decode(reply["value"])
        if type(value) is not int or value not in check.cases[0].accept:
            problems.append(feedback.memo_wrong_score(value))
        elif check.kind == "prune":
            problems += _prune_problems(plan, replies.again, run, unanswered)
        elif check.kind == "memo-size":
            problems += _memo_size_problems(plan, reply, replies.again, run, check.memo_contents is not None)
        else:
            problems += _memo_speed_problems(plan, reply, replies.again, run, unanswered)
        outcome = Outcome.FAILED if problems else Outcome.PASSED
    text = "\n".join(problems)
    return check_result(check, outcome, text if outcome == Outcome.PASSED else feedback.with_hint(text, check))


def _again_problem(plan: Plan, again: dict | None, unanswered: Unanswered | None = None) -> str:
    """Why the scoring again (the empty board a few times, then every reachable board) was not right, or ""."""
    if again is not None and again["complete"] and tuple(again["again"]) == plan.memo_again:
        return ""
    if again is None:
        return feedback.again_stopped(unanswered.why if unanswered else None)
    wrong = sum(answer != right for answer, right in zip(again["again"], plan.memo_again, strict=False))
    if wrong:
        return feedback.again_wrong(wrong)
    return feedback.again_slow(AGAIN_SECONDS)


def _memo_size_problems(plan: Plan, reply: dict, again: dict | None, run, canonical: bool = False) -> list[str]:
    """memo's contents, judged key by key against the oracle where the child read a key as a board.

    Keys it could not read as boards (another one-entry-per-board key the contract allows) cannot be checked
    here: such a memo passes only on what the parent can check, every board answered again right, within
    MEMO_CPU_THRESHOLD of the memo child's CPU time, with the right number of each score among its values.
    """
    size, boards, values = reply["size"], reply["boards"], reply["values"]
    scores = plan.memo_scores
    positions = len(scores)  # MEMO_POSITIONS, or the 765 canonical boards of 10_symmetry
    if size != positions:
        return [feedback.memo_size(size, positions, canonical)]
    if len(set(boards)) == positions and dict(zip(boards, values, strict=True)) == scores:
        return []  # keyed by the boards themselves (or their canonical boards), each with its score
    if canonical:
        return [feedback.memo_not_canonical(positions)]
    wrong = sum(board is not None and scores.get(board) != value for board, value in zip(boards, values, strict=True))
    if wrong or None not in boards:
        return [feedback.memo_wrong_entries(MEMO_POSITIONS, wrong or positions - len(set(boards)))]
    if Counter(values) != plan.memo_counts:
        return [feedback.memo_values_not_scores(MEMO_POSITIONS)]
    why = _again_problem(plan, again) or _cpu_problem(run, plan)
    if why:
        return [feedback.memo_keyed_otherwise(MEMO_POSITIONS, why)]
    return []  # keyed some other way, and the memo answers every board right, at a memo's speed


def _cpu_problem(run, plan: Plan) -> str:
    """Why the memo child's CPU time, as the sandbox measured it, is not a memo's, or ""."""
    if run is not None and run.cpu_seconds >= MEMO_CPU_THRESHOLD:
        return feedback.again_cpu(run.cpu_seconds, MEMO_CPU_THRESHOLD)
    return ""


def _prune_problems(plan: Plan, again: dict | None, run, unanswered: Unanswered) -> list[str]:
    if again is None:
        return [feedback.prune_openings(feedback.again_stopped(unanswered.why))]
    if not again["complete"] or tuple(again["again"]) != plan.memo_again:
        wrong = sum(answer != right for answer, right in zip(again["again"], plan.memo_again, strict=False))
        return [feedback.prune_openings(feedback.again_wrong(wrong) if wrong else feedback.again_slow(PRUNE_SECONDS))]
    if run is not None and run.cpu_seconds >= PRUNE_CPU_THRESHOLD:
        return [feedback.prune_cpu(run.cpu_seconds, PRUNE_CPU_THRESHOLD)]
    return []


def _memo_speed_problems(plan: Plan, reply: dict, again: dict | None, run, unanswered: Unanswered) -> list[str]:
    calls = reply["calls"]
    if calls > MEMO_CALLS_LIMIT:
        return [feedback.memo_too_many_calls(calls, MEMO_CALLS_LIMIT)]
    why = _again_problem(plan, again, unanswered)
    if why:
        return [feedback.memo_not_answered_again(why)]
    if run is not None and run.cpu_seconds >= MEMO_CPU_THRESHOLD:
        return [feedback.memo_cpu(run.cpu_seconds, MEMO_CPU_THRESHOLD)]
    return []
