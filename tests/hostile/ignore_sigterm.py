"""Ignores SIGTERM and every exception, and loops forever when asked who has won."""

import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def winner(board):
    while True:
        try:
            while True:
                pass
        except BaseException:  # noqa: B036 - swallowing the grader's alarm is the point
            continue


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
