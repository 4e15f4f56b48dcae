"""The uid pool (as root every concurrent run gets its own unprivileged uid) and killing a uid's processes."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from autograder.grading.sandbox.folders import every_runs_dir
from autograder.grading.sandbox.host import tool
from autograder.grading.sandbox.keyrings import keys_of
from autograder.grading.sandbox.stopping import Stopped, stop_requested

UID_BASE = 61000
UID_COUNT = 64
# What a uid's lock file says about the uid: TAKEN from a take to its release, CLEAN once a release found that run's
# processes and folder gone. A take that finds anything else (TAKEN: its grader died holding the lock; nothing: a
# new file, or a grader from before these words) clears the uid first. A take that finds CLEAN costs one read,
# where a look at /proc and the run folders costs milliseconds holding the GIL.
TAKEN, CLEAN = b"taken", b"clean"


class UidPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._retired: set[int] = set()  # uids a run left owning kernel keys we could not remove (see keyrings)

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
                    if uid in self._retired or self._retired_before(folder, uid):
                        continue
                    fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        os.close(fd)
                        continue
                    # Round robin, so a uid whose killed processes are still being reaped rests a while.
                    self._next = (start + i + 1) % UID_COUNT
                    break
                else:
                    uid = -1
                    if len(self._retired) == UID_COUNT:
                        raise RuntimeError("every run uid was retired: runs left kernel keys that could not be removed")
            if uid >= 0:
                if os.pread(fd, len(CLEAN), 0) != CLEAN:  # what a grader that died holding it left under this uid
                    if processes_of(uid):
                        kill_uid(uid)  # its leftover processes would count against RLIMIT_NPROC, or meddle
                    _remove_stale_folders(uid)
                os.pwrite(fd, TAKEN, 0)
                return uid, fd
            if stop_requested.is_set():
                raise Stopped()
            time.sleep(0.01)

    def _retired_before(self, folder: str, uid: int) -> bool:
        """Whether an earlier grader retired uid and it still owns keys: then this grader skips it at once instead
        of spending a second in clear_uid finding that out again (one read of /proc/key-users). A uid whose keys
        have gone since is in the pool again."""
        marker = os.path.join(folder, f"{uid}.retired")
        if not os.path.exists(marker):
            return False
        if keys_of(uid):
            self._retired.add(uid)
            return True
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker)
        return False

    def retire(self, uid: int) -> None:
        """Never hand uid to a run again while it owns keys: something a run left under it cannot be removed. The
        marker in the pool's root-only folder tells later graders too."""
        with self._lock:
            self._retired.add(uid)
        with open(os.path.join(self.folder(), f"{uid}.retired"), "w") as marker:
            marker.write(f"{keys_of(uid)} keys\n")

    @staticmethod
    def release(fd: int, clean: bool = True) -> None:
        """Give the uid back once its run is over. clean: the supervisor killed every process of the run and the
        runner removed its folder. Otherwise (or when a grader dies before this) the lock file keeps saying TAKEN,
        so the next take clears the uid."""
        if clean:
            os.pwrite(fd, CLEAN, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


pool = UidPool()


def _remove_stale_folders(uid: int) -> None:
    """Delete run folders of this uid left by a grader that was killed (we hold the uid's lock: none is in use)."""
    for folder in every_runs_dir():
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(f"autograde-run-{uid}-") and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)


def kill_uid(uid: int) -> None:
    """SIGKILL every process of uid. kill(-1) run as that uid is one atomic step, so even a fork bomb is caught."""
    kill = tool("kill")
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
    return [pid for pid, _ in _running_as(uid)]


def tasks_of(uid: int) -> int:
    """How many tasks uid runs, every thread of its processes counted: what RLIMIT_NPROC holds a new one against."""
    return sum(threads for _, threads in _running_as(uid))


def _running_as(uid: int) -> list[tuple[int, int]]:
    """(pid, its number of threads) of each process whose real uid is uid."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as status:
                threads = 1  # a zombie's status may end before its Threads line
                mine = False
                for line in status:
                    if line.startswith(b"Uid:"):
                        mine = int(line.split()[1]) == uid
                        if not mine:
                            break
                    elif line.startswith(b"Threads:"):
                        threads = int(line.split()[1])
                        break
                if mine:
                    found.append((int(name), threads))
        except (OSError, ValueError, IndexError):
            continue
    return found


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
