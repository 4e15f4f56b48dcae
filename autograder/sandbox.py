"""Run one untrusted Python child under the strongest isolation this machine offers, with limits.

Two levels, chosen once by detect():

* "bubblewrap": the child runs in fresh user, pid, net, ipc, uts and mount namespaces (`bwrap --unshare-all`)
  that see only the Python runtime (read-only), its own submission folder (read-only), a small private tmpfs
  /tmp and a minimal /proc and /dev. When the run ends the pid namespace dies and takes every process with it.
* "rlimits": the fallback when bubblewrap is missing or does not work. The child runs directly, in a folder
  only it can read, with the same resource limits.

At both levels, when the grader runs as root, each concurrent run gets its own unprivileged uid from a pool
(61000-61063): RLIMIT_NPROC only counts (and is only enforced) for a real non-root uid. When a run ends, every
process it started goes with it: under bubblewrap the pid namespace dies with bwrap's init (setsid grandchildren
included); at the rlimits level `kill -KILL -1` executed as that uid removes them in one step that a fork bomb
cannot outrun. The child gets stdin from a file, stdout+stderr on one capped pipe and a
reply pipe on file descriptor 3.

Set AUTOGRADE_ISOLATION=rlimits (or =bubblewrap) to force a level, AUTOGRADE_CHILD_PYTHON to choose the
interpreter the child runs under.
"""

from __future__ import annotations

import fcntl
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

UID_BASE = 61000
UID_COUNT = 64
REPLY_CAP = 64 << 20
TMPFS_BYTES = 64 << 20
SANDBOX_DIR = "/submission"  # where the submission folder appears inside bubblewrap
_DRAIN_SECONDS = 1.0  # after the child ends, how long to wait for the pipes to report end-of-file
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Limits:
    cpu_seconds: float = 10.0
    wall_seconds: float = 20.0
    memory_bytes: int = 1 << 30  # RLIMIT_AS
    output_bytes: int = 256 << 10  # stdout+stderr kept; further output is read and discarded
    file_bytes: int = 16 << 20  # RLIMIT_FSIZE
    processes: int = 64  # RLIMIT_NPROC for the unprivileged uid


@dataclass
class Outcome:
    status: str  # "exited" | "timeout" | "killed" | "output-limit" | "sandbox-error"
    returncode: int | None  # exit code, or minus the signal number when killed by a signal
    reply: bytes  # what the child wrote to file descriptor 3 (at most REPLY_CAP)
    output: bytes  # stdout+stderr, at most limits.output_bytes
    wall_seconds: float
    cpu_seconds: float  # CPU of the processes we reap; under bubblewrap only bwrap's own (its init is not ours)
    detail: str  # one sentence explaining a non-"exited" status (or noting discarded output)


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap" or "rlimits"
    detail: str


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


_cache_lock = threading.Lock()
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


def detect(fresh: bool = False) -> Isolation:
    """The strongest level that really works here (tried once with a real child, then cached; fresh: try again)."""
    global _isolation
    with _cache_lock:
        if _isolation is not None and not fresh:
            return _isolation
    forced = os.environ.get("AUTOGRADE_ISOLATION", "").strip().lower()
    bwrap = _tool("bwrap")
    who = "an unprivileged uid per run" if is_root() else f"the grader's own uid {os.getuid()} (not root)"
    if forced == "rlimits":
        found = Isolation("rlimits", f"AUTOGRADE_ISOLATION=rlimits: rlimits and {who} only")
    elif bwrap is None:
        found = Isolation("rlimits", f"bubblewrap not installed: rlimits and {who} only")
    else:
        version = bwrap_version(bwrap)
        trial = Isolation("bubblewrap", f"{version} with user, pid, net, ipc, uts namespaces and {who}")
        probe = run({"probe.py": b"import os\nos.write(3, b'ok')\n"}, "probe.py", b"", Limits(wall_seconds=30), trial)
        if probe.status == "exited" and probe.returncode == 0 and probe.reply == b"ok":
            found = trial
        elif forced == "bubblewrap":
            raise RuntimeError(f"AUTOGRADE_ISOLATION=bubblewrap but bubblewrap fails here: {_why(probe)}")
        else:
            found = Isolation("rlimits", f"{version} is installed but fails here ({_why(probe)}): rlimits and {who}")
    with _cache_lock:
        _isolation = found
        return _isolation


