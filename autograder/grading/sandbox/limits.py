"""What a run may use: the default CPU limit of a stage, the Limits of one run, the wall-clock backstop and hard
bound that go with a CPU limit, a student's wall-clock budget, the /tmp size.

The stage's CPU limit is one value, `autograde grade --time-limit` (DEFAULT_STAGE_SECONDS when not given), passed
down as it is: options -> the class loop -> grade_submission -> judge.grade_stage -> Limits, with no default of
its own on the way."""

from __future__ import annotations

from dataclasses import dataclass

# CPU seconds per stage, counted over all the stage's processes (--time-limit): the slowest honest answers (plain
# searches in slow Python) need about 10.
DEFAULT_STAGE_SECONDS = 60
TMPFS_BYTES = 64 << 20  # a run's private /tmp; without one, what it may write to the shared folders


@dataclass(frozen=True)
class Limits:
    cpu_seconds: float  # CPU time of all the run's processes together
    wall_seconds: float  # backstop for a run that sleeps or blocks (never decides one that computes)
    memory_bytes: int = 1 << 30  # all the run's processes together (cgroup), and RLIMIT_AS per process
    output_bytes: int = 256 << 10  # stdout+stderr kept; further output is read and discarded
    file_bytes: int = 16 << 20  # RLIMIT_FSIZE
    processes: int = 64  # processes of the whole run (cgroup pids), and RLIMIT_NPROC for the unprivileged uid
    wall_cap: float | None = None  # a hard wall-clock bound below hard_cap's (what is left of a student's budget)


# Past its backstop a run goes on only while it computes at least this many CPU seconds a second (so a run that
# mostly sleeps, with short bursts, is stopped as waiting); at that rate hard_cap() leaves it its whole CPU limit.
COMPUTING_RATE = 0.25
STUDENT_BACKSTOPS = 4  # a student's stages together get this many stage backstops of wall-clock time

# The grader's own runs of a few lines of trusted code (the sandbox's probes, `autograde doctor`), not a stage:
# they need milliseconds, far less than a stage's limit. A level's first trial run and the doctor's runs get a
# longer backstop: a machine may be slow to start the first one.
PROBE_LIMITS = Limits(cpu_seconds=10.0, wall_seconds=20.0)
PATIENT_PROBE_LIMITS = Limits(cpu_seconds=PROBE_LIMITS.cpu_seconds, wall_seconds=30.0)


def hard_cap(limits: Limits) -> float:
    """The wall-clock time after which a run is stopped whatever it does (no CPU trickle extends it).

    The backstop plus the time the CPU limit takes at COMPUTING_RATE: a run that computed at that rate or faster
    all along has used its whole CPU limit by then (420 s at DEFAULT_STAGE_SECONDS, 60, which has a 180 s backstop).
    """
    cap = limits.wall_seconds + limits.cpu_seconds / COMPUTING_RATE
    return cap if limits.wall_cap is None else max(0.0, min(cap, limits.wall_cap))


def student_budget(cpu_seconds: float) -> float:
    """Wall-clock seconds for all of one student's stages together, from the CPU limit per stage (--time-limit).

    720 s at DEFAULT_STAGE_SECONDS (60): more than 10 stages that each use their whole CPU limit need on a free
    core, far less than 10 stages that each sleep to their backstop (1,800 s) or trickle to their hard cap
    (4,200 s).
    """
    return STUDENT_BACKSTOPS * wall_backstop(cpu_seconds)


def wall_backstop(cpu_seconds: float) -> float:
    """The wall-clock limit that goes with a CPU limit: how long a run that sleeps or blocks may take.

    It never decides a run that computes: when it runs out the supervisor looks at whether the run is computing
    (COMPUTING_RATE) and, if so, lets it go on until its CPU time decides, up to hard_cap().
    """
    return max(cpu_seconds * 3, cpu_seconds + 30)
