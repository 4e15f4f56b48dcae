"""Run folders: where each run's files are written, readable by the run's uid only.

A run's folder is made, filled with two files and removed again for every stage of every student, so where it lies
matters: on a tmpfs that costs microseconds, on some disks (this project's own machines among them) each folder or
file made costs more than half a millisecond of CPU time. Under bubblewrap a run sees only its own folder (bound at
/submission), so its folder may lie in memory; the rlimits level needs it outside the shared folders it covers.
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile

from autograder.grading.sandbox.host import is_root, mount_table

RUNS_DIR = "/run/autograde-runs"  # as root: run folders live outside /tmp, which a run gets a private copy of
MEMORY_RUNS_DIR = "/dev/shm/autograde-runs"  # as root under bubblewrap, when /run is on a disk and /dev/shm is not


def runs_dir(in_memory: bool = False) -> str:
    """Where run folders are made. in_memory: the runs are bubblewrap's, so a folder in /dev/shm (a tmpfs shared by
    every user) will do when /run is not a tmpfs itself."""
    if not is_root():
        return tempfile.gettempdir()
    if in_memory and (folder := _memory_runs_dir()):
        return folder
    if os.path.isdir(os.path.dirname(RUNS_DIR)):
        return RUNS_DIR
    return tempfile.gettempdir()


def every_runs_dir() -> list[str]:
    """Every folder a run's folder may have been made in (to remove what a grader that died left)."""
    found = [runs_dir(), tempfile.gettempdir()]
    if os.path.isdir(MEMORY_RUNS_DIR):
        found.append(MEMORY_RUNS_DIR)
    return list(dict.fromkeys(found))


MEMORY_FREE = 256 << 20  # /dev/shm is used only with this much room: a container's may be a few dozen MiB


@functools.cache
def _memory_runs_dir() -> str | None:
    """MEMORY_RUNS_DIR when /run is not a tmpfs but /dev/shm is, with room to spare; else None."""
    types = {point: fstype for point, _, fstype, _ in mount_table()}
    if types.get("/run") == "tmpfs" or types.get("/dev/shm") != "tmpfs":
        return None
    try:
        room = os.statvfs("/dev/shm")
    except OSError:
        return None
    if room.f_bavail * room.f_frsize < MEMORY_FREE:
        return None
    return MEMORY_RUNS_DIR if own_folder(MEMORY_RUNS_DIR) else None


def own_folder(path: str) -> bool:
    """Make path (mode 0711) or find it made: True only when it is a real folder of ours that nobody else may write.

    For a folder in a place every user may write (sticky, like /tmp): a folder or link someone else put at that
    name first is not ours, and is never used."""
    try:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o711)  # not through mkdir's mode, which the umask may narrow
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o711


def check_name(name: str) -> None:
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        raise ValueError(f"sandbox file names must be flat, got {name!r}")


def prepare(base: str, files: dict[str, bytes], uid: int | None) -> tuple[str, str]:
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
