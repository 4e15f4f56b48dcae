"""Run one untrusted Python child under the strongest isolation this machine offers, with limits for the whole run.

Three levels, chosen once by detect():

* "bubblewrap": the child runs in fresh user, pid, net, ipc, uts and mount namespaces (`bwrap --unshare-all`)
  that see only the Python runtime (read-only), its own submission folder (read-only), a small private tmpfs
  /tmp and a minimal /proc and /dev. When the run ends the pid namespace dies and takes every process with it.
* "rlimits" (root only): the fallback when bubblewrap is missing or does not work. The child runs directly, in a
  folder only it can read, as its own unprivileged uid, in fresh mount, ipc, net and uts namespaces where
  `unshare` works (a private 64 MiB tmpfs over every folder all users may write to, no network).
* "none" (not root, only when asked for with AUTOGRADE_ISOLATION=none): the child runs as the grader's own uid,
  with no isolation from the grader at all; only the limits apply.

As root, each concurrent run gets its own unprivileged uid from a pool (61000-61063). Whole-run limits come from
cgroups (v1 or v2, whichever the machine mounts with the cpu, memory and pids controllers): each run gets its own
cgroup, entered by a tiny /bin/sh wrapper before anything else runs, with the memory and process limits of the
whole run, the same CPU weight as every other run (so forking busy processes in sessions of their own wins no
CPU), and CPU accounting the parent reads while it supervises: the run is stopped when all its processes together
used limits.cpu_seconds. Without cgroups a run cannot fork at all (RLIMIT_NPROC 0 right before Python starts), so
the per-process limits are the whole run's. The wall clock is only a backstop for code that sleeps or blocks,
with a hard bound (limits.hard_cap) that no trickle of CPU time extends; a run also ends as soon as its reader
(protocol.ReplyReader) has the child's last line, every process it left behind killed at once.
When a run ends, every process it started goes with it (the cgroup, the pid namespace under bubblewrap, a
`kill -KILL -1` as the run's uid at the rlimits level), and so does whatever its uid left behind (files in the
shared folders, SysV IPC objects). The child gets stdin from a file, stdout+stderr on one capped pipe and a reply
pipe on file descriptor 3, and, when its reader has more to send while it runs (outbox.py), a pipe on 4.

Environment: AUTOGRADE_ISOLATION=bubblewrap|rlimits|none forces a level, AUTOGRADE_CGROUPS=v1|v2|none forces the
cgroup version (none: no whole-run accounting, and runs cannot fork), AUTOGRADE_CHILD_PYTHON chooses the
interpreter the child runs under.

The package, one module per idea, lowest first: host (the machine), limits and run_result (what a run may use, how it
ended), stopping (stop_all), wrapper (the /bin/sh wrapper), cgroups, folders (run folders), uids (the uid pool),
fallback (the rlimits level's namespaces and leftovers), bubblewrap, isolation (the levels, detect_with), outbox
(what a run is sent while it runs), supervisor (watching one child) and runner (run() and detect()). Callers use
the names below.
"""

from autograder.grading.sandbox.bubblewrap import bwrap_version
from autograder.grading.sandbox.cgroups import cgroups_in_use
from autograder.grading.sandbox.fallback import hide, shared_places
from autograder.grading.sandbox.host import child_magic, child_python, is_root
from autograder.grading.sandbox.isolation import Isolation
from autograder.grading.sandbox.keyrings import spawning_thread
from autograder.grading.sandbox.limits import (
    DEFAULT_STAGE_SECONDS,
    PATIENT_PROBE_LIMITS,
    PROBE_LIMITS,
    TMPFS_BYTES,
    Limits,
    hard_cap,
    student_budget,
    wall_backstop,
)
from autograder.grading.sandbox.outbox import MORE_FD, Outbox
from autograder.grading.sandbox.run_result import RunResult
from autograder.grading.sandbox.runner import detect, run
from autograder.grading.sandbox.stopping import stop_all
from autograder.grading.sandbox.uids import UID_BASE, UID_COUNT

__all__ = [
    "DEFAULT_STAGE_SECONDS",
    "PATIENT_PROBE_LIMITS",
    "PROBE_LIMITS",
    "TMPFS_BYTES",
    "UID_BASE",
    "UID_COUNT",
    "Isolation",
    "Limits",
    "MORE_FD",
    "Outbox",
    "RunResult",
    "bwrap_version",
    "cgroups_in_use",
    "child_magic",
    "child_python",
    "detect",
    "hard_cap",
    "hide",
    "is_root",
    "run",
    "shared_places",
    "spawning_thread",
    "stop_all",
    "student_budget",
    "wall_backstop",
]
