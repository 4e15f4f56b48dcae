"""Every sentence a student reads about a stage: what went wrong, on which board, and what to try.

The judging decides (judging.py); this module says it. What the child sent is shown only through shown(),
which describes a value in a bounded, escaped form, and every text is capped and cleaned before it leaves.
"""

from dataclasses import dataclass

from autograder.course import error_hints
from autograder.course.board import draw_with_key
from autograder.course.checks import Case, Check
from autograder.grading.protocol import Other, clean

SHOWN_FAILURES = 3  # failing examples shown for a visible check
OUTPUT_CAP = 4000  # characters of one test's feedback
MESSAGE_CAP_STAGE = 1000  # characters of a stage's message
TAMPERED = "the grader's reply channel was tampered with"
NOT_COUNTED_YET = "No function of this stage gave right answers yet, so this is not counted yet."


def shorten(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


def test_output(text: str) -> str:
    """A test's feedback, bounded and clean."""
    return clean(shorten(text, OUTPUT_CAP), OUTPUT_CAP, lines=True)


def stage_message(text: str) -> str:
    """A stage's one-line message, bounded and clean."""
    return clean(shorten(text, MESSAGE_CAP_STAGE), MESSAGE_CAP_STAGE)


def shown(value) -> str:
    """A returned value as the student sees it."""
    if isinstance(value, Other):
        return value.description
    if type(value) is bool:
        return f"{value!r} (a bool, not a number)"
    return shorten(repr(value), 200)  # repr escapes control characters and lone surrogates


def call_text(function: str, args: tuple) -> str:
    extra = "".join(f", {arg!r}" for arg in args[1:])
    return f"{function}(board{extra})"


def with_hint(text: str, check: Check, separator: str = "\n") -> str:
    return f"{text}{separator}Try this: {check.hint}" if check.hint else text


# ---------------------------------------------------------------------------------------------------------------
# How a run ended, for the calls it never answered


def out_of_cpu(what: str, seconds: float) -> str:
    return f"{what} ran out of its CPU time limit of {seconds:g} s"


def waited(wall_seconds: float) -> str:
    return f"the program was waiting (sleeping or blocked), not computing, for {wall_seconds:g} s"


def out_of_budget(budget: float) -> str:
    return (
        f"not run: the student's stages together used their wall-clock time of {budget:g} s "
        "(earlier stages waited or ran long)"
    )


def wrote_too_much() -> str:
    return "the program wrote too much and was stopped"


def stopped(detail: str) -> str:
    return f"the program was stopped: {clean(detail, 200)}" if detail else "the program was stopped"


def could_not_run(detail: str) -> str:
    said = "the grader could not run the program"
    return f"{said} ({clean(detail, 200)})" if detail else said


def stopped_before_call() -> str:
    return "the program stopped before this call"


# ---------------------------------------------------------------------------------------------------------------
# The stage as a whole


def tampered(why: str, in_memo_child: bool = False) -> str:
    return f"{TAMPERED}: in the memo experiment's child, {why}" if in_memo_child else f"{TAMPERED}: {why}"


# The hidden job's words: only what the grader itself knows, never a text, number or name the child wrote.
TAMPERED_HIDDEN = f"{TAMPERED}: in the hidden tests' run"


def hidden_import_failed(filename: str) -> str:
    return f"{filename} could not be imported again for the hidden tests"


def no_function(filename: str, function: str) -> str:
    return f"{filename} has no function {function}"


def import_failed(filename: str, imported: dict) -> str:
    if imported["error"] == "slow":
        return f"{filename} could not be imported: {imported['message']}"
    where = f" at {imported['where']}" if "where" in imported else ""
    return f"{filename} could not be imported: {imported['error']}{where}: {imported['message']}"


def exited_while_imported(filename: str, returncode: int | None) -> str:
    return f"{filename} ended the program (exit code {returncode}) while it was imported"


def stopped_before_tested(filename: str, why: str) -> str:
    return f"{filename} stopped before it could be tested: {why}"


def ended_early() -> str:
    return "the program ended before every call was made"


# ---------------------------------------------------------------------------------------------------------------
# Call checks


@dataclass(frozen=True)
class Problem:
    """One case of a check that was not right, in the words that say why."""

    case: Case
    text: str  # "returned ...", "raised ...", "was never answered: ..."
    wrong_value: bool = False  # it returned an answer of the right kind that is not right: worth an expected line


def never_answered(why: str) -> str:
    return f"was never answered: {why}"


def returned(value) -> str:
    return f"returned {shown(value)}"


def error_text(function: str, reply: dict) -> str:
    error, message = reply["error"], reply["message"]
    if error == "NotImplementedError":
        return f"{function} is not written yet (it raises NotImplementedError)"
    if error == "missing":
        return message
    if error == "slow":
        return f"{function} {message}"
    where = f" at {reply['where']}" if "where" in reply else ""
    said = f"{function} raised {error}{where}: {message}" if message else f"{function} raised {error}{where}"
    advice = error_hints.hint(error, message)  # the same words as the visible tests and the notebooks
    return f"{said} — {advice}" if advice else said


def not_one_of(function: str, value, allowed: tuple) -> str:
    return f"returned {shown(value)}, but {function} must return " + " or ".join(map(repr, allowed))


def not_a_tally(value) -> str:
    return f"returned {shown(value)}, but count_results must return a list of three ints [x_wins, o_wins, draws]"


def not_squares(value) -> str:
    return f"returned {shown(value)}, but best_squares must return a sorted list of square numbers (ints 0 to 8)"


def not_eight_boards(value) -> str:
    return f"returned {shown(value)}, but symmetries must return a list of 8 boards, each a list of 9 squares"


def not_a_board_string(value) -> str:
    return f"returned {shown(value)}, but canonical must return a board as a string of 9 characters"


def not_an_int(function: str, value) -> str:
    return f"returned {shown(value)}, but {function} must return an int"


def not_a_square(value: int) -> str:
    return f"returned {value}, which is not a square (squares are 0 to 8)"


def square_taken(value: int) -> str:
    return f"returned {value}, but square {value} is already taken"


def summary(check: Check, wrong: int) -> str:
    total = len(check.cases)
    if total == 1:
        return f"{check.function} did not give the right answer here."
    return f"{check.function} was not right on {wrong} of {total} boards."


def call_check(check: Check, passed: bool, one_reason: bool, wrong: int, problems: list[Problem]) -> str:
    """A call check's feedback: a summary, the failing boards drawn with what came back, and the hint.

    A visible check shows its worked examples in their own order. A hidden check shows one board, its smallest
    counterexample (fewest marks, then the first in the check's order) with what was right; its output is held
    back from the student until the grades are published (admin/publish.py), and always the instructor's.
    one_reason: every case failed the same way without a board to show (not written yet, not there at all).
    """
    if passed:
        return ""
    if one_reason:
        return with_hint(problems[0].text + ".", check).strip()
    lines = [summary(check, wrong)]
    shown = problems[:SHOWN_FAILURES] if check.visible else [simplest(problems)]
    for problem in shown:
        one = problem.case
        drawing = draw_with_key(one.args[0])
        where = "On this board" if check.visible or len(problems) == 1 else "The simplest board where it is wrong"
        lines.append(f"{where} ({call_text(check.function, one.args)}):\n\n```\n{drawing}\n```\n")
        lines.append(f"your function {problem.text}" if problem.text.startswith("returned") else problem.text)
        if (check.visible and problem.wrong_value) or (not check.visible and one.accept):
            lines.append(expected(one))
        lines.append("")
    return with_hint("\n".join(lines), check).strip()


def simplest(problems: list[Problem]) -> Problem:
    """A hidden check's counterexample: the board with fewest marks, the first of them in the check's order."""
    return min(problems, key=lambda problem: marks(problem.case.args[0]))  # min keeps the first of a tie


def expected(one: Case) -> str:
    answers = sorted(one.accept, key=repr)
    return f"expected {answers[0]!r}" if len(answers) == 1 else f"expected one of {answers!r}"


def marks(board) -> int:
    """How many squares of a board are taken: the fewer, the simpler the board."""
    return sum(square != " " for square in board)


# ---------------------------------------------------------------------------------------------------------------
# The board left unchanged


ADVISORY = (
    "\n\nThis check is advisory: it earns no points, since only your own program can see the board after a call, "
    "but code that changes the board it is given is a bug waiting for whoever calls it."
)


def changed_board(count: int, step: dict, after) -> str:
    return (
        f"{count} calls changed the board they were given. {step['call']} was given:\n\n```\n"
        f"{draw_with_key(step['args'][0])}\n```\n\nand left it as:\n\n```\n{draw_with_key(after)}\n```"
    )


# ---------------------------------------------------------------------------------------------------------------
# The memo experiment


def memo_import_failed(filename: str, imported: dict) -> str:
    return f"In the memo experiment, {import_failed(filename, imported)}."


def memo_never_answered(why: str) -> str:
    return f"The memo experiment was never answered: {why}."


def memo_wrong_score(value) -> str:
    return f"score of the empty board returned {shown(value)}, which is not its score."


def memo_size(size: int, positions: int, canonical: bool = False) -> str:
    should = (
        f"one canonical board for each family of reachable boards that are the same turned or flipped ({positions:,})"
        if canonical
        else f"every reachable position ({positions:,})"
    )
    return f"After memo.clear() and score of the empty board, memo held {size:,} boards; {should} should be in it."


def memo_not_canonical(positions: int) -> str:
    return (
        f"memo held {positions:,} entries, but they are not the canonical boards (canonical(board), a string of 9 "
        "characters), each with its score."
    )


def prune_openings(why: str) -> str:
    return f"After the empty board, score was asked about the nine openings; {why}."


def prune_cpu(cpu_seconds: float, threshold: float) -> str:
    return (
        f"Scoring the empty board and the nine openings used {cpu_seconds:.2f} CPU seconds; alpha-beta needs a "
        f"small fraction of a second, plain minimax about two seconds (the limit is {threshold:g} s)."
    )


def memo_values_not_scores(positions: int) -> str:
    return (
        f"After memo.clear() and score of the empty board, memo held {positions:,} entries, but their values "
        f"are not the scores of the {positions:,} reachable boards: each value should be its board's score "
        "(1, 0 or -1, an int)."
    )


def memo_wrong_entries(positions: int, wrong: int) -> str:
    return f"memo held {positions:,} boards, but {wrong:,} of them were not stored with their own score."


def memo_keyed_otherwise(positions: int, why: str) -> str:
    return (
        f"memo held {positions:,} entries, but its keys are not the boards themselves (''.join(board) or "
        "tuple(board)), so the grader scored every reachable board again to check them, and " + why + "."
    )


def again_stopped(why: str | None) -> str:
    return f"the program stopped first ({why})" if why else "the program stopped first"


def again_wrong(wrong: int) -> str:
    return f"{wrong:,} of its answers were not the boards' scores"


def again_slow(seconds: float) -> str:
    return f"it did not answer them all within {seconds:g} CPU seconds (or it raised an error)"


def again_cpu(cpu_seconds: float, threshold: float) -> str:
    return (
        f"that took {cpu_seconds:.2f} CPU seconds in all, where a memo needs a small fraction of a second "
        f"(the limit is {threshold:g} s)"
    )


def memo_too_many_calls(calls: int, limit: int) -> str:
    return (
        f"Scoring the empty board from an empty memo called score {calls:,} times; plain minimax makes "
        f"549,946 calls, and with the memo it should need under {limit:,}."
    )


def memo_not_answered_again(why: str) -> str:
    return (
        "After the empty board was scored, score was asked about it again and then about every reachable "
        f"board, which a memo answers at once; {why}."
    )


def memo_cpu(cpu_seconds: float, threshold: float) -> str:
    return (
        f"The memo experiment used {cpu_seconds:.2f} CPU seconds; with a memo it needs a small fraction "
        f"of a second (the limit is {threshold:g} s)."
    )