def _why(outcome: Outcome) -> str:
    text = outcome.output.decode("utf-8", "replace").strip().splitlines()
    return (text[-1] if text else outcome.detail or outcome.status)[:200]


# ---------------------------------------------------------------------------------------------------------------
# The uid pool: flock files make a uid exclusive across threads and across grader processes.


class _UidPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._swept: set[int] = set()

    def _folder(self) -> str:
        folder = (
            "/run/autograde-uids" if os.path.isdir("/run") else os.path.join(tempfile.gettempdir(), "autograde-uids")
        )
        os.makedirs(folder, mode=0o700, exist_ok=True)  # root only: children must not grab or hold the locks
        return folder

    def acquire(self) -> tuple[int, int]:
        folder = self._folder()
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
            time.sleep(0.01)

    @staticmethod
    def release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


_pool = _UidPool()


def _remove_stale_folders(uid: int) -> None:
    """Delete run folders of this uid left by a grader that was killed (we hold the uid's lock: none is in use)."""
    for entry in os.scandir(tempfile.gettempdir()):
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
# One run


def _check_name(name: str) -> None:
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        raise ValueError(f"sandbox file names must be flat, got {name!r}")


def _rlimit_args(limits: Limits, uid: int | None) -> list[str]:
    cpu = max(1, math.ceil(limits.cpu_seconds))
    args = [
        f"--cpu={cpu}:{cpu + 1}",  # SIGXCPU at the soft limit, SIGKILL a second later for a child that ignores it
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        "--core=0",
    ]
    if uid is not None:
        args.append(f"--nproc={limits.processes}")
    else:
        # Not root: the count covers all of our own processes, so allow that many more than already run.
        args.append(f"--nproc={len(processes_of(os.getuid())) + limits.processes}")
    return args


def _bwrap_args(bwrap: str, folder: str, python: str, prefix: str) -> list[str]:
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
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
) -> Outcome:
    """Run `python -I -S script` in a fresh folder holding files, under the isolation given (or detected)."""
    for name in files:
        _check_name(name)
    _check_name(script)
    isolation = isolation or detect()
    started = time.monotonic()
    uid, lock_fd, base = None, -1, None
    try:
        if is_root():
            uid, lock_fd = _pool.acquire()
        base = tempfile.mkdtemp(prefix=f"autograde-run-{uid}-" if uid is not None else "autograde-run-")
        return _run(base, files, script, stdin, limits, isolation, uid)
    except Exception as error:  # a failure of ours, not of the child: say so rather than crash a grading thread
        return Outcome("sandbox-error", None, b"", b"", time.monotonic() - started, 0.0, f"sandbox failed: {error!r}")
    finally:
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
        if uid is not None:
            _pool.release(lock_fd)


