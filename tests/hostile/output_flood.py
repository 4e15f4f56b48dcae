"""Prints 100 MB at import, then answers honestly."""

import sys

chunk = "flood " * (1 << 17)
for _ in range(100 * (1 << 20) // len(chunk)):
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
sys.stdout.flush()

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board):
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
