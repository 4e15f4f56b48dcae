"""Plain minimax that calls itself alphabeta, with the child's CPU timer switched off at import (08_alpha_beta).

The prune experiment's child stops its own scoring at PRUNE_SECONDS of its CPU time; with SIGPROF ignored it
never does, and the child reports the empty board and the nine openings answered, right, after seconds.
"""

import signal

signal.signal(signal.SIGPROF, signal.SIG_IGN)

# Given, complete, from stage 1 (01_rules).
LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
]  # fmt: skip


def winner(board):
    """Return 'X' or 'O' if that player has three in a line on board, else None."""
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    """Return the player whose turn it is: 'X' when both have played equally often, else 'O'."""
    if board.count("X") == board.count("O"):
        return "X"
    return "O"


def alphabeta(board, alpha, beta):
    """Return board's minimax score (1, 0 or -1) when it lies strictly between alpha and beta.

    When the score is alpha or less, return any value that is alpha or less; when it is beta or more, any
    value that is beta or more. Try the moves in square order, 0 to 8.
    """
    won = winner(board)
    if won is not None:
        return 1 if won == "X" else -1
    if " " not in board:
        return 0
    mark = to_move(board)
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            value = alphabeta(board, alpha, beta)
            board[square] = " "
            if mark == "X":
                alpha = max(alpha, value)
            else:
                beta = min(beta, value)
    return alpha if mark == "X" else beta


def score(board):
    """Return 1, 0 or -1 like minimax's score, found by alphabeta with a window that holds every score."""
    return alphabeta(board, -2, 2)


def choose_move(board):
    """Return an empty square that is best for the player to move."""
    mark = to_move(board)
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = score(board)
            board[square] = " "
            better = best_score is None or (result > best_score if mark == "X" else result < best_score)
            if better:
                best_square, best_score = square, result
    return best_square