def _run(
    base: str, files: dict[str, bytes], script: str, stdin: bytes, limits: Limits, isolation: Isolation, uid: int | None
) -> Outcome:
    python, prefix = child_python()
    folder, tmp = _prepare(base, files, uid)
    prlimit, setpriv = _tool("prlimit"), _tool("setpriv")
    if prlimit is None or (uid is not None and setpriv is None):
        raise RuntimeError("prlimit and setpriv (util-linux) are needed")
    argv = [prlimit, *_rlimit_args(limits, uid), "--"]
    if uid is not None:
        ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += [setpriv, *ids, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    if isolation.level == "bubblewrap":
        bwrap = _tool("bwrap")
        if bwrap is None:
            raise RuntimeError("bubblewrap level requested but bwrap is not installed")
        argv += _bwrap_args(bwrap, folder, python, prefix)
        where, tmp = SANDBOX_DIR, "/tmp"
    else:
        where = folder
        env_tool = _tool("env")
        if env_tool is None:
            raise RuntimeError("env (coreutils) is needed")
        argv += [env_tool, "-C", folder, "--"]  # posix_spawn cannot chdir and os.chdir would move every thread
    argv += [python, "-I", "-S", os.path.join(where, script)]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": tmp, "TMPDIR": tmp}

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
        return _supervise(pid, out_r, reply_r, limits, isolation, uid, time.monotonic())
    finally:
        os.close(out_r)
        os.close(reply_r)
        if uid is not None and isolation.level == "rlimits":
            _remove_leftovers(uid)


def _remove_leftovers(uid: int) -> None:
    """Delete what the run's uid left in the shared temporary folders, so no run can pass files to a later one."""
    for shared in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            entries = list(os.scandir(shared))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)  # rmtree does not follow symlinks
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _supervise(
    pid: int, out_r: int, reply_r: int, limits: Limits, isolation: Isolation, uid: int | None, spawned: float
) -> Outcome:
    output, reply = bytearray(), bytearray()
    dropped = 0
    status, detail, wait_status, rusage = "", "", None, None
    deadline = spawned + limits.wall_seconds
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1  # old kernel: poll for the exit below
    selector = selectors.DefaultSelector()
    selector.register(out_r, selectors.EVENT_READ)
    selector.register(reply_r, selectors.EVENT_READ)
    if pidfd >= 0:
        selector.register(pidfd, selectors.EVENT_READ)

    def kill_all() -> None:
        os.kill(pid, signal.SIGKILL)  # not reaped yet, so still ours; bwrap's init follows it (--die-with-parent)
        if isolation.level == "bubblewrap":
            return  # the pid namespace dies with bwrap's init and takes every process in it, setsid or not
        if uid is not None:
            kill_uid(uid)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    try:
        open_pipes, drain_until, end = 2, None, spawned
        while True:
            now = time.monotonic()
            if wait_status is None:
                # WNOWAIT: the exited child stays a zombie, so its pid cannot be reused before kill_all() ran.
                finished = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
                if not finished and now >= deadline:
                    status, detail = "timeout", f"still running after the wall-clock limit of {limits.wall_seconds:g} s"
                    finished = True
                if finished:
                    end = now
                    kill_all()  # grandchildren (setsid or not) must not outlive the run, nor hold our pipes open
                    wait_status, rusage = os.wait4(pid, 0)[1:]
                    drain_until = time.monotonic() + _DRAIN_SECONDS
            if not open_pipes and wait_status is not None:
                break
            if drain_until is not None and now >= drain_until:
                break
            limit = max(0.0, (drain_until if drain_until is not None else deadline) - now)
            events = selector.select(min(limit, 0.05) if pidfd < 0 else limit)
            for key, _ in events:
                fd = key.fd
                if fd == pidfd:
                    selector.unregister(pidfd)
                    continue
                data = os.read(fd, _CHUNK)
                if not data:
                    selector.unregister(fd)
                    open_pipes -= 1
                elif fd == out_r:
                    room = max(0, limits.output_bytes - len(output))
                    output += data[:room]
                    dropped += len(data) - min(room, len(data))  # keep reading: a blocked writer never finishes
                elif status:
                    pass  # over a limit and being killed: what still arrives is not the child's reply
                elif len(reply) + len(data) <= REPLY_CAP:
                    reply += data
                else:
                    status, detail = "output-limit", f"the reply on file descriptor 3 exceeded {REPLY_CAP} bytes"
                    kill_all()
    finally:
        selector.close()
        if pidfd >= 0:
            os.close(pidfd)
        if wait_status is None:  # an exception of ours: still leave nothing behind
            kill_all()
            os.wait4(pid, 0)

    cpu = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
    code = os.waitstatus_to_exitcode(wait_status)
    if isolation.level == "bubblewrap" and 128 < code <= 128 + 64:
        code = -(code - 128)  # bwrap's init reports a child killed by signal N as exit code 128 + N
    if status == "timeout":
        code = None
    elif not status:
        if code is not None and code < 0:
            status, detail = "killed", _signal_detail(-code, cpu, limits)
        else:
            status = "exited"
            if dropped:
                detail = f"{dropped} bytes of output beyond the first {limits.output_bytes} were discarded"
    return Outcome(status, code, bytes(reply), bytes(output), end - spawned, cpu, detail)


def _signal_detail(number: int, cpu: float, limits: Limits) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu >= math.ceil(limits.cpu_seconds) - 0.05):
        return f"killed by {name} after using the CPU time limit of {limits.cpu_seconds:g} s"
    if number == signal.SIGKILL:
        return f"killed by {name} (out of memory, or the CPU limit of a child process)"
    return f"killed by {name}"
