"""One run: its folder, uid and cgroup, the command line of the chosen level, spawning the child, and cleaning up."""

from __future__ import annotations

import fcntl
import math
import os
import shutil
import signal
import tempfile
import time

from autograder.grading.sandbox.bubblewrap import BWRAP_PROCESSES, SANDBOX_DIR, bwrap_args
from autograder.grading.sandbox.cgroups import Group, cgroup_tree
from autograder.grading.sandbox.fallback import mount_plan, remove_leftovers, unshare_args
from autograder.grading.sandbox.folders import RUNS_DIR, check_name, prepare, runs_dir
from autograder.grading.sandbox.host import child_python, is_root, tool
from autograder.grading.sandbox.isolation import Isolation, detect_with
from autograder.grading.sandbox.keyrings import clear_uid, spawn
from autograder.grading.sandbox.limits import Limits
from autograder.grading.sandbox.outbox import MORE_FD, Outbox
from autograder.grading.sandbox.run_result import RunResult
from autograder.grading.sandbox.stopping import Stopped, active_runs, active_runs_lock, stop_requested
from autograder.grading.sandbox.supervisor import Supervisor
from autograder.grading.sandbox.uids import pool, tasks_of
from autograder.grading.sandbox.wrapper import SH, WRAPPER, WRAPPER_FAILED


def detect(fresh: bool = False) -> Isolation:
    """The strongest level that really works here (tried once with a real child, then cached; fresh: try again).

    Raises RuntimeError (one line) when the only thing left would be no isolation from the grader and
    AUTOGRADE_ISOLATION=none was not given, or when a level or cgroup version forced by the environment fails.
    """
    return detect_with(run, fresh)


def _cancelled(started: float, detail: str = "grading was stopped before this run started") -> RunResult:
    return RunResult("cancelled", None, b"", b"", time.monotonic() - started, 0.0, detail)


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
        args.append(f"--nproc={limits.processes + (BWRAP_PROCESSES if bubblewrap else 0)}")
    else:
        # Not root: the kernel counts every task of our uid, each thread of the grader's and of the user's other
        # programs (a browser has hundreds), so allow that many more than already run.
        args.append(f"--nproc={tasks_of(os.getuid()) + limits.processes + BWRAP_PROCESSES}")
    return args


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


