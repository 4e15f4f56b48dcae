"""stop_all: one flag and one pipe that every supervisor's select() watches, so each notices at once."""

from __future__ import annotations

import os
import threading
import time

stop_requested = threading.Event()
stop_fd, _stop_w = os.pipe()
os.set_blocking(_stop_w, False)
active_runs = [0]  # runs in progress; changed under active_runs_lock, read without it (by stop_all's wait)
active_runs_lock = threading.Lock()


def stop_all(wait: float = 0.0) -> None:
    """Kill every run in progress (status "cancelled") and make every later run return "cancelled" at once.

    Safe from a signal handler: it takes no lock, only sets a flag and makes a pipe readable. With wait, it
    also gives the supervisors up to that many seconds to kill their runs and remove them (for a caller about
    to exit: a process that exits at once would leave its runs behind).
    """
    stop_requested.set()
    try:
        os.write(_stop_w, b"x")
    except (BlockingIOError, OSError):
        pass  # already readable
    deadline = time.monotonic() + wait
    while active_runs[0] and time.monotonic() < deadline:
        time.sleep(0.01)


class Stopped(Exception):
    """stop_all() was called while a run waited for a uid of the pool."""
