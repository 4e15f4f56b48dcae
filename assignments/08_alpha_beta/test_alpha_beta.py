"""Visible tests for bonus stage 8: alphabeta(board, alpha, beta), score(board) and choose_move(board).

Run them from the repository root with `pytest assignments/08_alpha_beta`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
An answer written as a set, like {-1, 0}, means any one of those values is right: outside the window, alphabeta
may return alpha itself or any score between the board's score and alpha (or beta).
"""

import alpha_beta
import coursetest
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("alphabeta", ("XXXOO    ", -2, 2), 1, "X has already won"),
    ("alphabeta", ("XXOXO O  ", -2, 2), -1, "O has already won"),
    ("alphabeta", ("XOXXOOOXX", -2, 2), 0, "a full board without a line is a draw"),
    ("alphabeta", ("XX OO    ", -2, 2), 1, "X to move completes the top row"),
    ("alphabeta", ("XOXXO    ", -2, 2), -1, "O to move completes the middle column"),
    ("alphabeta", ("XXOO     ", -2, 2), 1, "the centre wins for X, but only after squares 4 to 8 are tried"),
    ("alphabeta", ("OO  X  X ", -2, 2), 0, "X must block on 2, and then it is a draw"),
    ("alphabeta", ("X   O   X", -2, 2), 0, "O holds the draw by taking a side; the corners lose"),
    ("alphabeta", ("XO       ", -2, 2), 1, "O answered a corner with a side: X forces a win"),
    ("alphabeta", ("XO X     ", -2, 2), 1, "O to move loses whatever it does"),
    ("alphabeta", ("OO  X  X ", -1, 1), 0, "the score 0 lies inside the window (-1, 1)"),
    ("alphabeta", ("XX OO    ", -2, 1), {1}, "the score 1 is beta or more, and no bound lies between beta and 1"),
    ("alphabeta", ("XOXXO    ", 0, 2), {-1, 0}, "the score -1 is alpha or less: alpha itself or the score will do"),
    ("alphabeta", ("XXOO     ", -2, 0), {0, 1}, "the score 1 is beta or more: beta itself or the score will do"),
    ("alphabeta", ("X   O   X", 0, 2), {0}, "the score 0 equals alpha: nothing else lies between them"),
    ("alphabeta", ("X   O   X", -2, 0), {0}, "the score 0 equals beta: nothing else lies between them"),
    ("alphabeta", ("XO X     ", -2, 0), {0, 1}, "O to move loses: the score 1 is beta or more"),
    ("score", ("XXXOO    ",), 1, "X has already won"),
    ("score", ("XXOXO O  ",), -1, "O has already won"),
    ("score", ("XOXXOOOXX",), 0, "a full board without a line is a draw"),
    ("score", ("XX OO    ",), 1, "X to move completes the top row"),
    ("score", ("XOXXO    ",), -1, "O to move completes the middle column"),
    ("score", ("XXOO     ",), 1, "X on 0 and 1, O on 2 and 3: X wins by taking the centre"),
    ("score", ("OO  X  X ",), 0, "X must block on 2, and then it is a draw"),
    ("score", ("XO X     ",), 1, "O to move loses whatever it does"),
    ("score", ("         ",), 0, "perfect play from the empty board is a draw"),
    ("choose_move", ("XX OO    ",), {2}, "X wins at once on 2"),
    ("choose_move", ("XOXXO    ",), {7}, "O wins at once on 7"),
    ("choose_move", ("XXOO     ",), {4}, "the centre is X's only winning move"),
    ("choose_move", ("OO  X  X ",), {2}, "X must block O's top row: every other square loses"),
    ("choose_move", ("X   O   X",), {1, 3, 5, 7}, "O must take a side: a corner loses"),
    ("choose_move", ("X        ",), {4}, "after a corner, only the centre holds for O"),
]

EMPTY = " " * 9
# Calls of alphabeta when score scores the empty board, moves tried in square order with the window (-2, 2);
# plain minimax makes 549,946. A search that makes more than PRUNED_CALLS_LIMIT does not prune: it is stopped
# there, and it would fail the grader's test of its CPU time too.
SQUARE_ORDER_CALLS = 18_297
MINIMAX_CALLS = 549_946
PRUNED_CALLS_LIMIT = 200_000


class TooManyCalls(Exception):
    """Stops a search that has made more calls of alphabeta than a search that prunes needs."""


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(alpha_beta, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize(
    ("function_name", "extra"), [("alphabeta", (-2, 2)), ("alphabeta", (0, 1)), ("score", ()), ("choose_move", ())]
)
@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X"])
def test_board_is_left_unchanged(function_name, extra, text):
    board = list(text)
    getattr(alpha_beta, function_name)(board, *extra)
    assert board == list(text), coursetest.board_changed(function_name, (text, *extra), list(text), board)


def test_scoring_the_empty_board_prunes(monkeypatch):
    original = alpha_beta.alphabeta
    calls = []

    def counting_alphabeta(board, alpha, beta):
        calls.append(1)
        if len(calls) > PRUNED_CALLS_LIMIT:
            raise TooManyCalls()
        return original(board, alpha, beta)

    monkeypatch.setattr(alpha_beta, "alphabeta", counting_alphabeta)
    try:
        result = alpha_beta.score(list(EMPTY))
        made = f"made {len(calls):,} calls of alphabeta (and returned {coursetest.show(result)})"
    except TooManyCalls:
        result, made = None, f"was stopped after {PRUNED_CALLS_LIMIT:,} calls of alphabeta"
    assert result == 0 and 0 < len(calls) <= PRUNED_CALLS_LIMIT, (
        f"score of the empty board {made}; plain minimax makes {MINIMAX_CALLS:,}, alpha-beta with the moves in "
        f"square order and the window (-2, 2) {SQUARE_ORDER_CALLS:,}.\n"
        "Try this: after each move, raise alpha (X) or lower beta (O), stop trying moves once alpha >= beta, and "
        "pass the narrowed window to every recursive call; score must call alphabeta, not a search of its own."
    )


def test_score_is_a_plain_int():
    for text, expected in [("XXXOO    ", 1), ("XXOXO O  ", -1), ("XOXXOOOXX", 0), ("XX OO    ", 1)]:
        result = alpha_beta.score(list(text))
        ok = type(result) is int
        assert ok, coursetest.wrong_type("score", (text,), result, f"the int {expected} (not True, False or a float)")


@pytest.mark.parametrize("text", ["X        ", "XO       ", "XOXXOOOX "])
def test_choose_move_returns_an_empty_square(text):
    result = alpha_beta.choose_move(list(text))
    empty = [square for square in range(9) if text[square] == " "]
    ok = type(result) is int and result in empty
    assert ok, coursetest.wrong_type("choose_move", (text,), result, f"the int number of an empty square: {empty}")
