"""The kernel's keyrings, which no namespace but the user namespace separates: every run starts with a fresh, empty
session keyring (not the grader's, which may hold an instructor's keys), and a run's uid keeps no key after its run.

A child possesses every key in the session keyring it inherits, whatever its uid, so a grader started from a login
session (`su -l`, `runuser -l`, ssh) would hand its keys to student code, and a key a child added would stay in the
instructor's session. Each child is therefore spawned from a thread that joins a new anonymous session keyring
before every spawn and drops it right after (keyrings belong to a thread's credentials, so the grader's other
threads keep theirs): one thread of ours, or a grading thread that gave up the grader's keyring for good. The
run's user keyring (`@u`), user session keyring (`@us`) and persistent keyring are per uid and per user namespace:
under bubblewrap they live in the run's own user namespace and die with it; at the rlimits level the pool's uids
are shared by later runs, so after a run whose uid owns keys they are emptied and invalidated as that uid. A child
can lock its own keyrings against that (KEYCTL_SETPERM 0); such a uid is retired.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import queue
import subprocess
import threading
import time

from autograder.grading.sandbox.host import read_text

# (add_key, keyctl) syscall numbers by machine; the asm-generic table serves aarch64 and riscv64. Elsewhere the grader
# cannot give runs their own session keyring (`autograde doctor` says so).
_SYSCALLS = {
    "x86_64": (248, 250),
    "aarch64": (217, 219),
    "riscv64": (217, 219),
    "i686": (286, 288),
    "armv7l": (309, 311),
    "ppc64le": (269, 271),
    "s390x": (278, 280),
}
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_READ = 0, 1, 11
KEYCTL_CLEAR, KEYCTL_INVALIDATE, KEYCTL_GET_PERSISTENT = 7, 21, 22
KEY_SPEC_THREAD_KEYRING, KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -1, -3, -4, -5
_UNAVAILABLE = (errno.ENOSYS, errno.EPERM, errno.EACCES)  # no keyrings (an old kernel, or a seccomp filter)
_libc = None


def _syscall(number: int, *args) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def keyctl(operation: int, *args: int) -> int:
    """keyctl(2) with integer arguments. Raises OSError (ENOSYS where this machine's numbers are not known)."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(errno.ENOSYS, f"keyctl syscall number unknown on {platform.machine()}")
    return _syscall(numbers[1], ctypes.c_long(operation), *(ctypes.c_long(arg) for arg in args))


def add_key(kind: str, description: str, payload: bytes, keyring: int) -> int:
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise OSError(errno.ENOSYS, f"add_key syscall number unknown on {platform.machine()}")
    return _syscall(
        numbers[0], kind.encode(), description.encode(), payload, ctypes.c_size_t(len(payload)), ctypes.c_long(keyring)
    )


def join_fresh_session() -> bool:
    """Give the calling thread a new, empty, anonymous session keyring. False where keyrings are not available."""
    try:
        keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0)
    except OSError as error:
        if error.errno in _UNAVAILABLE:
            return False
        raise
    return True


# ---------------------------------------------------------------------------------------------------------------
# The spawning thread: it lives as long as the grader (bubblewrap's --die-with-parent follows the thread that
# spawned it), and its session keyring is never one a child has had. A grading thread of our own pools spawns its
# children itself (spawning_thread(), the pools' initializer): handing each spawn to the spawning thread and back
# cost two thread wake-ups, about 3.5 ms a run on two busy cores, against 0.3 ms for posix_spawn itself.

_own = threading.local()  # .spawns: this thread spawns its children itself


def spawning_thread() -> None:
    """Make the calling thread spawn its children itself. It drops its session keyring at once (the instructor's,
    inherited from the thread that started it) and holds a fresh one between spawns, so from then on it has no key
    of the grader's and no keyring a child has had. Only for threads that do nothing else needing keys: our grading
    pools' workers, whose thread also supervises each run it spawns to its end."""
    try:
        join_fresh_session()
    except OSError:
        return  # this thread keeps handing its spawns over; the spawning thread reports the failure, run by run
    _own.spawns = True


def _spawn_fresh(args, kwargs) -> int:
    """os.posix_spawn with a new session keyring for the child, dropped by this thread right after."""
    join_fresh_session()  # fails loudly unless keyrings are not available at all
    pid = os.posix_spawn(*args, **kwargs)
    try:
        join_fresh_session()  # drop our reference: the child's keyring dies with the child
    except OSError:
        pass  # the next spawn joins a fresh one before it starts
    return pid


class _Spawner:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue | None = None
        self._pid = -1

    def spawn(self, *args, **kwargs) -> int:
        if getattr(_own, "spawns", False):
            return _spawn_fresh(args, kwargs)
        with self._lock:
            if self._requests is None or self._pid != os.getpid():  # first use, or a fork of the grader
                self._requests, self._pid = queue.SimpleQueue(), os.getpid()
                threading.Thread(
                    target=self._serve, args=(self._requests,), name="sandbox-spawner", daemon=True
                ).start()
            requests = self._requests
        answer: queue.SimpleQueue = queue.SimpleQueue()
        requests.put((args, kwargs, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value

    @staticmethod
    def _serve(requests: queue.SimpleQueue) -> None:
        while True:
            args, kwargs, answer = requests.get()
            try:
                answer.put((True, _spawn_fresh(args, kwargs)))
            except BaseException as error:  # noqa: BLE001 (handed to the caller)
                answer.put((False, error))


spawn = _Spawner().spawn  # os.posix_spawn, run from a thread whose session keyring is fresh


# ---------------------------------------------------------------------------------------------------------------
# A run uid's own keyrings at the rlimits level.

# Run as the uid: empty and invalidate its user, user session and persistent keyrings (by number, so looking one
# up does not create the others again). Prints what it could not remove.
_CLEAR = """
import ctypes, os, platform
numbers = {numbers!r}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def keyctl(*args):
    return libc.syscall(ctypes.c_long(numbers[1]), *(ctypes.c_long(a) for a in args))
rings = [keyctl(0, -4, 1), keyctl(0, -5, 1), keyctl(22, -1, -1)]
for ring in rings:
    if ring > 0 and (keyctl(7, ring) < 0 or keyctl(21, ring) < 0):
        print(ring, os.strerror(ctypes.get_errno()))
"""


def keys_of(uid: int) -> int:
    """How many keys uid owns, from /proc/key-users (any user may read it; a key's owner cannot hide it there)."""
    try:
        lines = read_text("/proc/key-users").splitlines()
    except OSError:
        return 0
    for line in lines:
        who, _, rest = line.partition(":")
        if who.strip() == str(uid):
            try:
                return int(rest.split()[1].split("/")[0])
            except (IndexError, ValueError):
                return 0
    return 0


def clear_uid(uid: int, python: str) -> bool:
    """After a run (its processes gone): leave uid owning no key. False when some stay (the uid must be retired).

    Free when the run made no key (one read of /proc/key-users); else one short interpreter run as uid.
    """
    if not keys_of(uid):
        return True
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is not None:
        subprocess.run(
            [python, "-I", "-S", "-c", _CLEAR.format(numbers=_SYSCALLS)],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    deadline = time.monotonic() + 1.0  # the kernel frees unreferenced keys a moment later, in its own worker
    while keys_of(uid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
