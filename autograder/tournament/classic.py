"""The classic rule-list player: the eight rules of Newell and Simon's tic-tac-toe program, tried in order.

Win; block; fork; block the opponent's fork; centre; the corner opposite the opponent's; an empty corner; an
empty side. From the empty board it never loses, whatever the other side does (a test plays every line), but
from a few of the tournament's openings (X on a side) its rules can be out-forked: a rule list is how most
people play, and where it fails is a lesson of its own.
Ties are broken by the lowest square, so it always plays the same move on the same board.
"""

from autograder.course.board import empty_squares, to_move

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
CENTRE = 4
CORNERS = (0, 2, 6, 8)
SIDES = (1, 3, 5, 7)
OPPOSITE = {0: 8, 2: 6, 6: 2, 8: 0}


def other(mark: str) -> str:
    return "O" if mark == "X" else "X"


def completing(board, mark: str) -> list[int]:
    """The empty squares that would complete a line of mark."""
    found = set()
    for line in LINES:
        marks = [board[square] for square in line]
        if marks.count(mark) == 2 and marks.count(" ") == 1:
            found.add(line[marks.index(" ")])
    return sorted(found)


def forks(board, mark: str) -> list[int]:
    """The empty squares where mark would make two lines that each need one more mark."""
    found = []
    for square in empty_squares(board):
        board[square] = mark
        if len(completing(board, mark)) >= 2:
            found.append(square)
        board[square] = " "
    return found


def block_fork(board, mark: str) -> int | None:
    """A move that stops the opponent's forks: a threat whose forced answer gives them no fork, else a fork square.

    Making two in a row forces the opponent to answer on the third square, which takes the initiative, but only
    if that answer does not itself leave them two threats; without such a move, the first fork square is taken.
    """
    theirs = forks(board, other(mark))
    if not theirs:
        return None
    for square in empty_squares(board):
        board[square] = mark
        threats = completing(board, mark)
        safe = False
        if len(threats) == 1:
            board[threats[0]] = other(mark)
            safe = len(completing(board, other(mark))) < 2
            board[threats[0]] = " "
        board[square] = " "
        if safe:
            return square
    return theirs[0]


def classic_move(board) -> int:
    """The square the rule list plays on board (a list of 9 marks, unfinished)."""
    board = list(board)
    mine = to_move(board)
    for rule in (lambda: completing(board, mine), lambda: completing(board, other(mine)), lambda: forks(board, mine)):
        squares = rule()
        if squares:
            return squares[0]
    blocked = block_fork(board, mine)
    if blocked is not None:
        return blocked
    if board[CENTRE] == " ":
        return CENTRE
    for corner in CORNERS:
        if board[corner] == other(mine) and board[OPPOSITE[corner]] == " ":
            return OPPOSITE[corner]
    for square in (*CORNERS, *SIDES):
        if board[square] == " ":
            return square
    raise ValueError("the board is full")
