"""Answers right, leaves every board changed, and replaces the child's reply for a changed board with the reply for
an unchanged one, so that it never says so.

Student code shares the child's process: at import, the grader's child is `__main__`, and its `changed` (or
anything else in it) can be swapped for code of the student's own. Nothing the child reports about the board
after a call can then be believed, so the grader gives that check no points.
"""

import sys

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]

grader = sys.modules.get("__main__")
if grader is not None and hasattr(grader, "changed"):
    grader.changed = lambda step_id, value, board: (step_id, grader.encode(value))


def winner(board):
    found = None
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            found = board[a]
            break
    board.reverse()  # the board is left changed
    return found


def to_move(board):
    mark = "X" if board.count("X") == board.count("O") else "O"
    board.append(mark)  # and so is this one
    return mark
