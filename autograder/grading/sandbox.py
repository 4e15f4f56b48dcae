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
the per-process limits are the whole run's. The wall clock is only a backstop for code that sleeps or blocks.
When a run ends, every process it started goes with it (the cgroup, the pid namespace under bubblewrap, a
`kill -KILL -1` as the run's uid at the rlimits level), and so does whatever its uid left behind (files in the
shared folders, SysV IPC objects). The child gets stdin from a file, stdout+stderr on one capped pipe and a reply
pipe on file descriptor 3.

Environment: AUTOGRADE_ISOLATION=bubblewrap|rlimits|none forces a level, AUTOGRADE_CGROUPS=v1|v2|none forces the
cgroup version (none: no whole-run accounting, and runs cannot fork), AUTOGRADE_CHILD_PYTHON chooses the
interpreter the child runs under.
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import fcntl
import hashlib
import math
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

UID_BASE = 61000
UID_COUNT = 64
REPLY_CAP = 64 << 20
TMPFS_BYTES = 64 << 20
SANDBOX_DIR = "/submission"  # where the submission folder appears inside bubblewrap
RUNS_DIR = "/run/autograde-runs"  # as root: run folders live outside /tmp, which a run gets a private copy of
_DRAIN_SECONDS = 1.0  # after the child ends, how long to wait for the pipes to report end-of-file
_CHUNK = 1 << 16
_TICK = 0.1  # the longest the supervisor sleeps between looks at a running child (stop_all, CPU, memory)
_WINDOW = 1.0  # the wall-clock backstop looks at this much recent history to tell computing from waiting
_COMPUTING_RATE = 0.05  # CPU seconds per second above which a run counts as computing
_DISK_TICK = 0.05  # without a private /tmp: how often the run's bytes in the shared folders are counted
_CAP_FACTOR = 4  # a run that is still computing is given up to this many times its wall-clock backstop
_BWRAP_PROCESSES = 1  # bwrap's own process in a run (its monitor; the child is the namespace's pid 1)
_WRAPPER_FAILED = 125  # exit code of the /bin/sh wrapper when it could not enter the cgroup or mount /tmp


@dataclass(frozen=True)
class Limits:
    cpu_seconds: float = 10.0  # CPU time of all the run's processes together
    wall_seconds: float = 20.0  # backstop for a run that sleeps or blocks (never decides one that computes)
    memory_bytes: int = 1 << 30  # all the run's processes together (cgroup), and RLIMIT_AS per process
    output_bytes: int = 256 << 10  # stdout+stderr kept; further output is read and discarded
    file_bytes: int = 16 << 20  # RLIMIT_FSIZE
    processes: int = 64  # processes of the whole run (cgroup pids), and RLIMIT_NPROC for the unprivileged uid


@dataclass
class RunResult:
    # "exited" | "timeout" | "waiting" | "killed" | "output-limit" | "cancelled" | "sandbox-error"
    status: str
    returncode: int | None  # exit code, or minus the signal number when killed by a signal
    reply: bytes  # what the child wrote to file descriptor 3 (at most REPLY_CAP)
    output: bytes  # stdout+stderr, at most limits.output_bytes
    wall_seconds: float
    cpu_seconds: float  # all the run's processes (the cgroup's); without cgroups the reaped child's (it cannot fork)
    detail: str  # one sentence explaining a non-"exited" status (or noting discarded output)


def wall_backstop(cpu_seconds: float) -> float:
    """The wall-clock limit that goes with a CPU limit: how long a run that sleeps or blocks may take.

    It never decides a run that computes: when it runs out the supervisor looks at whether the run is computing
    and, if so, lets it go on (up to _CAP_FACTOR times this) until its CPU time decides.
    """
    return max(cpu_seconds * 3, cpu_seconds + 30)


# ---------------------------------------------------------------------------------------------------------------
# The machine: tools, interpreter, privileges


def _tool(name: str) -> str | None:
    for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def is_root() -> bool:
    return os.geteuid() == 0


def _world_readable(path: str) -> bool:
    """Can any uid reach and run this file? (Every parent folder o+x, the file o+rx.)"""
    path = os.path.realpath(path)
    try:
        if os.stat(path).st_mode & 0o005 != 0o005:
            return False
        parent = os.path.dirname(path)
        while parent != "/":
            if not os.stat(parent).st_mode & 0o001:
                return False
            parent = os.path.dirname(parent)
    except OSError:
        return False
    return True


_cache_lock = threading.RLock()
_python: tuple[str, str] | None = None
_isolation: Isolation | None = None


def child_python() -> tuple[str, str]:
    """(interpreter, its sys.base_prefix) for children: it must be usable by an unprivileged uid.

    The grader's own interpreter may live under /root (mode 0700) and link libpython by an absolute path, so
    the system python3 is preferred; the child needs only the standard library.
    """
    global _python
    with _cache_lock:
        if _python is None:
            candidates = [os.environ.get("AUTOGRADE_CHILD_PYTHON", ""), "/usr/bin/python3", sys.executable]
            chosen = next((c for c in candidates if c and _world_readable(c)), None)
            if chosen is None and not is_root():
                chosen = sys.executable  # not switching uid, so our own interpreter is readable
            if chosen is None:
                raise RuntimeError(
                    "no Python interpreter readable by an unprivileged user (set AUTOGRADE_CHILD_PYTHON)"
                )
            chosen = os.path.realpath(chosen)
            prefix = subprocess.run(
                [chosen, "-I", "-S", "-c", "import sys; print(sys.base_prefix)"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout.strip()
            _python = (chosen, prefix)
        return _python


def bwrap_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown version"
    return out.strip() or "unknown version"


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("ascii", "replace")


# ---------------------------------------------------------------------------------------------------------------
# stop_all: one flag and one pipe that every supervisor's select() watches, so each notices at once.

_stopping = threading.Event()
_stop_r, _stop_w = os.pipe()
os.set_blocking(_stop_w, False)
_active = [0]  # runs in progress; changed under _active_lock, read without it (by stop_all's wait)
_active_lock = threading.Lock()


def stop_all(wait: float = 0.0) -> None:
    """Kill every run in progress (status "cancelled") and make every later run return "cancelled" at once.

    Safe from a signal handler: it takes no lock, only sets a flag and makes a pipe readable. With wait, it
    also gives the supervisors up to that many seconds to kill their runs and remove them (for a caller about
    to exit: a process that exits at once would leave its runs behind).
    """
    _stopping.set()
    try:
        os.write(_stop_w, b"x")
    except (BlockingIOError, OSError):
        pass  # already readable
    deadline = time.monotonic() + wait
    while _active[0] and time.monotonic() < deadline:
        time.sleep(0.01)


def _cancelled(started: float, detail: str = "grading was stopped before this run started") -> RunResult:
    return RunResult("cancelled", None, b"", b"", time.monotonic() - started, 0.0, detail)


# ---------------------------------------------------------------------------------------------------------------
# Cgroups: one folder per run (v1: one in each of the cpu, cpuacct, memory, pids and freezer hierarchies; v2: one
# in the unified hierarchy) under a parent folder "autograde" below the grader's own cgroup where it may write.

_V1_NEEDED = ("cpu", "cpuacct", "memory", "pids")
_V2_NEEDED = ("cpu", "memory", "pids")
_PARENT = "autograde"
# The grader's runs together weigh as much as 8 busy sessions elsewhere: on a loaded machine grading keeps going at
# speed (grades do not depend on it, CPU time decides), and inside, every run weighs the same.
_PARENT_V1_SHARES = 8192
_PARENT_V2_WEIGHT = 800
_RUN_V1_SHARES = 1024  # every run the same, so a run that forks busy processes gets no more CPU than one that doesn't
_RUN_V2_WEIGHT = 100
_GROUP_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)-(\d+)$")  # pid namespace, grader pid, its start time, sequence


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """(mount point, root within its filesystem, filesystem type, super options) from /proc/self/mountinfo."""
    found = []
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return found
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        unescape = lambda text: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)  # noqa: E731
        found.append((unescape(fields[4]), unescape(fields[3]), tail[0], tail[2].split(",")))
    return found


