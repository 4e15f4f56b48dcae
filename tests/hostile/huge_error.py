"""Raises an exception whose class name is 30 million characters long and returns text that cannot be encoded."""

Huge = type("E" * 30_000_000, (Exception,), {})


def winner(board):
    raise Huge("a message with a lone surrogate \udc80, an escape \x1b[31m, a bidi override \u202e and\nlines" * 50)


def to_move(board):
    return "X\udc80" if board.count("X") == board.count("O") else "O\ud800"
