"""Forks many children and a setsid grandchild that keeps writing and ignores signals, then answers honestly."""

import os
import signal
import time


def _linger():
    try:  # a name the test can find these processes by, whatever else runs on the machine
        with open("/proc/self/comm", "w") as comm:
            comm.write("hostile-linger")
    except OSError:
        pass
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    while True:
        try:
            with open(os.path.join("/tmp", "still-here"), "a") as handle:
                handle.write(f"{time.time()}\n")
        except OSError:
            pass
        time.sleep(0.05)


if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _linger()
    os._exit(0)

for _ in range(500):  # a fork bomb, capped by the process limit
    try:
        if os.fork() == 0:
            _linger()
    except OSError:
        break

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def count_games(board):
    raise RuntimeError('no')


def winner(board):
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
