"""Ctrl-C during `autograde grade`: the first one winds the batch down and says what is stored (exit 130, and the
same command grades the rest); a second one leaves at once."""

import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager

from autograder.grading import sandbox

INTERRUPTED = 130  # the shell's code for a command stopped by SIGINT


@contextmanager
def first_interrupt_sets(stop: threading.Event):
    """SIGINT sets stop (the batch winds down and says what is stored); a second one leaves at once, quietly."""

    def on_interrupt(signum, frame):
        if stop.is_set():
            sandbox.stop_all(wait=2.0)  # quietly, but not before every run is killed and removed
            os._exit(INTERRUPTED)
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        # After a first Ctrl-C every run is already stopped and the grader is leaving: a second one is ignored.
        # (Python's own handler would not do: the interpreter puts the default back while it shuts down, and a
        # Ctrl-C then would end it by the signal, with no exit code of ours.)
        signal.signal(signal.SIGINT, signal.SIG_IGN if stop.is_set() else previous)


def wind_down(pool: ThreadPoolExecutor, futures: dict, stored: int, students: int) -> int:
    """After Ctrl-C: stop every stage, let the workers see it, and say what is stored."""
    sandbox.stop_all()
    pool.shutdown(wait=False, cancel_futures=True)
    running = {future for future in futures if not future.done()}
    deadline = time.monotonic() + 5
    while running and time.monotonic() < deadline:
        running = wait(running, timeout=0.2)[1]
        if running:
            sandbox.stop_all()  # a stage that started just after the first call
    code = interrupted(stored, students)
    if running:  # a worker that does not end would hold the interpreter's exit: leave now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def interrupted(stored: int, students: int) -> int:
    print(
        f"\ninterrupted: {stored} of {students} submissions are graded and stored; "
        "run the same command again to grade the rest.",
        file=sys.stderr,
    )
    return INTERRUPTED