def _own_cgroups() -> dict[str, str]:
    """Hierarchy key ("0" for v2, else the comma-joined controllers) -> this process's path in it."""
    own = {}
    try:
        for line in _read("/proc/self/cgroup").splitlines():
            number, controllers, path = line.split(":", 2)
            own["0" if number == "0" else controllers] = path
    except (OSError, ValueError):
        pass
    return own


def _start_time(pid: int) -> str | None:
    try:
        return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


class _Tree:
    """Where this grader's run cgroups go, and how to create, read, kill and remove them."""

    def __init__(self, version: str, parents: list[str], roles: dict[str, str], controllers: frozenset[str]):
        self.version = version
        self.parents = parents  # distinct parent folders; a run's folder has the same name in each
        self.roles = roles  # "cpu", "cpuacct", "memory", "pids", "freezer" (v1) -> which parent; v2: all one
        self.controllers = controllers
        self._seq = 0
        self._lock = threading.Lock()
        self._pending: set[str] = set()  # run folders that were still busy when their run ended
        self._prefix = ("", -1)

    def prefix(self) -> str:
        pid = os.getpid()
        if self._prefix[1] != pid:  # computed again after a fork
            namespace = os.stat("/proc/self/ns/pid").st_ino
            self._prefix = (f"{namespace}-{pid}-{_start_time(pid)}-", pid)
        return self._prefix[0]

    def create(self, limits: Limits, extra_processes: int) -> _Group:
        with self._lock:
            self._seq += 1
            name = f"{self.prefix()}{self._seq}"
            pending = list(self._pending)
        for old in pending:
            if _Group(self, old).remove(wait=0.0):
                with self._lock:
                    self._pending.discard(old)
        group = _Group(self, name)
        group.make(limits, extra_processes)
        return group

    def leftovers(self) -> list[str]:
        """Run folders of graders that are gone (same pid namespace, pid dead or reused): theirs to remove."""
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
        names = set()
        for parent in self.parents:
            try:
                names.update(entry.name for entry in os.scandir(parent) if entry.is_dir(follow_symlinks=False))
            except OSError:
                pass
        found = []
        for name in sorted(names):
            match = _GROUP_NAME.match(name)
            if match and match.group(1) == namespace and _start_time(int(match.group(2))) != match.group(3):
                found.append(name)
        return found

    def remove_leftovers(self) -> None:
        for name in self.leftovers():
            _Group(self, name).remove(wait=1.0)

    def forget_pending(self) -> None:
        for name in list(self._pending):
            _Group(self, name).remove(wait=0.5)


