"""What a run may use: the Limits of one run, the wall-clock backstop that goes with a CPU limit, the /tmp size."""

from __future__ import annotations

from dataclasses import dataclass

TMPFS_BYTES = 64 << 20  # a run's private /tmp; without one, what it may write to the shared folders


@dataclass(frozen=True)
class Limits:
    cpu_seconds: float = 10.0  # CPU time of all the run's processes together
    wall_seconds: float = 20.0  # backstop for a run that sleeps or blocks (never decides one that computes)
    memory_bytes: int = 1 << 30  # all the run's processes together (cgroup), and RLIMIT_AS per process
    output_bytes: int = 256 << 10  # stdout+stderr kept; further output is read and discarded
    file_bytes: int = 16 << 20  # RLIMIT_FSIZE
    processes: int = 64  # processes of the whole run (cgroup pids), and RLIMIT_NPROC for the unprivileged uid


def wall_backstop(cpu_seconds: float) -> float:
    """The wall-clock limit that goes with a CPU limit: how long a run that sleeps or blocks may take.

    It never decides a run that computes: when it runs out the supervisor looks at whether the run is computing
    and, if so, lets it go on (up to supervisor._CAP_FACTOR times this) until its CPU time decides.
    """
    return max(cpu_seconds * 3, cpu_seconds + 30)
