"""What a run builds from the suite alone, kept between runs: each stage's checks (every case's oracle answers:
about a second for the ten stages), their plans, and the report's compiled templates. Every `autograde grade`
process needs them (a stage not handed in still lists its checks as failed): a Gradescope container grading one
submission, a `--student` rerun, each shard, each of `make test`'s graders.

They are the hidden tests' answers, so they live with the instructor's files: CACHE (or $AUTOGRADE_CACHE), a
folder only the grader's user may write, never OUT or a class folder. One file per stage, named by the suite's
hash (course/suite.py) and the Python version, so a changed suite never reads an old answer. A file is read
only when its folder and itself belong to this user and no one else may write them, and its bytes hash to the
digest at its head; then the suite hash inside must be this one. Anything else (a corrupt, foreign, truncated
or unreadable file) is ignored, the checks are built again and the file written anew, atomically. A cache that
cannot be written costs only the time.
"""

import functools
import gc
import hashlib
import os
import pickle
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from autograder.course.suite import suite_hash

CACHE_ENV = "AUTOGRADE_CACHE"
MAGIC = b"autograde checks 1\n"
DIGEST_BYTES = 32  # sha256
KEEP_SUITES = 4  # the newest suites' files stay (a branch switched back and forth); older ones are removed


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autograde"


def _path(name: str) -> Path:
    python = f"py{sys.version_info.major}{sys.version_info.minor}"
    return cache_dir() / f"{suite_hash()}-{python}-{name}.pickle"


def _ours(status: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path):
    """The value stored at path, or None when there is none this process may trust."""
    try:
        if not _ours(os.stat(path.parent)):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or not _ours(status):
            return None
        data = file.read()
    head, digest, payload = (
        data[: len(MAGIC)],
        data[len(MAGIC) : len(MAGIC) + DIGEST_BYTES],
        data[len(MAGIC) + DIGEST_BYTES :],
    )
    if head != MAGIC or hashlib.sha256(payload).digest() != digest:
        return None
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of new containers, none of them garbage: the collector would halve the speed
    try:
        suite, value = pickle.loads(payload)
    except Exception:  # a file that hashes right but does not load: written by another version of the grader
        return None
    finally:
        if collecting:
            gc.enable()
    return value if suite == suite_hash() else None


def _write(path: Path, value) -> None:
    if trusted_folder() is None:
        return
    payload = pickle.dumps((suite_hash(), value), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".checks-")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        _forget_old_suites(path.parent)
    except OSError:
        return


def _forget_old_suites(folder: Path) -> None:
    """Remove the files of all but the KEEP_SUITES suites written last: every change to the grader is a suite."""
    newest: dict[str, float] = {}
    files = [(entry, entry.stat().st_mtime) for entry in folder.glob("*.pickle")]
    for entry, mtime in files:
        suite = entry.name.split("-", 1)[0]
        newest[suite] = max(newest.get(suite, 0.0), mtime)
    kept = set(sorted(newest, key=newest.get, reverse=True)[:KEEP_SUITES]) | {suite_hash()}
    for entry, _ in files:
        if entry.name.split("-", 1)[0] not in kept:
            entry.unlink(missing_ok=True)


def trusted_folder() -> Path | None:
    """The cache folder, made if need be, when it is this user's and no one else may write it; else None."""
    folder = cache_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder if _ours(os.stat(folder)) else None
    except OSError:
        return None


def built_once(function):
    """functools.cache for what grading threads load or build per stage (its checks, plan, known mistakes): when
    several threads ask for the same stage at once, one loads it and the others wait for its value, instead of
    each loading it too (two threads reading stage one's checks and plan at a class's start cost 0.27 s more
    than one)."""
    memo = functools.cache(function)
    locks: dict[tuple, threading.RLock] = {}
    guard = threading.Lock()

    @functools.wraps(function)
    def once(*args):
        with guard:
            lock = locks.setdefault(args, threading.RLock())
        with lock:
            return memo(*args)

    return once


def cached(name: str, build: Callable[[], object]):
    """The value kept under name for this suite, or build()'s, kept for the next run.

    What a process loads here (tens of thousands of objects for a stage) lives as long as the process, so it is
    moved out of the garbage collector's sight (gc.freeze, with everything else alive by then), which would
    otherwise go through all of it at every full collection and again as the interpreter exits: a tenth of a
    second of a one-submission run."""
    path = _path(name)
    value = _read(path)
    if value is None:
        value = build()
        _write(path, value)
    gc.freeze()
    return value
