"""Visible tests for stage 2: count_games(board).

Run them from the repository root with `pytest assignments/02_count_games`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
"""

import count_games
import coursetest
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("count_games", ("XXXOO    ",), 1, "X has won: a finished board is one game, even with empty squares"),
    ("count_games", ("XXOXO O  ",), 1, "O has won on a diagonal"),
    ("count_games", ("XOXXOOOXX",), 1, "a full board is one game"),
    ("count_games", ("XOXOXOXOX",), 1, "a full board with a line is one game too"),
    ("count_games", ("XOXXOOOX ",), 1, "one square left: one way to finish"),
    ("count_games", ("XOXXOO   ",), 5, "X to move with three squares left"),
    ("count_games", ("XOXXO    ",), 17, "O to move with four squares left"),
    ("count_games", ("XX OO    ",), 73, "X to move with five squares left"),
    ("count_games", ("X   O   X",), 520, "O to move after X took two corners"),
    ("count_games", ("X        ",), 27732, "after X's first mark in a corner"),
    ("count_games", ("        X",), 27732, "every corner gives the same count"),
    ("count_games", (" X       ",), 29592, "after X's first mark on a side"),
    ("count_games", ("    X    ",), 25872, "after X's first mark in the centre"),
    ("count_games", ("         ",), 255168, "the whole game tree from the empty board"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(count_games, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X", "XXXOO    "])
def test_board_is_left_unchanged(text):
    board = list(text)
    count_games.count_games(board)
    assert board == list(text), coursetest.board_changed("count_games", (text,), list(text), board)


def test_count_is_a_plain_int():
    for text in ["XXXOO    ", "XOXXOO   "]:
        result = count_games.count_games(list(text))
        assert type(result) is int, coursetest.wrong_type(
            "count_games", (text,), result, "an int (not a float or bool)"
        )
