"""Visible tests for stage 1: winner(board) and to_move(board).

Run them from the repository root with `pytest assignments/01_rules`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
"""

import coursetest
import pytest
import rules

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("winner", ("         ",), None, "nobody has played yet"),
    ("winner", ("X        ",), None, "one mark is not a line"),
    ("winner", ("XX OO    ",), None, "two in a row is not yet a line"),
    ("winner", ("XXXOO    ",), "X", "X wins on the top row"),
    ("winner", ("OO XXX   ",), "X", "X wins on the middle row"),
    ("winner", ("XX X  OOO",), "O", "O wins on the bottom row"),
    ("winner", ("OOX  X  X",), "X", "X wins on the right column"),
    ("winner", ("XOX O XO ",), "O", "O wins on the middle column"),
    ("winner", ("X O X O X",), "X", "X wins on a diagonal"),
    ("winner", ("XXOXO O  ",), "O", "O wins on the other diagonal"),
    ("winner", ("XOXXOOOXX",), None, "a full board without a line is a draw"),
    ("winner", ("XOXOXOXOX",), "X", "a full board can still have a winner"),
    ("to_move", ("         ",), "X", "X always moves first"),
    ("to_move", ("X        ",), "O", "X has played once, O not yet"),
    ("to_move", ("    X   O",), "X", "both have played once"),
    ("to_move", ("XO X     ",), "O", "X has one mark more than O"),
    ("to_move", ("XX OO    ",), "X", "both have played twice"),
    ("to_move", ("XOXXOOOX ",), "X", "both have played four times; one square is left"),
    ("to_move", ("OO  X  X ",), "X", "it does not matter who started in which square"),
]

FUNCTIONS = ["winner", "to_move"]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(rules, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("function_name", FUNCTIONS)
@pytest.mark.parametrize("text", ["XX OO    ", "XXXOO    ", "XOXXOOOXX"])
def test_board_is_left_unchanged(function_name, text):
    board = list(text)
    getattr(rules, function_name)(board)
    assert board == list(text), coursetest.board_changed(function_name, (text,), list(text), board)


def test_winner_returns_a_plain_str_or_none():
    for text in ["XXXOO    ", "XXOXO O  ", "XX OO    ", "         "]:
        result = rules.winner(list(text))
        ok = result is None or (type(result) is str and result in ("X", "O"))
        assert ok, coursetest.wrong_type("winner", (text,), result, "the str 'X' or 'O', or None")


def test_to_move_returns_a_plain_str():
    for text in ["         ", "X        "]:
        result = rules.to_move(list(text))
        ok = type(result) is str and result in ("X", "O")
        assert ok, coursetest.wrong_type("to_move", (text,), result, "the str 'X' or 'O'")
