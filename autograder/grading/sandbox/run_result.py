"""How a run ended: the RunResult the supervisor returns, and the sentences that explain a status."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from autograder.grading.sandbox.limits import Limits


@dataclass
class RunResult:
    # "exited" | "done" | "timeout" | "waiting" | "killed" | "output-limit" | "cancelled" | "sandbox-error"
    # ("done": the reader given to run() had read all it needs, e.g. the child's last line, and the rest was killed)
    status: str
    returncode: int | None  # exit code, or minus the signal number when killed by a signal
    reply: bytes  # what the child wrote to file descriptor 3 (at most supervisor.REPLY_CAP; b"" with a reader)
    output: bytes  # stdout+stderr, at most limits.output_bytes
    wall_seconds: float
    cpu_seconds: float  # all the run's processes (the cgroup's); without cgroups the reaped child's (it cannot fork)
    detail: str  # one sentence explaining a non-"exited" status (or noting discarded output)


WALL_CAP = "the hard wall-clock bound"  # how the detail of a run stopped by it begins


def done_detail() -> str:
    return "its reply was complete, so whatever it still ran was stopped"


def cpu_detail(limits: Limits) -> str:
    return f"used the CPU time limit of {limits.cpu_seconds:g} s (all its processes together)"


def memory_detail(limits: Limits) -> str:
    return f"killed: its processes together reached the memory limit of {limits.memory_bytes / (1 << 20):g} MiB"


def signal_detail(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if number == signal.SIGKILL:
        return f"killed by {name} (out of memory, or the CPU limit of a child process)"
    return f"killed by {name}"
