"""Allocates memory until something gives."""

blocks = []
while True:
    blocks.append(bytearray(256 << 20))


def winner(board):
    return None


def to_move(board):
    return "X"
