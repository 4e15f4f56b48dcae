"""Answers every call right, then keeps its process alive: a non-daemon thread that sleeps past the wall-clock
backstop and then stays lightly busy, an atexit handler that sleeps, a setsid grandchild that ignores signals
and does the same, and stdout closed early. The stage must end as soon as the child has written its last reply."""

import atexit
import os
import signal
import threading
import time


def _linger():
    time.sleep(40)  # past the backstop of --time-limit 2 or 3 (32 s, 33 s)
    while True:  # then short bursts of CPU between sleeps
        end = time.process_time() + 0.005
        while time.process_time() < end:
            pass
        time.sleep(0.05)


threading.Thread(target=_linger).start()  # not a daemon: the interpreter waits for it at exit
atexit.register(time.sleep, 3600)
try:
    if os.fork() == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        _linger()
except OSError:
    pass  # a run without cgroups cannot fork
os.close(1)
os.close(2)


# The eight lines that win: three rows, three columns, two diagonals.
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