class _Group:
    """One run's cgroup."""

    def __init__(self, tree: _Tree, name: str):
        self.tree = tree
        self.name = name
        self.dirs = [os.path.join(parent, name) for parent in tree.parents]
        role = {key: os.path.join(parent, name) for key, parent in tree.roles.items()}
        if tree.version == "v1":
            self.usage_file = os.path.join(role["cpuacct"], "cpuacct.usage")
            self.oom_file = os.path.join(role["memory"], "memory.oom_control") if "memory" in role else None
            self.kill_file = None
            self.freeze = (
                (os.path.join(role["freezer"], "freezer.state"), "FROZEN", "THAWED") if "freezer" in role else None
            )
        else:
            folder = self.dirs[0]
            self.usage_file = os.path.join(folder, "cpu.stat")
            self.oom_file = os.path.join(folder, "memory.events") if "memory" in tree.controllers else None
            self.kill_file = os.path.join(folder, "cgroup.kill")
            self.freeze = (os.path.join(folder, "cgroup.freeze"), "1", "0")
        self.procs_files = [os.path.join(folder, "cgroup.procs") for folder in self.dirs]
        # What the wrapper writes "0" (itself) to. On v1, `tasks`: a thread moving itself skips the kernel's global
        # lock for moving whole processes, whose taking waits for an RCU grace period (measured 15 ms a run here).
        # The wrapper has one thread, so that moves the whole process. v2 has only cgroup.procs for domain cgroups.
        leaf = "tasks" if tree.version == "v1" else "cgroup.procs"
        self.enter_files = [os.path.join(folder, leaf) for folder in self.dirs]

    def make(self, limits: Limits, extra_processes: int) -> None:
        made = []
        try:
            for folder in self.dirs:
                os.mkdir(folder)
                made.append(folder)
            self._limit(limits, extra_processes)
        except BaseException:
            for folder in reversed(made):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise
        if self.kill_file and not os.path.exists(self.kill_file):
            self.kill_file = None  # before Linux 5.14: freeze and kill instead

    def _limit(self, limits: Limits, extra_processes: int) -> None:
        role = {key: os.path.join(parent, self.name) for key, parent in self.tree.roles.items()}
        memory = str(limits.memory_bytes)
        pids = str(limits.processes + extra_processes)
        if self.tree.version == "v1":
            _write(os.path.join(role["memory"], "memory.limit_in_bytes"), memory)
            swap = os.path.join(role["memory"], "memory.memsw.limit_in_bytes")
            if os.path.exists(swap):  # memory plus swap: swapping out is no way around the limit
                _write(swap, memory)
            _write(os.path.join(role["pids"], "pids.max"), pids)
            _write(os.path.join(role["cpu"], "cpu.shares"), str(_RUN_V1_SHARES))
            return
        folder = self.dirs[0]
        if "memory" in self.tree.controllers:
            _write(os.path.join(folder, "memory.max"), memory)
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if os.path.exists(os.path.join(folder, name)):
                    _write(os.path.join(folder, name), value)
        if "pids" in self.tree.controllers:
            _write(os.path.join(folder, "pids.max"), pids)
        if "cpu" in self.tree.controllers:
            _write(os.path.join(folder, "cpu.weight"), str(_RUN_V2_WEIGHT))

    def cpu_seconds(self) -> float:
        try:
            text = _read(self.usage_file)
        except OSError:
            return 0.0
        if self.tree.version == "v1":
            return int(text) / 1e9
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def oom_kills(self) -> int:
        if self.oom_file is None:
            return 0
        try:
            for line in _read(self.oom_file).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def pids(self) -> list[int]:
        # One list is enough: the run's processes are in all its folders (a process cannot move itself).
        try:
            return [int(pid) for pid in _read(self.procs_files[-1]).split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        """SIGKILL every process of the run: one write on v2 (cgroup.kill); else freeze, kill the pids, thaw."""
        if self.kill_file:
            try:
                _write(self.kill_file, "1")
                return
            except OSError:
                pass
        pids = self.pids()
        if not pids:
            return
        frozen = self._set_frozen(True)
        try:
            for _ in range(3):
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                pids = self.pids() if not frozen else []
                if not pids:
                    break
        finally:
            if frozen:
                self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> bool:
        if self.freeze is None:
            return False
        path, on, off = self.freeze
        try:
            _write(path, on if frozen else off)
            if frozen and self.tree.version == "v1":
                for _ in range(100):  # FREEZING until every task stopped
                    if _read(path).strip() == "FROZEN":
                        break
                    time.sleep(0.001)
            return True
        except OSError:
            return False

    def remove(self, wait: float = 1.0) -> bool:
        """Kill what is left and remove the folders; a folder still busy after `wait` s is retried later."""
        deadline = time.monotonic() + wait
        remaining = list(self.dirs)
        while True:
            busy = []
            for folder in remaining:
                try:
                    os.rmdir(folder)
                except FileNotFoundError:
                    pass
                except OSError:  # EBUSY while processes are still dying
                    busy.append(folder)
            remaining = busy
            if not remaining:
                return True
            if time.monotonic() >= deadline:
                with self.tree._lock:
                    self.tree._pending.add(self.name)
                return False
            self.kill()
            time.sleep(0.002)


_V1_KNOWN = frozenset((*_V1_NEEDED, "freezer"))


def _v1_tree(mounts, own, forced: bool) -> tuple[_Tree | None, str]:
    own_paths = {frozenset(key.split(",")) & _V1_KNOWN: path for key, path in own.items() if key != "0"}
    where: dict[str, tuple[str, str]] = {}  # controller -> (mount point, the grader's own folder in that mount)
    for point, root, fstype, options in mounts:
        controllers = frozenset(options) & _V1_KNOWN
        if fstype != "cgroup" or not controllers or controllers & where.keys():
            continue
        mine = own_paths.get(controllers, "/")
        if root == "/":
            inside = mine
        elif mine == root or mine.startswith(root.rstrip("/") + "/"):
            inside = mine[len(root) :]
        else:
            inside = "/"  # the grader's cgroup is not visible in this mount
        for controller in controllers:
            where[controller] = (point, os.path.join(point, inside.lstrip("/")).rstrip("/"))
    missing = [c for c in _V1_NEEDED if c not in where]
    if missing:
        return None, f"cgroup v1 lacks the {', '.join(missing)} controller{'s' * (len(missing) > 1)}"
    by_point: dict[str, str] = {}
    roles: dict[str, str] = {}
    for controller in sorted(where, key=lambda c: c == "freezer"):
        point, mine = where[controller]
        if point not in by_point:
            for base in dict.fromkeys((mine, point)):  # under the grader's own cgroup, else the hierarchy's root
                try:
                    os.makedirs(os.path.join(base, _PARENT), exist_ok=True)
                    by_point[point] = os.path.join(base, _PARENT)
                    break
                except OSError:
                    continue
        if point in by_point:
            roles[controller] = by_point[point]
        elif controller != "freezer":  # optional: without it, kill lists the pids a few times
            return None, f"cannot create a cgroup in {point} ({'not root' if not is_root() else 'refused'})"
    try:
        _write(os.path.join(roles["cpu"], "cpu.shares"), str(_PARENT_V1_SHARES))
    except OSError as error:
        if forced:
            return None, f"cannot set the CPU weight of {roles['cpu']}: {error.strerror}"
    return _Tree("v1", list(dict.fromkeys(roles.values())), roles, frozenset(roles)), ""


def _v2_tree(mounts, own, needed: tuple[str, ...]) -> tuple[_Tree | None, str]:
    point = next((p for p, root, fstype, _ in mounts if fstype == "cgroup2"), None)
    if point is None:
        return None, "cgroup v2 is not mounted"
    try:
        available = set(_read(os.path.join(point, "cgroup.controllers")).split())
    except OSError:
        return None, f"cannot read {point}/cgroup.controllers"
    missing = [c for c in needed if c not in available]
    if missing:
        return None, f"cgroup v2 at {point} lacks the {', '.join(missing)} controller{'s' * (len(missing) > 1)}"
    enable = " ".join(f"+{c}" for c in needed)
    mine = own.get("0", "/")
    for base in dict.fromkeys((os.path.join(point, mine.lstrip("/")).rstrip("/"), point)):
        parent = os.path.join(base, _PARENT)
        try:
            if enable:
                # A cgroup holding processes cannot pass controllers down (no internal processes), unless the root.
                _write(os.path.join(base, "cgroup.subtree_control"), enable)
            os.makedirs(parent, exist_ok=True)
            if enable:
                _write(os.path.join(parent, "cgroup.subtree_control"), enable)
            if "cpu" in needed:
                _write(os.path.join(parent, "cpu.weight"), str(_PARENT_V2_WEIGHT))
        except OSError:
            continue
        return _Tree("v2", [parent], {c: parent for c in ("cpu", "cpuacct", "memory", "pids")}, frozenset(needed)), ""
    return None, f"cannot create a cgroup with the {', '.join(needed)} controllers under {point}"


_tree: _Tree | None = None
_tree_reason = ""
_tree_ready = False


def _cgroup_tree(fresh: bool = False) -> tuple[_Tree | None, str]:
    """This machine's cgroups for runs (set up once, leftovers of dead graders removed), or None and why not."""
    global _tree, _tree_reason, _tree_ready
    with _cache_lock:
        if _tree_ready and not fresh:
            return _tree, _tree_reason
        forced = os.environ.get("AUTOGRADE_CGROUPS", "").strip().lower()
        tree, reason = None, ""
        if forced == "none":
            reason = "AUTOGRADE_CGROUPS=none"
        elif forced not in ("", "v1", "v2"):
            raise RuntimeError(f"AUTOGRADE_CGROUPS={forced!r}: use v1, v2 or none")
        else:
            mounts, own = _mounts(), _own_cgroups()
            attempts = {
                "v1": lambda: _v1_tree(mounts, own, forced == "v1"),
                "v2": lambda: _v2_tree(mounts, own, _V2_NEEDED),
            }
            order = [forced] if forced else ["v2", "v1"]  # v2 only when it holds the controllers
            reasons = []
            for version in order:
                try:
                    tree, why = attempts[version]()
                except OSError as error:
                    tree, why = None, f"cgroup {version}: {error.strerror or error}"
                if tree is not None:
                    why = _probe(tree)
                    if not why:
                        break
                    tree = None
                reasons.append(why)
            if tree is None:
                reason = "; ".join(reasons)
                if forced:
                    raise RuntimeError(f"AUTOGRADE_CGROUPS={forced} but it cannot be used here: {reason}")
        if _tree is not None and _tree is not tree:
            _tree.forget_pending()
        _tree, _tree_reason, _tree_ready = tree, reason, True
        return _tree, _tree_reason


def _probe(tree: _Tree) -> str:
    """Create a run cgroup, put a real process in it the way runs are, read its CPU time, remove it ("" if fine)."""
    try:
        tree.remove_leftovers()
        group = tree.create(Limits(), 0)
    except OSError as error:
        return f"cgroup {tree.version}: cannot create a run's cgroup ({error.strerror or error})"
    try:
        token = os.urandom(8).hex()
        argv = [_SH, "-c", _WRAPPER, "sh", token, *group.enter_files, "--", _tool("true") or "/bin/true"]
        result = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        if result.returncode != 0:
            text = result.stderr.decode(errors="replace").replace(token, "").strip().splitlines()
            why = text[0] if text else result.returncode
            return f"cgroup {tree.version}: cannot move a process into a run's cgroup ({why})"
        _read(group.usage_file)
    except OSError as error:
        return f"cgroup {tree.version}: cannot read a run's CPU time ({error.strerror or error})"
    finally:
        group.remove(wait=1.0)
    return ""


def cgroups_in_use() -> str:
    """How whole-run limits are enforced on this machine: "v1", "v2" or "none" (set up on first use)."""
    tree, _ = _cgroup_tree()
    return tree.version if tree else "none"


@atexit.register
def _remove_pending_groups() -> None:
    if _tree is not None:
        _tree.forget_pending()


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap", "rlimits" (root, another uid) or "none" (not root: no isolation from the grader)
    detail: str  # exactly what is protected and what is not
    cgroups: str = field(default_factory=cgroups_in_use)  # "v1", "v2" or "none"


# ---------------------------------------------------------------------------------------------------------------
# The /bin/sh wrapper that runs first, as root: it enters the run's cgroup (one write of "0", itself, per hierarchy)
# and, at the rlimits level, mounts the run's private tmpfs, then becomes the rest of the command. A token only the
# parent knows marks its own failure, which a child cannot then fake.

_SH = "/bin/sh"
_WRAPPER = (
    't=$1; shift; while [ "$1" != -- ]; do '
    'if [ "$1" = -m ]; then mount -a -T "$2" || { echo "$t" >&2; exit 125; }; shift 2; '
    'else echo 0 >"$1" || { echo "$t" >&2; exit 125; }; shift; fi; done; shift; exec "$@"'
)


# ---------------------------------------------------------------------------------------------------------------
# Folders every user may write to, found once; at the rlimits level a run gets a private tmpfs over all of them.

_COMMON_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/run/lock", "/var/lock", "/dev/mqueue")
_LOOK_BELOW = ("/", "/run", "/var", "/var/lib", "/var/cache", "/var/spool", "/srv", "/opt", "/mnt", "/media", "/home")
_places: tuple[str, ...] | None = None


def shared_places() -> tuple[str, ...]:
    """World-writable folders: the usual ones, every mount point, and the folders one level below a few roots."""
    global _places
    with _cache_lock:
        if _places is None:
            candidates = list(_COMMON_PLACES) + [point for point, _, _, _ in _mounts()]
            for top in _LOOK_BELOW:
                try:
                    candidates += [entry.path for entry in os.scandir(top) if entry.is_dir(follow_symlinks=False)]
                except OSError:
                    pass
            found: list[str] = []
            for path in candidates:
                if path.startswith(("/proc/", "/sys/")) or path in ("/proc", "/sys") or "\\" in path:
                    continue
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002 and path not in found:
                    found.append(path)
            outer = [p for p in found if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in found)]
            _places = tuple(outer)
        return _places