def _stdin_file(data: bytes) -> int:
    """A file holding data, read from its start: a file, not a pipe, so a child that never reads cannot block us. In
    memory (memfd) where the kernel has it, sealed so that the child can neither write it nor change its size: a
    temporary file on some disks costs more than half a millisecond."""
    try:
        fd = os.memfd_create("autograde-stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        with tempfile.TemporaryFile() as file:
            return _filled(os.dup(file.fileno()), data)
    return _filled(fd, data, seal=True)


def _filled(fd: int, data: bytes, seal: bool = False) -> int:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        if seal:
            seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _high(fd: int) -> int:
    """A close-on-exec copy numbered 10 or more, so the dup2 file actions onto 0-3 never collide."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return copy


def run(
    files: dict[str, bytes],
    script: str,
    stdin: bytes,
    limits: Limits,
    isolation: Isolation | None = None,
    reader=None,
    outbox: Outbox | None = None,
) -> RunResult:
    """Run `python -I -S script` in a fresh folder holding files, under the isolation given (or detected).

    reader: an object whose feed(chunk) reads the reply channel as it arrives (nothing of it is kept here) and
    returns True once it has all it needs (e.g. protocol.ReplyReader): then every process of the run is killed
    at once, whatever it still does, and the status is "done".
    outbox: what the reader sends the child while it runs, on file descriptor 4 (see outbox.py).
    """
    for name in files:
        check_name(name)
    check_name(script)
    started = time.monotonic()
    if stop_requested.is_set():
        return _cancelled(started)
    isolation = isolation or detect()
    uid, lock_fd, base, group = None, -1, None, None
    with active_runs_lock:
        active_runs[0] += 1
    try:
        if isolation.level == "rlimits" and not is_root():
            raise RuntimeError("the rlimits level needs root (it runs the child as another uid)")
        if is_root():
            uid, lock_fd = pool.acquire()
            while not clear_uid(uid, child_python()[0]):  # keys left by a grader that crashed, or locked by a run
                pool.retire(uid)
                pool.release(lock_fd)
                uid = None
                uid, lock_fd = pool.acquire()
        folder = runs_dir(in_memory=isolation.level == "bubblewrap")
        if folder == RUNS_DIR:
            os.makedirs(RUNS_DIR, mode=0o711, exist_ok=True)
        base = tempfile.mkdtemp(prefix=f"autograde-run-{uid}-" if uid is not None else "autograde-run-", dir=folder)
        if isolation.cgroups != "none":
            tree, reason = cgroup_tree()
            if tree is None or tree.version != isolation.cgroups:
                raise RuntimeError(f"cgroup {isolation.cgroups} asked for, but {reason or 'not the one in use'}")
            extra = BWRAP_PROCESSES if isolation.level == "bubblewrap" else 0
            group = tree.create(limits, extra)
        return _run(base, files, script, stdin, limits, isolation, uid, group, reader, outbox)
    except Stopped:
        return _cancelled(started)
    except Exception as error:  # a failure of ours, not of the child: say so rather than crash a grading thread
        return RunResult("sandbox-error", None, b"", b"", time.monotonic() - started, 0.0, f"sandbox failed: {error!r}")
    finally:
        if outbox is not None:
            outbox.shut()
        if group is not None:
            group.remove()
        removed = True
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
            removed = not os.path.lexists(base)  # if not, the next take of this uid removes it
        if uid is not None:
            try:
                if not clear_uid(uid, child_python()[0]):  # its keyrings: later runs get this uid too
                    pool.retire(uid)
            finally:
                pool.release(lock_fd, clean=removed)
        with active_runs_lock:
            active_runs[0] -= 1


def _run(
    base: str,
    files: dict[str, bytes],
    script: str,
    stdin: bytes,
    limits: Limits,
    isolation: Isolation,
    uid: int | None,
    group: Group | None,
    reader=None,
    outbox: Outbox | None = None,
) -> RunResult:
    python, prefix = child_python()
    folder, tmp = prepare(base, files, uid)
    prlimit, setpriv = tool("prlimit"), tool("setpriv")
    if prlimit is None or (uid is not None and setpriv is None):
        raise RuntimeError("prlimit and setpriv (util-linux) are needed")
    bubblewrap = isolation.level == "bubblewrap"
    token = os.urandom(8).hex()
    argv: list[str] = []
    private = mount_plan((python, prefix, base)) if isolation.level == "rlimits" else None
    if private:
        argv += unshare_args(tool("unshare") or "unshare")
    if group is not None or private:
        argv += [SH, "-c", WRAPPER, "sh", token, *(group.enter_files if group else [])]
        argv += (["-m", private] if private else []) + ["--"]
    argv += [prlimit, *_rlimit_args(limits, uid, group is not None, bubblewrap), "--"]
    if uid is not None:
        ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += [setpriv, *ids, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    if bubblewrap:
        bwrap = tool("bwrap")
        if bwrap is None:
            raise RuntimeError("bubblewrap level requested but bwrap is not installed")
        argv += bwrap_args(bwrap, folder, python, prefix)
        where, tmp = SANDBOX_DIR, "/tmp"
    else:
        where = folder
        if private:
            tmp = "/tmp"  # the run's own tmpfs
        env_tool = tool("env")
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

    in_fd = _high(_stdin_file(stdin))
    out_r, out_w = os.pipe()
    reply_r, reply_w = os.pipe()
    out_w, reply_w = _high(out_w), _high(reply_w)
    handed = [in_fd, out_w, reply_w]  # the child's ends, closed here once it is spawned
    actions = [
        (os.POSIX_SPAWN_DUP2, in_fd, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, out_w, 2),
        (os.POSIX_SPAWN_DUP2, reply_w, 3),
    ]
    if outbox is not None:
        more_r = _high(outbox.open())
        handed.append(more_r)
        actions.append((os.POSIX_SPAWN_DUP2, more_r, MORE_FD))
    ours = {*handed, out_r, reply_r, outbox.fd if outbox is not None else -1}
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds(ours)]
    try:
        try:
            # posix_spawn is safe with several grading threads (no Python code runs between fork and exec); spawn()
            # calls it from a thread whose session keyring is fresh for each child (see keyrings).
            pid = spawn(
                argv[0],
                argv,
                env,
                file_actions=actions,
                setsid=True,
                setsigmask=(),
                setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU),  # Python ignores the first two
            )
        finally:
            for fd in handed:
                os.close(fd)
        run = Supervisor(pid, out_r, reply_r, limits, isolation, uid, group, watch, reader, outbox)
        outcome = run.supervise()
        if outcome.returncode == WRAPPER_FAILED and token.encode() in outcome.output:
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
            remove_leftovers(uid)
