"""Visible tests for bonus stage 10: symmetries(board), canonical(board), memo and score(board).

Run them from the repository root with `pytest assignments/10_symmetry`, or with `pytest` inside this folder.
A board is written here as 9 characters, row by row, ' ' for an empty square; each test turns it into a list.
symmetries returns lists of squares; here each expected board is written as its 9 characters.
"""

import coursetest
import pytest
import symmetry

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    (
        "symmetries",
        ("XO       ",),
        ["XO       ", "  X  O   ", "       OX", "   O  X  ", " OX      ", "     O  X", "      XO ", "X  O     "],
        "all 8 differ: the board, three quarter turns clockwise, its mirror image and three turns of that",
    ),
    (
        "symmetries",
        ("X        ",),
        ["X        ", "  X      ", "        X", "      X  ", "  X      ", "        X", "      X  ", "X        "],
        "a corner mark visits all four corners",
    ),
    (
        "symmetries",
        ("    X    ",),
        ["    X    ", "    X    ", "    X    ", "    X    ", "    X    ", "    X    ", "    X    ", "    X    "],
        "the centre stays where it is",
    ),
    (
        "symmetries",
        ("XOX O  X ",),
        ["XOX O  X ", "  XXOO  X", " X  O XOX", "X  OOXX  ", "XOX O  X ", "  XXOO  X", " X  O XOX", "X  OOXX  "],
        "a board that is its own mirror image",
    ),
    ("canonical", ("         ",), "         ", "the empty board is its own family"),
    ("canonical", ("X        ",), "        X", "' ' sorts before 'O' and 'X': the smallest puts the mark last"),
    ("canonical", ("  X      ",), "        X", "every corner opening is the same board"),
    ("canonical", (" X       ",), "       X ", "every side opening is the same board"),
    ("canonical", ("    X    ",), "    X    ", "the centre opening is alone in its family"),
    ("canonical", ("XO       ",), "       OX", "the smallest is the board turned twice"),
    ("canonical", ("X  O     ",), "       OX", "the smallest is only found by flipping as well as turning"),
    ("canonical", ("X    O   ",), "     OX  ", "the smallest is only found by flipping as well as turning"),
    ("canonical", ("XXOO     ",), "     OOXX", "the family of X on 0 and 1, O on 2 and 3"),
    ("score", ("XXXOO    ",), 1, "X has already won"),
    ("score", ("XXOXO O  ",), -1, "O has already won"),
    ("score", ("XOXXOOOXX",), 0, "a full board without a line is a draw"),
    ("score", ("XX OO    ",), 1, "X to move completes the top row"),
    ("score", ("XOXXO    ",), -1, "O to move completes the middle column"),
    ("score", ("XXOO     ",), 1, "X on 0 and 1, O on 2 and 3: X wins by taking the centre"),
    ("score", ("X   O   X",), 0, "O holds the draw by taking a side"),
    ("score", ("         ",), 0, "perfect play from the empty board is a draw"),
]

EMPTY = " " * 9
CANONICAL_POSITIONS = 765  # the 5,478 reachable positions, up to rotation and reflection


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    symmetry.memo.clear()  # a board scored earlier must not answer for another
    board = list(args[0])
    result = getattr(symmetry, function_name)(board, *args[1:])
    ok = coursetest.matches(result, expected)
    assert ok, coursetest.wrong_answer(function_name, args, result, expected, why, memo=True)


@pytest.mark.parametrize("function_name", ["symmetries", "canonical", "score"])
@pytest.mark.parametrize("text", ["XOXXOO   ", "XX OO    ", "X   O   X"])
def test_board_is_left_unchanged(function_name, text):
    board = list(text)
    getattr(symmetry, function_name)(board)
    assert board == list(text), coursetest.board_changed(function_name, (text,), list(text), board)


def test_symmetries_are_new_lists():
    board = list("XO       ")
    result = symmetry.symmetries(board)
    assert type(result) is list and all(other is not board for other in result), (
        "symmetries(board) must return 8 new lists, none of them the board it was given: a caller that changes "
        "one of them must not change the board.\nTry this: start from list(board), and build each turn as a new list."
    )


def test_a_turned_board_is_looked_up_not_searched_again(monkeypatch):
    symmetry.memo.clear()
    symmetry.score(list("XO       "))
    original = symmetry.score
    calls = []

    def counting_score(board):
        calls.append("".join(board))
        return original(board)

    monkeypatch.setattr(symmetry, "score", counting_score)
    result = symmetry.score(list("       OX"))  # "XO       " turned twice: the same family
    assert result == 1 and len(calls) == 1, (
        f"After scoring 'XO       ', scoring it turned twice, '       OX', made {len(calls):,} calls to score (and "
        f"returned {coursetest.show(result)}); its canonical board is already in memo, so it should make 1 and "
        "return 1.\nTry this: at the very start of score, return memo[canonical(board)] when it is already there."
    )


def test_memo_holds_one_board_per_family():
    symmetry.memo.clear()
    result = symmetry.score(list(EMPTY))
    size = len(symmetry.memo)
    assert size == CANONICAL_POSITIONS, (
        f"After memo.clear() and score(board) of the empty board, memo holds {size:,} boards; it should hold "
        f"{CANONICAL_POSITIONS}: one for each family of reachable boards that are the same turned or flipped "
        f"(score returned {coursetest.show(result)}).\n"
        "Try this: key memo by canonical(board), not by the board itself (that gives 5,478), and write every "
        "board you score, finished boards too."
    )


def test_memo_is_keyed_by_the_canonical_board():
    symmetry.memo.clear()
    symmetry.score(list("XO       "))
    keys = list(symmetry.memo)
    wrong = [key for key in keys if type(key) is not str or symmetry.canonical(list(key)) != key]
    assert keys and not wrong, (
        f"memo has keys that are not canonical boards, e.g. {wrong[:1]!r}.\n"
        "Try this: memo[canonical(board)] = result, with canonical returning the smallest of the 8 as a string."
    )
