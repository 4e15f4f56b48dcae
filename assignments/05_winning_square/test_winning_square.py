"""Visible tests for stage 5 (challenge, one star): winning_square(board, mark).

Run them from the repository root with `pytest assignments/05_winning_square`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
An answer written as a set, like {7, 8}, means any one of those squares is right.
"""

import coursetest
import pytest
import winning_square

# (function, arguments, expected answer, why). The first argument is the board, the second the mark.
EXAMPLES = [
    ("winning_square", ("         ", "X"), -1, "an empty board has no line to complete"),
    ("winning_square", ("X        ", "X"), -1, "one mark cannot complete a line"),
    ("winning_square", ("XX OO    ", "X"), {2}, "X completes the top row"),
    ("winning_square", ("XX OO    ", "O"), {5}, "O completes the middle row"),
    ("winning_square", ("   OO XX ", "X"), {8}, "X completes the bottom row"),
    ("winning_square", ("X  X O   ", "X"), {6}, "X completes the left column"),
    ("winning_square", ("X O X    ", "X"), {8}, "X completes a diagonal"),
    ("winning_square", ("X O OX   ", "O"), {6}, "O completes the other diagonal"),
    ("winning_square", ("X XOO    ", "X"), {1}, "the empty square can be in the middle of the line"),
    ("winning_square", (" XXOO    ", "X"), {0}, "or at its start"),
    ("winning_square", ("X O OX   ", "X"), -1, "X has no two in a line"),
    ("winning_square", ("XOX      ", "X"), -1, "O's mark blocks the top row"),
    ("winning_square", ("OO  X  X ", "X"), -1, "the middle column is blocked by O"),
    ("winning_square", ("OO  X  X ", "O"), {2}, "O completes the top row"),
    ("winning_square", ("XXOOXO   ", "X"), {7, 8}, "X has two ways to win: either square is right"),
    ("winning_square", ("XXOOXO   ", "O"), {8}, "O completes the right column"),
    ("winning_square", ("XOXXOOOX ", "X"), -1, "the last empty square completes no line"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(winning_square, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("mark", ["X", "O"])
@pytest.mark.parametrize("text", ["XX OO    ", "XXOOXO   ", "XOX      "])
def test_board_is_left_unchanged(text, mark):
    board = list(text)
    winning_square.winning_square(board, mark)
    assert board == list(text), coursetest.board_changed("winning_square", (text, mark), list(text), board)


def test_answer_is_a_plain_int():
    for text, mark, wanted in [("XX OO    ", "X", "the int 2"), ("XOX      ", "X", "the int -1 (not None or False)")]:
        result = winning_square.winning_square(list(text), mark)
        assert type(result) is int, coursetest.wrong_type("winning_square", (text, mark), result, wanted)
