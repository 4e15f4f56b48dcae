"""Visible tests for bonus stage 9: depth_score(board, depth) and best_squares(board).

Run them from the repository root with `pytest assignments/09_best_squares`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
The first examples are the robot arm's: the boards after each candidate move, scored at depth 1.
"""

import best_squares
import coursetest
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    # X on 0 and 1, O on 3 and 4, X to move: each candidate move, at depth 1.
    ("depth_score", ("XXXOO    ", 1), 9, "X wins with the candidate move itself: 10 - 1"),
    ("depth_score", ("XX OOX   ", 1), 0, "X blocks the middle row, O then blocks the top row: a draw"),
    ("depth_score", ("XX OO X  ", 1), -8, "O completes the middle row right after: 2 - 10"),
    ("depth_score", ("XX OO  X ", 1), -8, "O completes the middle row right after: 2 - 10"),
    ("depth_score", ("XX OO   X", 1), -8, "O completes the middle row right after: 2 - 10"),
    # X on 0 and 8, O in the centre, O to move: a corner loses two moves later, a side draws.
    ("depth_score", ("X O O   X", 1), 6, "X blocks on 6, makes two threats, and wins at depth 4: 10 - 4"),
    ("depth_score", ("X   O O X", 1), 6, "X blocks on 2, makes two threats, and wins at depth 4: 10 - 4"),
    ("depth_score", ("XO  O   X", 1), 0, "a side holds the draw"),
    ("depth_score", ("X   OO  X", 1), 0, "a side holds the draw"),
    ("depth_score", ("XXXOO    ", 3), 7, "the same win, found three moves deep: 10 - 3"),
    ("depth_score", ("XXXOO    ", 0), 10, "a won board at depth 0 is worth 10"),
    ("depth_score", ("XXOXO O  ", 2), -8, "O has won at depth 2: 2 - 10"),
    ("depth_score", ("XOXXOOOXX", 1), 0, "a full board without a line is a draw at any depth"),
    ("depth_score", ("XX OO    ", 0), 9, "X to move wins on the next move, at depth 1"),
    ("depth_score", ("XO X     ", 1), 5, "O delays its loss as long as it can: X wins at depth 5"),
    ("best_squares", ("XX OO    ",), [2], "win at once: 9 beats the draw of square 5 and the -8 of the rest"),
    ("best_squares", ("X   O   X",), [1, 3, 5, 7], "the sides score 0 and the corners 6: O wants the lowest"),
    ("best_squares", ("XO X O   ",), [6], "4 and 8 win too, later (7); 6 wins at once (9)"),
    ("best_squares", ("XOOX     ",), [6], "every square but 6 wins later; 6 wins at once"),
    ("best_squares", ("XO X     ",), [6], "O loses anyway: blocking on 6 makes the loss come latest"),
    ("best_squares", ("XX O     ",), [2], "O loses anyway: blocking on 2 makes the loss come latest"),
    ("best_squares", ("XOXXO    ",), [7], "O wins at once on 7"),
    ("best_squares", ("OO  X  X ",), [2], "X must block O's top row: every other square loses"),
    ("best_squares", ("X        ",), [4], "after a corner, only the centre holds for O"),
]

ARM_EXAMPLES = [
    ("XX OO    ", {2: 9, 5: 0, 6: -8, 7: -8, 8: -8}),
    ("X   O   X", {1: 0, 2: 6, 3: 0, 5: 0, 6: 6, 7: 0}),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(best_squares, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why)


@pytest.mark.parametrize(("text", "scores"), ARM_EXAMPLES)
def test_the_robot_arms_scores(text, scores):
    """Every candidate move of the arm's two worked examples, scored as the arm scores them."""
    board = list(text)
    mark = "X" if text.count("X") == text.count("O") else "O"
    found = {}
    for square in scores:
        board[square] = mark
        found[square] = best_squares.depth_score(board, 1)
        board[square] = " "
    assert found == scores, (
        f"On {text!r} with {mark} to move, the candidate moves score {found}; the arm scores them {scores}.\n"
        "Try this: the candidate move is depth 1, so a win with it scores 10 - 1 = 9 and a loss right after "
        "2 - 10 = -8; each recursive call is one move deeper."
    )


@pytest.mark.parametrize(("function_name", "extra"), [("depth_score", (1,)), ("best_squares", ())])
@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X"])
def test_board_is_left_unchanged(function_name, extra, text):
    board = list(text)
    getattr(best_squares, function_name)(board, *extra)
    assert board == list(text), coursetest.board_changed(function_name, (text, *extra), list(text), board)


@pytest.mark.parametrize("text", ["X        ", "XO       ", "XOXXOOOX "])
def test_best_squares_is_a_sorted_list_of_empty_squares(text):
    result = best_squares.best_squares(list(text))
    empty = [square for square in range(9) if text[square] == " "]
    ok = type(result) is list and result and all(type(s) is int and s in empty for s in result)
    ok = ok and result == sorted(set(result))
    wanted = f"a sorted list of empty squares, each an int, from {empty}"
    assert ok, coursetest.wrong_type("best_squares", (text,), result, wanted)
