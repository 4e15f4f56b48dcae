"""The rlimits level's own protections: a private /tmp in fresh namespaces (unshare) where that works, and else
watching and removing what a run's uid leaves in the shared folders (files, SysV IPC objects)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile

from autograder.grading.sandbox.folders import runs_dir
from autograder.grading.sandbox.host import cache_lock, is_root, mount_table, read_text, tool
from autograder.grading.sandbox.limits import TMPFS_BYTES
from autograder.grading.sandbox.uids import UidPool

DISK_TICK = 0.05  # without a private /tmp: how often the run's bytes in the shared folders are counted


_COMMON_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/run/lock", "/var/lock", "/dev/mqueue")
_LOOK_BELOW = ("/", "/run", "/var", "/var/lib", "/var/cache", "/var/spool", "/srv", "/opt", "/mnt", "/media", "/home")
_places: tuple[str, ...] | None = None


def shared_places() -> tuple[str, ...]:
    """World-writable folders: the usual ones, every mount point, and the folders one level below a few roots."""
    global _places
    with cache_lock:
        if _places is None:
            candidates = list(_COMMON_PLACES) + [point for point, _, _, _ in mount_table()]
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


def private_tmp() -> tuple[str | None, str]:
    """As root: an fstab file for `mount -a` that puts one 64 MiB tmpfs over /tmp and every shared folder, tried."""
    global _private
    with cache_lock:
        if _private is not None:
            return _private
        unshare, mount = tool("unshare"), tool("mount")
        if not is_root() or unshare is None or mount is None:
            _private = (None, "not root" if not is_root() else "unshare or mount (util-linux) not found")
            return _private
        places = [p for p in shared_places() if p not in ("/tmp", "/dev/mqueue") and not any(c.isspace() for c in p)]
        if runs_dir().startswith(("/tmp/", *(p + "/" for p in places))):
            _private = (None, f"the run folders ({runs_dir()}) lie in a shared folder")
            return _private
        lines = [f"autograde-tmp /tmp tmpfs size={TMPFS_BYTES},nr_inodes=16384,mode=1777,nosuid,nodev 0 0"]
        lines += [f"/tmp {place} none bind 0 0" for place in places]
        text = "\n".join(lines) + "\n"
        folder = UidPool.folder()
        path = os.path.join(folder, f"fstab-{hashlib.sha256(text.encode()).hexdigest()[:12]}")
        if not os.path.exists(path):
            with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        probe = subprocess.run([*unshare_args(unshare), mount, "-a", "-T", path], capture_output=True, timeout=30)
        if probe.returncode == 0:
            _private = (path, "")
        else:
            why = probe.stderr.decode(errors="replace").strip().splitlines()
            _private = (None, f"unshare fails here ({why[-1] if why else probe.returncode})")
        return _private


# What a run may see at this level, in its private mount namespace: the runtime folders at the top of the tree (and
# the run folders under /run); every other top-level folder (/home, /root, /srv, /work, /opt, /var, /autograder,
# ...) and every path the grader asks to hide (hide(): the course, the class, OUT) gets an empty read-only tmpfs over
# it. Kept folders can still hold a hidden path: an installed grader under /usr is hidden by its own path.
_KEEP_TOP = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys", "run", "tmp"}
_hidden: set[str] = set()
_plans: dict[str, tuple[str | None, str]] = {}  # fstab text -> (its file, or None when mounting it failed; why)


def hide(paths) -> None:
    """Paths no run at this level may read (the course, the class, OUT): masked in every later run's namespace."""
    with cache_lock:
        _hidden.update(os.path.realpath(path) for path in paths)


def _fstab_path(path: str) -> str:
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in path)


def _masks(needed: tuple[str, ...]) -> list[str]:
    """Folders and files to cover, outermost first, none holding a path the run needs (its interpreter, runs)."""
    tops = []
    try:
        tops = [e.path for e in os.scandir("/") if e.is_dir(follow_symlinks=False) and e.name not in _KEEP_TOP]
    except OSError:
        pass
    chosen: list[str] = []
    for path in sorted({*tops, *_hidden}, key=lambda p: (len(p), p)):
        inside = lambda a, b: a == b or a.startswith(b.rstrip("/") + "/")  # noqa: E731
        private = ("/tmp", *shared_places())  # replaced by the run's own tmpfs already: the path is not there
        if (
            path == "/"
            or any(inside(path, done) for done in [*chosen, *private])
            or any(inside(n, path) for n in needed)
        ):
            continue
        if os.path.isdir(path) or os.path.isfile(path):
            chosen.append(path)
    return chosen


def _per_mount_proc() -> bool:
    """Linux 5.8 or later: proc options belong to each mount (before, hidepid would change the grader's /proc too)."""
    try:
        major, minor = (int(part) for part in os.uname().release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 8)


def mount_plan(needed: tuple[str, ...]) -> str | None:
    """The fstab a run's wrapper mounts: the private /tmp, then the masks; tried once per content. None: no private
    namespace here. If the masks cannot be mounted, the private /tmp alone (the preflight then sees what shows)."""
    base, _ = private_tmp()
    if base is None:
        return None
    with open(base) as handle:
        text = handle.read()
    if _per_mount_proc():  # a /proc of its own that shows only the run's uid's processes (no one's command line)
        text += "autograde-proc /proc proc hidepid=invisible,nosuid,nodev,noexec 0 0\n"
    for path in _masks(needed):
        if os.path.isdir(path):
            text += f"autograde-hidden {_fstab_path(path)} tmpfs ro,size=4k,nr_inodes=4,mode=000 0 0\n"
        else:
            text += f"/dev/null {_fstab_path(path)} none bind,ro 0 0\n"
    with cache_lock:
        if text in _plans:
            return _plans[text][0] or base
        path = os.path.join(UidPool.folder(), f"fstab-{hashlib.sha256(text.encode()).hexdigest()[:12]}")
        if not os.path.exists(path):
            with tempfile.NamedTemporaryFile("w", dir=UidPool.folder(), delete=False) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        mount = [tool("mount") or "mount", "-a", "-T", path]
        probe = subprocess.run([*unshare_args(tool("unshare") or "unshare"), *mount], capture_output=True, timeout=30)
        _plans[text] = (path, "") if probe.returncode == 0 else (None, probe.stderr.decode(errors="replace")[-200:])
        return _plans[text][0] or base


def unshare_args(unshare: str) -> list[str]:
    return [unshare, "--mount", "--ipc", "--net", "--uts", "--propagation", "private"]


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


def bytes_of(uid: int, places: tuple[str, ...]) -> int:
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


def remove_leftovers(uid: int) -> None:
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
            lines = read_text(f"/proc/sysvipc/{kind}").splitlines()
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