_private: tuple[str | None, str] | None = None  # (fstab for the private tmpfs, or None; why not)


def _private_tmp() -> tuple[str | None, str]:
    """As root: an fstab file for `mount -a` that puts one 64 MiB tmpfs over /tmp and every shared folder, tried."""
    global _private
    with _cache_lock:
        if _private is not None:
            return _private
        unshare, mount = _tool("unshare"), _tool("mount")
        if not is_root() or unshare is None or mount is None:
            _private = (None, "not root" if not is_root() else "unshare or mount (util-linux) not found")
            return _private
        places = [p for p in shared_places() if p not in ("/tmp", "/dev/mqueue") and not any(c.isspace() for c in p)]
        if _runs_dir().startswith(("/tmp/", *(p + "/" for p in places))):
            _private = (None, f"the run folders ({_runs_dir()}) lie in a shared folder")
            return _private
        lines = [f"autograde-tmp /tmp tmpfs size={TMPFS_BYTES},nr_inodes=16384,mode=1777,nosuid,nodev 0 0"]
        lines += [f"/tmp {place} none bind 0 0" for place in places]
        text = "\n".join(lines) + "\n"
        folder = _UidPool.folder()
        path = os.path.join(folder, f"fstab-{hashlib.sha256(text.encode()).hexdigest()[:12]}")
        if not os.path.exists(path):
            with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        probe = subprocess.run([*_unshare_args(unshare), mount, "-a", "-T", path], capture_output=True, timeout=30)
        if probe.returncode == 0:
            _private = (path, "")
        else:
            why = probe.stderr.decode(errors="replace").strip().splitlines()
            _private = (None, f"unshare fails here ({why[-1] if why else probe.returncode})")
        return _private


def _unshare_args(unshare: str) -> list[str]:
    return [unshare, "--mount", "--ipc", "--net", "--uts", "--propagation", "private"]


def _runs_dir() -> str:
    if is_root() and os.path.isdir(os.path.dirname(RUNS_DIR)):
        return RUNS_DIR
    return tempfile.gettempdir()


# ---------------------------------------------------------------------------------------------------------------
# detect()


def _limits_text(tree: _Tree | None, reason: str) -> str:
    if tree is not None:
        return (
            f"CPU time, memory and processes limited for all of a run's processes together, with equal CPU shares "
            f"(cgroup {tree.version})"
        )
    return f"no cgroups ({reason}): CPU time and memory limited per process, and a run cannot start another process"


