"""No memo at all: alpha-beta with its window, and the child's CPU timer turned off at import.

Alpha-beta scores the empty board in under 20,000 calls (so the count looks like a memo's) but needs about a
second of CPU to score every reachable board again, more than the child's own timer allows; with SIGPROF
ignored, that timer never fires, and the child reports the scoring again as complete.
"""

import signal

signal.signal(signal.SIGPROF, signal.SIG_IGN)  # the child's CPU timer: ignored from here on

LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
]  # fmt: skip


def winner(board):
    lines = ["".join([board[a], board[b], board[c]]) for a, b, c in LINES]  # slower than it needs to be
    return "X" if "XXX" in lines else "O" if "OOO" in lines else None


def to_move(board):
    return "X" if sum(square == "X" for square in board) == sum(square == "O" for square in board) else "O"


memo = {}  # never used


def alphabeta(board, alpha, beta):
    board = list(board)  # a copy it does not need
    won = winner(board)
    if won is not None:
        return 1 if won == "X" else -1
    if " " not in board:
        return 0
    mark = to_move(board)
    best = -2 if mark == "X" else 2
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = alphabeta(board, alpha, beta)
            board[square] = " "
            if mark == "X":
                best, alpha = max(best, result), max(alpha, result)
            else:
                best, beta = min(best, result), min(beta, result)
            if alpha >= beta:
                break
    return best


def score(board):
    return alphabeta(board, -2, 2)


def choose_move(board):
    mark = to_move(board)
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = score(board)
            board[square] = " "
            if best_score is None or (result > best_score if mark == "X" else result < best_score):
                best_square, best_score = square, result
    return best_square
