"""The machine: its tools, the interpreter children run under, privileges, and the /proc and mount readers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading


def tool(name: str) -> str | None:
    for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def is_root() -> bool:
    return os.geteuid() == 0


def world_readable(path: str) -> bool:
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


cache_lock = threading.RLock()
# child_python's own: its probe (a Python start) can then run while another thread holds cache_lock to set up cgroups
_python_lock = threading.Lock()
_python: tuple[str, str] | None = None
_magic = b""  # the bytecode magic number of the children's interpreter, read with its prefix


def child_python() -> tuple[str, str]:
    """(interpreter, its sys.base_prefix) for children: it must be usable by an unprivileged uid.

    The grader's own interpreter may live under /root (mode 0700) and link libpython by an absolute path, so
    the system python3 is preferred; the child needs only the standard library.
    """
    global _python, _magic
    with _python_lock:
        if _python is None:
            candidates = [os.environ.get("AUTOGRADE_CHILD_PYTHON", ""), "/usr/bin/python3", sys.executable]
            chosen = next((c for c in candidates if c and world_readable(c)), None)
            if chosen is None and not is_root():
                chosen = sys.executable  # not switching uid, so our own interpreter is readable
            if chosen is None:
                raise RuntimeError(
                    "no Python interpreter readable by an unprivileged user (set AUTOGRADE_CHILD_PYTHON)"
                )
            chosen = os.path.realpath(chosen)
            probe = "import sys, importlib.util; print(importlib.util.MAGIC_NUMBER.hex()); print(sys.base_prefix)"
            command = [chosen, "-I", "-S", "-c", probe]
            told = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
            magic, prefix = told.stdout.strip().split("\n", 1)
            _python, _magic = (chosen, prefix), bytes.fromhex(magic)
        return _python


def child_magic() -> bytes:
    """The magic number that starts the .pyc files the children's interpreter runs."""
    child_python()
    return _magic


def cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def write_text(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("ascii", "replace")


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): [0] is the
    state, [1] the parent's pid, [11] and [12] user and system ticks, [19] the start time; [] when it is gone."""
    try:
        return read_text(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def mount_table() -> list[tuple[str, str, str, list[str]]]:
    """(mount point, root within its filesystem, filesystem type, super options) from /proc/self/mountinfo."""
    found = []
    try:
        lines = read_text("/proc/self/mountinfo").splitlines()
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
