"""Visible tests for stage 4: memo, score(board) and choose_move(board).

Run them from the repository root with `pytest assignments/04_memoization`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
An answer written as a set, like {1, 3, 5, 7}, means any one of those squares is right.
"""

import coursetest
import memoization
import pytest

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("score", ("XXXOO    ",), 1, "X has already won"),
    ("score", ("XXOXO O  ",), -1, "O has already won"),
    ("score", ("XOXXOOOXX",), 0, "a full board without a line is a draw"),
    ("score", ("XOXOXOXOX",), 1, "a full board can still have a winner: look for a line first"),
    ("score", ("XX OO    ",), 1, "X to move completes the top row"),
    ("score", ("XOXXO    ",), -1, "O to move completes the middle column"),
    ("score", ("XXOO     ",), 1, "X on 0 and 1, O on 2 and 3: X wins by taking the centre"),
    ("score", ("OO  X  X ",), 0, "X must block on 2, and then it is a draw"),
    ("score", ("X   O   X",), 0, "O holds the draw by taking a side"),
    ("score", ("XO       ",), 1, "O answered a corner with a side: X forces a win"),
    ("score", ("         ",), 0, "perfect play from the empty board is a draw"),
    ("choose_move", ("XX OO    ",), {2}, "X wins at once on 2"),
    ("choose_move", ("XOXXO    ",), {7}, "O wins at once on 7"),
    ("choose_move", ("XOXXOO   ",), {6}, "X wins on the left column"),
    ("choose_move", ("XXOO     ",), {4}, "the centre is X's only winning move"),
    ("choose_move", ("OO  X  X ",), {2}, "X must block O's top row: every other square loses"),
    ("choose_move", ("X   O   X",), {1, 3, 5, 7}, "O must take a side: a corner loses"),
    ("choose_move", ("X        ",), {4}, "after a corner, only the centre holds for O"),
    ("choose_move", ("         ",), {0, 1, 2, 3, 4, 5, 6, 7, 8}, "every first move draws"),
]

EMPTY = " " * 9
REACHABLE_POSITIONS = 5478


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    board = list(args[0])
    result = getattr(memoization, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why, memo=True)


@pytest.mark.parametrize("function_name", ["score", "choose_move"])
@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X"])
def test_board_is_left_unchanged(function_name, text):
    board = list(text)
    getattr(memoization, function_name)(board)
    assert board == list(text), coursetest.board_changed(function_name, (text,), list(text), board)


def test_memo_holds_every_reachable_board():
    memoization.memo.clear()
    result = memoization.score(list(EMPTY))
    size = len(memoization.memo)
    assert size == REACHABLE_POSITIONS, (
        f"After memo.clear() and score(board) of the empty board, memo holds {size:,} boards; it should hold "
        f"{REACHABLE_POSITIONS:,}: one for every position reachable from the empty board, finished ones and the "
        f"empty board included (score returned {coursetest.show(result)}).\n"
        "Try this: write memo[key] = result for every board score works out, finished boards too, with one key "
        "per board such as ''.join(board)."
    )


def test_a_scored_board_is_looked_up_not_searched_again(monkeypatch):
    memoization.memo.clear()
    memoization.score(list(EMPTY))
    original = memoization.score
    calls = []

    def counting_score(board):
        calls.append("".join(board))
        return original(board)

    monkeypatch.setattr(memoization, "score", counting_score)
    result = memoization.score(list(EMPTY))
    assert result == 0 and len(calls) == 1, (
        f"Scoring the empty board a second time made {len(calls):,} calls to score (and returned "
        f"{coursetest.show(result)}); with the board already in memo it should make 1 and return 0.\n"
        "Try this: "
        + (
            "the lookup works, but memo gave back the wrong score: two different boards must never share a key."
            if len(calls) == 1
            else "at the very start of score, look the board up in memo before searching."
        )
    )


def test_score_is_a_plain_int():
    for text, expected in [("XXXOO    ", 1), ("XXOXO O  ", -1), ("XOXXOOOXX", 0), ("XX OO    ", 1)]:
        memoization.memo.clear()
        result = memoization.score(list(text))
        ok = type(result) is int
        assert ok, coursetest.wrong_type("score", (text,), result, f"the int {expected} (not True, False or a float)")


@pytest.mark.parametrize("text", ["X        ", "XO       ", "XOXXOOOX "])
def test_choose_move_returns_an_empty_square(text):
    result = memoization.choose_move(list(text))
    empty = [square for square in range(9) if text[square] == " "]
    ok = type(result) is int and result in empty
    assert ok, coursetest.wrong_type("choose_move", (text,), result, f"the int number of an empty square: {empty}")