def detect(fresh: bool = False) -> Isolation:
    """The strongest level that really works here (tried once with a real child, then cached; fresh: try again).

    Raises RuntimeError (one line) when the only thing left would be no isolation from the grader and
    AUTOGRADE_ISOLATION=none was not given, or when a level or cgroup version forced by the environment fails.
    """
    global _isolation
    with _cache_lock:
        if _isolation is not None and not fresh:
            return _isolation
    forced = os.environ.get("AUTOGRADE_ISOLATION", "").strip().lower()
    if forced not in ("", "bubblewrap", "rlimits", "none"):
        raise RuntimeError(f"AUTOGRADE_ISOLATION={forced!r}: use bubblewrap, rlimits or none")
    tree, reason = _cgroup_tree(fresh)
    cgroups = tree.version if tree else "none"
    limits = _limits_text(tree, reason)
    root = is_root()
    uid = os.getuid()
    if forced == "none" and root:
        raise RuntimeError(
            "AUTOGRADE_ISOLATION=none is for a grader that is not root; as root use rlimits or bubblewrap"
        )
    if forced == "none":
        found = Isolation(
            "none",
            f"no isolation from the grader (AUTOGRADE_ISOLATION=none): student code runs as the grader's own uid "
            f"{uid}, so it can read and change every file the grader can (the gradebook and other students' "
            f"results included), signal or kill the grader and use the network, and its files are not removed; "
            f"{limits}",
            cgroups,
        )
    elif forced == "rlimits" and not root:
        raise RuntimeError(_refusal("AUTOGRADE_ISOLATION=rlimits needs root (it runs each child as another uid)"))
    else:
        found = None
        bwrap = _tool("bwrap") if forced != "rlimits" else None
        why_not = "AUTOGRADE_ISOLATION=rlimits" if forced == "rlimits" else "bubblewrap not installed"
        if bwrap is not None:
            version = bwrap_version(bwrap)
            who = (
                "as its own unprivileged uid"
                if root
                else f"as the grader's uid {uid} mapped into its user namespace (not root: it still shares the "
                f"grader's uid for the kernel's per-user counts)"
            )
            trial = Isolation(
                "bubblewrap",
                f"{version}: each run in its own user, pid, network, IPC, UTS and mount namespaces {who}, seeing "
                f"only the Python runtime and its own files (read-only) and a {TMPFS_BYTES >> 20} MiB /tmp: no other "
                f"file, no network, no other process (the kernel is shared); {limits}",
                cgroups,
            )
            probe = run(
                {"probe.py": b"import os\nos.write(3, b'ok')\n"}, "probe.py", b"", Limits(wall_seconds=30), trial
            )
            if probe.status == "exited" and probe.returncode == 0 and probe.reply == b"ok":
                found = trial
            elif forced == "bubblewrap":
                raise RuntimeError(f"AUTOGRADE_ISOLATION=bubblewrap but bubblewrap fails here: {_why(probe)}")
            else:
                why_not = f"{version} is installed but fails here ({_why(probe)})"
        if found is None and not root:
            raise RuntimeError(_refusal(f"not root and {why_not}"))
        if found is None:
            found = Isolation("rlimits", f"rlimits ({why_not}): {_rlimits_text()}; {limits}", cgroups)
    with _cache_lock:
        _isolation = found
        return _isolation


def _refusal(why: str) -> str:
    return (
        f"{why}, so student code would run with no isolation from the grader (as uid {os.getuid()}, able to "
        f"read and change its files and to kill it): run as root, make bubblewrap work, or set "
        f"AUTOGRADE_ISOLATION=none to grade without isolation"
    )


def _rlimits_text() -> str:
    last = UID_BASE + UID_COUNT - 1
    text = (
        f"each run as its own unprivileged uid ({UID_BASE}-{last}), so it cannot signal the grader or change its files"
    )
    fstab, why = _private_tmp()
    if fstab:
        places = ", ".join(["/tmp", *(p for p in shared_places() if p not in ("/tmp", "/dev/mqueue"))])
        text += (
            f", in its own mount, IPC, network and UTS namespaces: no network, and one private {TMPFS_BYTES >> 20} "
            f"MiB tmpfs over {places} (gone after the run; any other folder that every user may write to is not "
            f"covered)"
        )
    else:
        text += (
            f"; no private namespaces ({why}): it can use the network, and its files in the shared folders "
            f"{', '.join(shared_places())} are counted every {_DISK_TICK * 1000:.0f} ms, the run stopped once they "
            f"pass {TMPFS_BYTES >> 20} MiB (a burst between two looks gets through), and removed after the run with "
            f"its SysV IPC objects"
        )
    return (
        text + "; its processes are all killed after the run. Not hidden: every file that any user may read (the "
        "course folder and other students' submissions when world-readable)"
    )


def _why(outcome: RunResult) -> str:
    text = outcome.output.decode("utf-8", "replace").strip().splitlines()
    return (text[-1] if text else outcome.detail or outcome.status)[:200]


# ---------------------------------------------------------------------------------------------------------------
# The uid pool: flock files make a uid exclusive across threads and across grader processes.


class _UidPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._swept: set[int] = set()

    @staticmethod
    def folder() -> str:
        folder = (
            "/run/autograde-uids" if os.path.isdir("/run") else os.path.join(tempfile.gettempdir(), "autograde-uids")
        )
        os.makedirs(folder, mode=0o700, exist_ok=True)  # root only: children must not grab or hold the locks
        return folder

    def acquire(self) -> tuple[int, int]:
        folder = self.folder()
        while True:
            with self._lock:
                start = self._next
                for i in range(UID_COUNT):
                    uid = UID_BASE + (start + i) % UID_COUNT
                    fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        os.close(fd)
                        continue
                    # Round robin, so a uid whose killed processes are still being reaped rests a while.
                    self._next = (start + i + 1) % UID_COUNT
                    first_use = uid not in self._swept
                    self._swept.add(uid)
                    break
                else:
                    uid = -1
            if uid >= 0:
                if first_use and processes_of(uid):
                    kill_uid(uid)  # leftovers of a grader that crashed would count against RLIMIT_NPROC
                _remove_stale_folders(uid)
                return uid, fd
            if _stopping.is_set():
                raise _Stopped()
            time.sleep(0.01)

    @staticmethod
    def release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class _Stopped(Exception):
    pass


_pool = _UidPool()


def _remove_stale_folders(uid: int) -> None:
    """Delete run folders of this uid left by a grader that was killed (we hold the uid's lock: none is in use)."""
    for folder in dict.fromkeys((_runs_dir(), tempfile.gettempdir())):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(f"autograde-run-{uid}-") and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)


def kill_uid(uid: int) -> None:
    """SIGKILL every process of uid. kill(-1) run as that uid is one atomic step, so even a fork bomb is caught."""
    kill = _tool("kill")
    if kill is None:
        return _kill_uid_by_scan(uid)
    subprocess.run(
        [kill, "-KILL", "-1"],
        # subprocess switches uid in C between fork and exec (safe with threads): one program fewer than setpriv.
        user=uid,
        group=uid,
        extra_groups=[],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,  # no timeout: with one, subprocess polls with sleeps, adding milliseconds to every run
    )


def processes_of(uid: int) -> list[int]:
    """Pids whose real uid is uid (read from /proc/PID/status, which a process cannot disguise)."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(name))
                        break
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _kill_uid_by_scan(uid: int) -> None:
    for _ in range(100):
        pids = processes_of(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------------------------
# What a run's uid leaves behind where there is no private namespace: files in the shared folders, SysV IPC.


def _owned_entries(uid: int, places: tuple[str, ...], depth: int = 2):
    """(path, lstat) of entries owned by uid in the shared folders, looking into other users' shared subfolders."""
    stack = [(place, 0) for place in places]
    while stack:
        folder, level = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries[:10000]:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid == uid:
                yield entry.path, info
            elif stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002 and level < depth:
                stack.append((entry.path, level + 1))


