"""Visible tests for stage 7 (challenge, three stars): quickest_move(board).

Run them from the repository root with `pytest assignments/07_quickest_move`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
Every board here is one where the player to move can force a win. An answer written as a set, like {3, 4},
means any one of those squares is right.
"""

import coursetest
import pytest
import quickest_move

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("quickest_move", ("O    OXX ",), {8}, "X wins at once on 8; squares 1, 2 and 4 also win, but later"),
    ("quickest_move", ("XX OO    ",), {2}, "X wins at once on 2 before O can"),
    ("quickest_move", ("XOXXOO   ",), {6}, "X wins at once on the left column"),
    ("quickest_move", ("XOXO  OX ",), {8}, "8 makes two threats; X wins on the last square, which beats a draw"),
    ("quickest_move", ("  OXXO X ",), {8}, "O wins at once on 8; square 1 also wins, but later"),
    ("quickest_move", ("XOXXO    ",), {7}, "O wins at once on the middle column"),
    ("quickest_move", (" XOXOX OX",), {6}, "O wins at once on 6; a win with one square left still beats a draw"),
    ("quickest_move", ("XXOO     ",), {4}, "the centre makes two threats: X wins on its next move"),
    ("quickest_move", ("     XXOO",), {3, 4}, "no win at once; a double threat on 3 or 4 wins next move"),
    ("quickest_move", ("OOX    X ",), {6, 8}, "no win at once; a double threat on 6 or 8 wins next move"),
    ("quickest_move", ("     OXX ",), {8}, "O blocks on 8, and that starts O's own winning attack"),
    ("quickest_move", ("XO       ",), {3, 4, 6}, "O answered a corner with a side: X wins with its fourth mark"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(quickest_move, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize("text", ["O    OXX ", "XXOO     ", "     OXX "])
def test_board_is_left_unchanged(text):
    board = list(text)
    quickest_move.quickest_move(board)
    assert board == list(text), coursetest.board_changed("quickest_move", (text,), list(text), board)


@pytest.mark.parametrize("text", ["O    OXX ", "     XXOO", "XO       "])
def test_answer_is_an_empty_square(text):
    result = quickest_move.quickest_move(list(text))
    empty = [square for square in range(9) if text[square] == " "]
    ok = type(result) is int and result in empty
    assert ok, coursetest.wrong_type("quickest_move", (text,), result, f"the int number of an empty square: {empty}")
