"""Visible tests for stage 3: score(board) and choose_move(board).

Run them from the repository root with `pytest assignments/03_minimax`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
An answer written as a set, like {1, 3, 5, 7}, means any one of those squares is right.
"""

import coursetest
import minimax
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("score", ("XXXOO    ",), 1, "X has already won"),
    ("score", ("XXOXO O  ",), -1, "O has already won"),
    ("score", ("XOXXOOOXX",), 0, "a full board without a line is a draw"),
    ("score", ("XOXOXOXOX",), 1, "a full board can still have a winner: look for a line first"),
    ("score", ("XOXXOOOX ",), 0, "X's last move cannot make a line"),
    ("score", ("XX OO    ",), 1, "X to move completes the top row"),
    ("score", ("XOXXO    ",), -1, "O to move completes the middle column"),
    ("score", ("XXOO     ",), 1, "X on 0 and 1, O on 2 and 3: X wins by taking the centre"),
    ("score", ("OO  X  X ",), 0, "X must block on 2, and then it is a draw"),
    ("score", ("X   O   X",), 0, "O holds the draw by taking a side"),
    ("score", ("XO       ",), 1, "O answered a corner with a side: X forces a win"),
    ("score", ("X   O    ",), 0, "O answered a corner with the centre: a draw"),
    ("score", ("         ",), 0, "perfect play from the empty board is a draw"),
    ("choose_move", ("XX OO    ",), {2}, "X wins at once on 2"),
    ("choose_move", ("XOXXO    ",), {7}, "O wins at once on 7"),
    ("choose_move", ("XOXXOOOX ",), {8}, "only square 8 is left"),
    ("choose_move", ("XOXXOO   ",), {6}, "X wins on the left column"),
    ("choose_move", ("XXOO     ",), {4}, "the centre is X's only winning move"),
    ("choose_move", ("OO  X  X ",), {2}, "X must block O's top row: every other square loses"),
    ("choose_move", ("X   O   X",), {1, 3, 5, 7}, "O must take a side: a corner loses"),
    ("choose_move", ("X        ",), {4}, "after a corner, only the centre holds for O"),
    ("choose_move", ("    X    ",), {0, 2, 6, 8}, "after the centre, O must take a corner"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(minimax, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("function_name", ["score", "choose_move"])
@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X"])
def test_board_is_left_unchanged(function_name, text):
    board = list(text)
    getattr(minimax, function_name)(board)
    assert board == list(text), coursetest.board_changed(function_name, (text,), list(text), board)


@pytest.mark.parametrize("text", ["X        ", "XO       ", "X   O   X", "XOXXOO   ", "XOXXOOOX ", "OO  X  X "])
def test_choose_move_returns_an_empty_square(text):
    result = minimax.choose_move(list(text))
    empty = [square for square in range(9) if text[square] == " "]
    ok = type(result) is int and result in empty
    assert ok, coursetest.wrong_type("choose_move", (text,), result, f"the int number of an empty square: {empty}")


def test_score_is_a_plain_int():
    for text, expected in [("XXXOO    ", 1), ("XXOXO O  ", -1), ("XOXXOOOXX", 0), ("XX OO    ", 1)]:
        result = minimax.score(list(text))
        ok = type(result) is int
        assert ok, coursetest.wrong_type("score", (text,), result, f"the int {expected} (not True, False or a float)")