def _bytes_of(uid: int, places: tuple[str, ...]) -> int:
    """Disk used by uid in the shared folders (its own folders counted in full, up to 100,000 entries)."""
    total, seen = 0, 0
    for path, info in _owned_entries(uid, places):
        total += info.st_blocks * 512
        if stat.S_ISDIR(info.st_mode):
            for folder, _, names in os.walk(path):
                for name in names:
                    seen += 1
                    if seen > 100_000:
                        return total
                    try:
                        total += os.lstat(os.path.join(folder, name)).st_blocks * 512
                    except OSError:
                        pass
    return total


def _remove_leftovers(uid: int) -> None:
    """Delete what the run's uid left in the shared folders and its SysV IPC objects (no later run may see them)."""
    for path, info in list(_owned_entries(uid, shared_places())):
        try:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path, ignore_errors=True)  # rmtree does not follow symlinks
            else:
                os.unlink(path)
        except OSError:
            pass
    _remove_ipc(uid)


_IPC = (("shm", "shmid", "shmctl"), ("sem", "semid", "semctl"), ("msg", "msqid", "msgctl"))
_IPC_RMID = 0
_libc = None


def _remove_ipc(uid: int) -> None:
    """Remove the SysV shared memory segments, semaphore sets and message queues uid owns or created."""
    global _libc
    for kind, id_column, call in _IPC:
        try:
            lines = _read(f"/proc/sysvipc/{kind}").splitlines()
        except OSError:
            continue
        if len(lines) < 2:
            continue
        header = lines[0].split()
        columns = [header.index(name) for name in (id_column, "uid", "cuid")]
        for line in lines[1:]:
            values = line.split()
            try:
                number, owner, creator = (int(values[i]) for i in columns)
            except (IndexError, ValueError):
                continue
            if uid not in (owner, creator):
                continue
            if _libc is None:
                _libc = ctypes.CDLL(None, use_errno=True)
            if call == "semctl":
                _libc.semctl(number, 0, _IPC_RMID)
            else:
                getattr(_libc, call)(number, _IPC_RMID, None)


# ---------------------------------------------------------------------------------------------------------------
# One run


def _check_name(name: str) -> None:
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        raise ValueError(f"sandbox file names must be flat, got {name!r}")


def _rlimit_args(limits: Limits, uid: int | None, cgroup: bool, bubblewrap: bool) -> list[str]:
    cpu = max(1, math.ceil(limits.cpu_seconds))
    # With a cgroup its total decides and this is a backstop (SIGXCPU a second later, SIGKILL another later).
    # Without, this decides: SIGKILL at the limit (a SIGXCPU would be ignored by a child that is pid 1).
    cpu_limit = f"{cpu + 1}:{cpu + 2}" if cgroup else f"{cpu}:{cpu}"
    args = [
        f"--cpu={cpu_limit}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        "--core=0",
        "--msgqueue=0",  # no POSIX message queues, which would outlive the run
    ]
    if uid is not None:
        args.append(f"--nproc={limits.processes + (_BWRAP_PROCESSES if bubblewrap else 0)}")
    else:
        # Not root: the count covers all of our own processes, so allow that many more than already run.
        args.append(f"--nproc={len(processes_of(os.getuid())) + limits.processes + _BWRAP_PROCESSES}")
    return args


