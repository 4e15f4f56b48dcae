"""Cgroups for whole-run limits: one group per run (v1 or v2), its limits, CPU accounting, kill and removal."""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess
import threading
import time

from autograder.grading.sandbox.host import cache_lock, is_root, mount_table, read_text, stat_fields, tool, write_text
from autograder.grading.sandbox.limits import PROBE_LIMITS, Limits
from autograder.grading.sandbox.wrapper import SH, WRAPPER

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


def _own_cgroups() -> dict[str, str]:
    """Hierarchy key ("0" for v2, else the comma-joined controllers) -> this process's path in it."""
    own = {}
    try:
        for line in read_text("/proc/self/cgroup").splitlines():
            number, controllers, path = line.split(":", 2)
            own["0" if number == "0" else controllers] = path
    except (OSError, ValueError):
        pass
    return own


def _start_time(pid: int) -> str | None:
    fields = stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


class Tree:
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

    def create(self, limits: Limits, extra_processes: int) -> Group:
        with self._lock:
            self._seq += 1
            name = f"{self.prefix()}{self._seq}"
            pending = list(self._pending)
        for old in pending:
            if Group(self, old).remove(wait=0.0):
                with self._lock:
                    self._pending.discard(old)
        group = Group(self, name)
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
            Group(self, name).remove(wait=1.0)

    def forget_pending(self) -> None:
        for name in list(self._pending):
            Group(self, name).remove(wait=0.5)


class Group:
    """One run's cgroup."""

    def __init__(self, tree: Tree, name: str):
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
            write_text(os.path.join(role["memory"], "memory.limit_in_bytes"), memory)
            swap = os.path.join(role["memory"], "memory.memsw.limit_in_bytes")
            if os.path.exists(swap):  # memory plus swap: swapping out is no way around the limit
                write_text(swap, memory)
            write_text(os.path.join(role["pids"], "pids.max"), pids)
            write_text(os.path.join(role["cpu"], "cpu.shares"), str(_RUN_V1_SHARES))
            return
        folder = self.dirs[0]
        if "memory" in self.tree.controllers:
            write_text(os.path.join(folder, "memory.max"), memory)
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if os.path.exists(os.path.join(folder, name)):
                    write_text(os.path.join(folder, name), value)
        if "pids" in self.tree.controllers:
            write_text(os.path.join(folder, "pids.max"), pids)
        if "cpu" in self.tree.controllers:
            write_text(os.path.join(folder, "cpu.weight"), str(_RUN_V2_WEIGHT))

    def cpu_seconds(self) -> float:
        try:
            text = read_text(self.usage_file)
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
            for line in read_text(self.oom_file).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def pids(self) -> list[int]:
        # One list is enough: the run's processes are in all its folders (a process cannot move itself).
        try:
            return [int(pid) for pid in read_text(self.procs_files[-1]).split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        """SIGKILL every process of the run: one write on v2 (cgroup.kill); else freeze, kill the pids, thaw."""
        if self.kill_file:
            try:
                write_text(self.kill_file, "1")
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
            write_text(path, on if frozen else off)
            if frozen and self.tree.version == "v1":
                for _ in range(100):  # FREEZING until every task stopped
                    if read_text(path).strip() == "FROZEN":
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


def _v1_tree(mounts, own, forced: bool) -> tuple[Tree | None, str]:
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
        write_text(os.path.join(roles["cpu"], "cpu.shares"), str(_PARENT_V1_SHARES))
    except OSError as error:
        if forced:
            return None, f"cannot set the CPU weight of {roles['cpu']}: {error.strerror}"
    return Tree("v1", list(dict.fromkeys(roles.values())), roles, frozenset(roles)), ""


def _v2_tree(mounts, own, needed: tuple[str, ...]) -> tuple[Tree | None, str]:
    point = next((p for p, root, fstype, _ in mounts if fstype == "cgroup2"), None)
    if point is None:
        return None, "cgroup v2 is not mounted"
    try:
        available = set(read_text(os.path.join(point, "cgroup.controllers")).split())
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
                write_text(os.path.join(base, "cgroup.subtree_control"), enable)
            os.makedirs(parent, exist_ok=True)
            if enable:
                write_text(os.path.join(parent, "cgroup.subtree_control"), enable)
            if "cpu" in needed:
                write_text(os.path.join(parent, "cpu.weight"), str(_PARENT_V2_WEIGHT))
        except OSError:
            continue
        return Tree("v2", [parent], {c: parent for c in ("cpu", "cpuacct", "memory", "pids")}, frozenset(needed)), ""
    return None, f"cannot create a cgroup with the {', '.join(needed)} controllers under {point}"


_tree: Tree | None = None
_tree_reason = ""
_tree_ready = False


def cgroup_tree(fresh: bool = False) -> tuple[Tree | None, str]:
    """This machine's cgroups for runs (set up once, leftovers of dead graders removed), or None and why not."""
    global _tree, _tree_reason, _tree_ready
    with cache_lock:
        if _tree_ready and not fresh:
            return _tree, _tree_reason
        forced = os.environ.get("AUTOGRADE_CGROUPS", "").strip().lower()
        tree, reason = None, ""
        if forced == "none":
            reason = "AUTOGRADE_CGROUPS=none"
        elif forced not in ("", "v1", "v2"):
            raise RuntimeError(f"AUTOGRADE_CGROUPS={forced!r}: use v1, v2 or none")
        else:
            mounts, own = mount_table(), _own_cgroups()
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


def _probe(tree: Tree) -> str:
    """Create a run cgroup, put a real process in it the way runs are, read its CPU time, remove it ("" if fine)."""
    try:
        tree.remove_leftovers()
        group = tree.create(PROBE_LIMITS, 0)
    except OSError as error:
        return f"cgroup {tree.version}: cannot create a run's cgroup ({error.strerror or error})"
    try:
        token = os.urandom(8).hex()
        argv = [SH, "-c", WRAPPER, "sh", token, *group.enter_files, "--", tool("true") or "/bin/true"]
        result = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        if result.returncode != 0:
            text = result.stderr.decode(errors="replace").replace(token, "").strip().splitlines()
            why = text[0] if text else result.returncode
            return f"cgroup {tree.version}: cannot move a process into a run's cgroup ({why})"
        read_text(group.usage_file)
    except OSError as error:
        return f"cgroup {tree.version}: cannot read a run's CPU time ({error.strerror or error})"
    finally:
        group.remove(wait=1.0)
    return ""


def cgroups_in_use() -> str:
    """How whole-run limits are enforced on this machine: "v1", "v2" or "none" (set up on first use)."""
    tree, _ = cgroup_tree()
    return tree.version if tree else "none"


@atexit.register
def _remove_pending_groups() -> None:
    if _tree is not None:
        _tree.forget_pending()
