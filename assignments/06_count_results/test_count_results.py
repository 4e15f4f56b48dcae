"""Visible tests for stage 6 (challenge, two stars): count_results(board).

Run them from the repository root with `pytest assignments/06_count_results`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
The answer [x_wins, o_wins, draws] may be returned as a list or a tuple of three ints.
"""

import count_results
import coursetest
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("count_results", ("XXXOO    ",), [1, 0, 0], "X has won: one game, an X win"),
    ("count_results", ("XXOXO O  ",), [0, 1, 0], "O has won: one game, an O win"),
    ("count_results", ("XOXXOOOXX",), [0, 0, 1], "a full board without a line: one draw"),
    ("count_results", ("XOXOXOXOX",), [1, 0, 0], "a full board with a line is a win, not a draw"),
    ("count_results", ("XOXXOOOX ",), [0, 0, 1], "one square left, and it makes no line"),
    ("count_results", ("XOXXOO   ",), [2, 1, 2], "X to move with three squares left"),
    ("count_results", ("XOXXO    ",), [4, 5, 8], "O to move with four squares left"),
    ("count_results", ("XX OO    ",), [22, 27, 24], "X to move with five squares left"),
    ("count_results", ("X   O   X",), [200, 248, 72], "O to move after X took two corners"),
    ("count_results", ("X        ",), [14652, 7896, 5184], "after X's first mark in a corner: 27,732 games"),
    ("count_results", (" X       ",), [14232, 10176, 5184], "after X's first mark on a side: 29,592 games"),
    ("count_results", ("    X    ",), [15648, 5616, 4608], "after X's first mark in the centre: 25,872 games"),
    ("count_results", ("         ",), [131184, 77904, 46080], "all 255,168 games from the empty board"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(count_results, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X", "XXXOO    "])
def test_board_is_left_unchanged(text):
    board = list(text)
    count_results.count_results(board)
    assert board == list(text), coursetest.board_changed("count_results", (text,), list(text), board)


def test_answer_is_three_plain_ints():
    for text in ["XXXOO    ", "XOXXOO   "]:
        result = count_results.count_results(list(text))
        ok = type(result) in (list, tuple) and len(result) == 3 and all(type(tally) is int for tally in result)
        wanted = "a list (or tuple) of three ints: [x_wins, o_wins, draws]"
        assert ok, coursetest.wrong_type("count_results", (text,), result, wanted)