def _bwrap_args(bwrap: str, folder: str, python: str, prefix: str) -> list[str]:
    # --as-pid-1: no reaper process between bwrap and the child: one process fewer (0.7 ms a run here) and, without
    # cgroups, the child's CPU time reaches the rusage of the bwrap we reap. As pid 1 it ignores the signals it sends
    # itself without a handler; faults and our SIGKILL still end it, and when it ends, the pid namespace and every
    # process in it end too.
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
    args.append("--as-pid-1")
    args += ["--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):  # merged-/usr symlinks, or real folders
        host = f"/{link}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    if os.path.exists("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in {prefix, os.path.dirname(os.path.dirname(python))}:
        if not path.startswith("/usr/") and path not in ("/", "/usr"):
            args += ["--ro-bind", path, path]  # an interpreter outside /usr, at the same path (absolute rpaths)
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
    args += ["--ro-bind", folder, SANDBOX_DIR, "--chdir", SANDBOX_DIR]
    # The root and /dev are unsized tmpfs mounts made by bwrap: read-only, or many small files could fill the RAM.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    return args


def _prepare(base: str, files: dict[str, bytes], uid: int | None) -> tuple[str, str]:
    """Write the files into base/submission (readable by the run's uid only) and make base/tmp for it."""
    folder, tmp = os.path.join(base, "submission"), os.path.join(base, "tmp")
    os.mkdir(folder, 0o750)
    os.mkdir(tmp, 0o700)
    for name, content in files.items():
        path = os.path.join(folder, name)
        with open(path, "wb") as handle:
            handle.write(content)
        os.chmod(path, 0o640)
        if uid is not None:
            os.chown(path, 0, uid)
    if uid is not None:
        os.chmod(base, 0o711)  # the run's uid may pass through, not list
        os.chown(folder, 0, uid)  # group-readable by the run's uid; nobody else, and not writable by it
        os.chown(tmp, uid, uid)
    return folder, tmp


def _inherited_fds(keep: set[int]) -> list[int]:
    """Inheritable descriptors the grader itself inherited (ours are all close-on-exec): close them in the child."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:
                pass
    return found


def _high(fd: int) -> int:
    """A close-on-exec copy numbered 10 or more, so the dup2 file actions onto 0-3 never collide."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return copy


def run(
    files: dict[str, bytes], script: str, stdin: bytes, limits: Limits, isolation: Isolation | None = None
) -> RunResult:
    """Run `python -I -S script` in a fresh folder holding files, under the isolation given (or detected)."""
    for name in files:
        _check_name(name)
    _check_name(script)
    started = time.monotonic()
    if _stopping.is_set():
        return _cancelled(started)
    isolation = isolation or detect()
    uid, lock_fd, base, group = None, -1, None, None
    with _active_lock:
        _active[0] += 1
    try:
        if isolation.level == "rlimits" and not is_root():
            raise RuntimeError("the rlimits level needs root (it runs the child as another uid)")
        if is_root():
            uid, lock_fd = _pool.acquire()
        folder = _runs_dir()
        if folder == RUNS_DIR:
            os.makedirs(RUNS_DIR, mode=0o711, exist_ok=True)
        base = tempfile.mkdtemp(prefix=f"autograde-run-{uid}-" if uid is not None else "autograde-run-", dir=folder)
        if isolation.cgroups != "none":
            tree, reason = _cgroup_tree()
            if tree is None or tree.version != isolation.cgroups:
                raise RuntimeError(f"cgroup {isolation.cgroups} asked for, but {reason or 'not the one in use'}")
            extra = _BWRAP_PROCESSES if isolation.level == "bubblewrap" else 0
            group = tree.create(limits, extra)
        return _run(base, files, script, stdin, limits, isolation, uid, group)
    except _Stopped:
        return _cancelled(started)
    except Exception as error:  # a failure of ours, not of the child: say so rather than crash a grading thread
        return RunResult("sandbox-error", None, b"", b"", time.monotonic() - started, 0.0, f"sandbox failed: {error!r}")
    finally:
        if group is not None:
            group.remove()
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
        if uid is not None:
            _pool.release(lock_fd)
        with _active_lock:
            _active[0] -= 1


def _run(
    base: str,
    files: dict[str, bytes],
    script: str,
    stdin: bytes,
    limits: Limits,
    isolation: Isolation,
    uid: int | None,
    group: _Group | None,
) -> RunResult:
    python, prefix = child_python()
    folder, tmp = _prepare(base, files, uid)
    prlimit, setpriv = _tool("prlimit"), _tool("setpriv")
    if prlimit is None or (uid is not None and setpriv is None):
        raise RuntimeError("prlimit and setpriv (util-linux) are needed")
    bubblewrap = isolation.level == "bubblewrap"
    token = os.urandom(8).hex()
    argv: list[str] = []
    private = _private_tmp()[0] if isolation.level == "rlimits" else None
    if private:
        argv += _unshare_args(_tool("unshare") or "unshare")
    if group is not None or private:
        argv += [_SH, "-c", _WRAPPER, "sh", token, *(group.enter_files if group else [])]
        argv += (["-m", private] if private else []) + ["--"]
    argv += [prlimit, *_rlimit_args(limits, uid, group is not None, bubblewrap), "--"]
    if uid is not None:
        ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += [setpriv, *ids, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    if bubblewrap:
        bwrap = _tool("bwrap")
        if bwrap is None:
            raise RuntimeError("bubblewrap level requested but bwrap is not installed")
        argv += _bwrap_args(bwrap, folder, python, prefix)
        where, tmp = SANDBOX_DIR, "/tmp"
    else:
        where = folder
        if private:
            tmp = "/tmp"  # the run's own tmpfs
        env_tool = _tool("env")
        if env_tool is None:
            raise RuntimeError("env (coreutils) is needed")
        argv += [env_tool, "-C", folder, "--"]  # posix_spawn cannot chdir and os.chdir would move every thread
    if group is None:
        # Without a cgroup the run cannot start another process: RLIMIT_NPROC 0 from here on. Set after the uid
        # switch and after bwrap forked its own: an execve after setuid fails while the new uid is over its limit.
        argv += [prlimit, "--nproc=0", "--"]
    argv += [python, "-I", "-S", os.path.join(where, script)]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": tmp, "TMPDIR": tmp}
    # Without a private /tmp, the run's writes to the shared folders are watched (and removed afterwards).
    watch = uid is not None and isolation.level == "rlimits" and not private

    stdin_file = tempfile.TemporaryFile()  # a file, not a pipe: a child that never reads cannot block us
    with stdin_file:
        stdin_file.write(stdin)
        stdin_file.flush()
        stdin_file.seek(0)
        in_fd = _high(os.dup(stdin_file.fileno()))
    out_r, out_w = os.pipe()
    reply_r, reply_w = os.pipe()
    out_w, reply_w = _high(out_w), _high(reply_w)
    actions = [
        (os.POSIX_SPAWN_DUP2, in_fd, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, out_w, 2),
        (os.POSIX_SPAWN_DUP2, reply_w, 3),
    ] + [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds({in_fd, out_w, reply_w, out_r, reply_r})]
    try:
        try:
            # posix_spawn is safe with several grading threads (no Python code runs between fork and exec).
            pid = os.posix_spawn(
                argv[0],
                argv,
                env,
                file_actions=actions,
                setsid=True,
                setsigmask=(),
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU),  # Python ignores the first two
            )
        finally:
            for fd in (in_fd, out_w, reply_w):
                os.close(fd)
        run = _Supervisor(pid, out_r, reply_r, limits, isolation, uid, group, watch)
        outcome = run.supervise()
        if outcome.returncode == _WRAPPER_FAILED and token.encode() in outcome.output:
            text = outcome.output.replace(token.encode(), b"").decode(errors="replace").strip()
            return RunResult(
                "sandbox-error", None, b"", b"", outcome.wall_seconds, outcome.cpu_seconds,
                f"sandbox failed: could not enter the run's cgroup or mount its private /tmp ({text[:200]})",
            )  # fmt: skip
        return outcome
    finally:
        os.close(out_r)
        os.close(reply_r)
        if uid is not None and isolation.level == "rlimits" and not private:
            _remove_leftovers(uid)


class _Supervisor:
    """Watch one child: collect its output and reply, enforce the whole run's limits, kill everything at the end."""

    def __init__(self, pid, out_r, reply_r, limits, isolation, uid, group, watch):
        self.pid, self.out_r, self.reply_r = pid, out_r, reply_r
        self.limits, self.isolation, self.uid, self.group, self.watch = limits, isolation, uid, group, watch
        self.spawned = time.monotonic()
        self.status = ""
        self.detail = ""
        self.samples: collections.deque[tuple[float, float]] = collections.deque(maxlen=64)

    def kill_all(self) -> None:
        os.kill(self.pid, signal.SIGKILL)  # not reaped yet, so still ours; the child follows it (--die-with-parent)
        if self.group is not None:
            self.group.kill()  # every process of the run, setsid or not
        if self.isolation.level == "bubblewrap":
            return  # the pid namespace dies with its pid 1 (the child) and takes every process in it, setsid or not
        if self.uid is not None:
            kill_uid(self.uid)
        else:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _cpu_now(self) -> float:
        return self.group.cpu_seconds() if self.group is not None else _tree_cpu(self.pid)

    def _computing(self, now: float) -> bool:
        """Was the run computing lately (CPU rate over the last second, or a process of it ready to run)?"""
        used = self._cpu_now()
        self.samples.append((now, used))
        then, before = next(((t, c) for t, c in self.samples if now - t <= _WINDOW * 1.5), (self.spawned, 0.0))
        if now - then < _WINDOW / 2 and then != self.spawned:
            then, before = self.spawned, 0.0
        rate = (used - before) / max(now - then, 1e-3)
        if rate >= _COMPUTING_RATE:
            return True
        pids = self.group.pids() if self.group is not None else _tree_pids(self.pid)
        return any(_state(pid) == "R" for pid in pids)

    def _check(self, now: float) -> float:
        """Look at the run's totals; set status when a limit is reached. Returns when to look next."""
        limits = self.limits
        if self.group is not None:
            used = self.group.cpu_seconds()
            self.samples.append((now, used))
            if used >= limits.cpu_seconds:
                self.status = "timeout"
                self.detail = _cpu_detail(limits)
                return now
            if self.group.oom_kills():
                self.status, self.detail = "killed", _memory_detail(limits)
                return now
            # All its processes together use at most one CPU second per core per second.
            step = min(_TICK, max(0.005, (limits.cpu_seconds - used) / _cpus()))
        else:
            step = _DISK_TICK if self.watch else _TICK
            if now >= self.deadline - _WINDOW * 1.5:
                self.samples.append((now, _tree_cpu(self.pid)))
        if self.watch and now >= self.next_disk:
            self.next_disk = now + _DISK_TICK
            if _bytes_of(self.uid, shared_places()) > TMPFS_BYTES:
                self.status = "output-limit"
                self.detail = f"it wrote more than {TMPFS_BYTES >> 20} MiB to the shared temporary folders"
                return now
        if now >= self.deadline:
            elapsed = now - self.spawned
            if elapsed >= self.cap:
                self.status = "timeout"
                self.detail = (
                    f"still computing when the absolute wall-clock cap of {self.cap:g} s ran out, after "
                    f"{self._cpu_now():.1f} s of its {limits.cpu_seconds:g} s of CPU time (the machine is overloaded)"
                )
            elif self._computing(now):
                self.deadline = min(now + _TICK * 2, self.spawned + self.cap)  # let the CPU time decide
            else:
                self.status = "waiting"
                self.detail = (
                    f"the code was waiting (sleeping or blocked), not computing, for {elapsed:.0f} s "
                    f"(the wall-clock backstop is {limits.wall_seconds:g} s; it used {self._cpu_now():.2f} s of CPU)"
                )
                return now
        return min(now + step, self.deadline)

    def supervise(self) -> RunResult:
        pid, limits = self.pid, self.limits
        output, reply = bytearray(), bytearray()
        dropped = 0
        wait_status, rusage = None, None
        self.deadline = self.spawned + limits.wall_seconds
        self.cap = max(limits.wall_seconds * _CAP_FACTOR, limits.wall_seconds + 60)
        self.next_disk = self.spawned
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1  # old kernel: poll for the exit below
        selector = selectors.DefaultSelector()
        selector.register(self.out_r, selectors.EVENT_READ)
        selector.register(self.reply_r, selectors.EVENT_READ)
        selector.register(_stop_r, selectors.EVENT_READ)
        if pidfd >= 0:
            selector.register(pidfd, selectors.EVENT_READ)
        watching_stop = True
        # Without cgroups nothing needs a look before the deadline (no fork; RLIMIT_CPU decides), unless watched.
        next_look = self.spawned
        if self.group is None and not self.watch:
            next_look = max(self.spawned, self.deadline - _WINDOW * 1.5)
        try:
            open_pipes, drain_until, end = 2, None, self.spawned
            while True:
                now = time.monotonic()
                if wait_status is None:
                    # WNOWAIT: the exited child stays a zombie, so its pid cannot be reused before kill_all() ran.
                    finished = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
                    if not finished and _stopping.is_set():
                        self.status, self.detail = "cancelled", "stopped: grading was cancelled"
                    elif not finished and now >= next_look:
                        next_look = self._check(now)
                    if self.status:
                        finished = True
                    if finished:
                        end = now
                        self.kill_all()  # grandchildren (setsid or not) must not outlive the run, nor hold our pipes
                        wait_status, rusage = os.wait4(pid, 0)[1:]
                        drain_until = time.monotonic() + _DRAIN_SECONDS
                if not open_pipes and wait_status is not None:
                    break
                if drain_until is not None and now >= drain_until:
                    break
                wake = drain_until if drain_until is not None else next_look
                limit = max(0.0, wake - now)
                events = selector.select(min(limit, 0.05) if pidfd < 0 else limit)
                for key, _ in events:
                    fd = key.fd
                    if fd == pidfd:
                        selector.unregister(pidfd)
                        continue
                    if fd == _stop_r:
                        if watching_stop:
                            selector.unregister(_stop_r)  # it stays readable: look once, not in a busy loop
                            watching_stop = False
                        continue
                    data = os.read(fd, _CHUNK)
                    if not data:
                        selector.unregister(fd)
                        open_pipes -= 1
                    elif fd == self.out_r:
                        room = max(0, limits.output_bytes - len(output))
                        output += data[:room]
                        dropped += len(data) - min(room, len(data))  # keep reading: a blocked writer never finishes
                    elif self.status:
                        pass  # over a limit and being killed: what still arrives is not the child's reply
                    elif len(reply) + len(data) <= REPLY_CAP:
                        reply += data
                    else:
                        self.status = "output-limit"
                        self.detail = f"the reply on file descriptor 3 exceeded {REPLY_CAP} bytes"
                        next_look = time.monotonic()
        finally:
            selector.close()
            if pidfd >= 0:
                os.close(pidfd)
            if wait_status is None:  # an exception of ours: still leave nothing behind
                self.kill_all()
                os.wait4(pid, 0)

        status, detail = self.status, self.detail
        if self.group is not None:
            self.group.kill()
            cpu = self.group.cpu_seconds()  # every process of the run, bwrap's and setsid grandchildren included
            if not status and self.group.oom_kills():
                status, detail = "killed", _memory_detail(limits)
        else:
            cpu = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
        code = os.waitstatus_to_exitcode(wait_status)
        if self.isolation.level == "bubblewrap" and 128 < code <= 128 + 64:
            code = -(code - 128)  # bwrap reports a child killed by signal N as exit code 128 + N
        if status in ("timeout", "waiting", "cancelled"):
            code = None
        elif status == "killed":
            code = code if code is not None and code < 0 else -signal.SIGKILL
        elif not status:
            if code is not None and code < 0:
                # The per-process CPU limit: the kernel checks it against tick-sampled CPU time, which can run
                # some percent ahead of the precise time measured here.
                rlimit = math.ceil(limits.cpu_seconds) + (1 if self.group is not None else 0)
                if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= rlimit * 0.9):
                    status, detail, code = "timeout", _cpu_detail(limits), None
                else:
                    status, detail = "killed", _signal_detail(-code)
            else:
                status = "exited"
                if dropped:
                    detail = f"{dropped} bytes of output beyond the first {limits.output_bytes} were discarded"
        return RunResult(status, code, bytes(reply), bytes(output), end - self.spawned, cpu, detail)


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in _read(f"/proc/{pid}/task/{pid}/children").split()]
    except (OSError, ValueError):
        return []


def _tree_pids(pid: int) -> list[int]:
    """pid and its descendants (at most a few: without cgroups a run cannot fork)."""
    found, stack = [], [pid]
    while stack and len(found) < 64:
        current = stack.pop()
        found.append(current)
        stack.extend(_children(current))
    return found


def _tree_cpu(pid: int) -> float:
    """CPU seconds of pid and its descendants so far (the sandbox's own processes are a few milliseconds)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in _tree_pids(pid):
        try:
            fields = _read(f"/proc/{each}/stat").rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / ticks


def _state(pid: int) -> str:
    try:
        return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def _cpu_detail(limits: Limits) -> str:
    return f"used the CPU time limit of {limits.cpu_seconds:g} s (all its processes together)"


def _memory_detail(limits: Limits) -> str:
    return f"killed: its processes together reached the memory limit of {limits.memory_bytes / (1 << 20):g} MiB"


def _signal_detail(number: int) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if number == signal.SIGKILL:
        return f"killed by {name} (out of memory, or the CPU limit of a child process)"
    return f"killed by {name}"
