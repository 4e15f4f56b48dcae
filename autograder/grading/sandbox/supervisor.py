"""Watching one running child: its output and reply (capped, or read as it arrives), the whole run's limits, the
wall-clock backstop and hard bound, and killing everything it started when it ends (or says it is done)."""

from __future__ import annotations

import collections
import math
import os
import select
import selectors
import signal
import time

from autograder.grading.sandbox.fallback import DISK_TICK, bytes_of, shared_places
from autograder.grading.sandbox.host import cpus, read_text, stat_fields
from autograder.grading.sandbox.limits import COMPUTING_RATE, TMPFS_BYTES, hard_cap
from autograder.grading.sandbox.run_result import (
    WALL_CAP,
    RunResult,
    cpu_detail,
    done_detail,
    memory_detail,
    signal_detail,
)
from autograder.grading.sandbox.stopping import stop_fd, stop_requested
from autograder.grading.sandbox.uids import kill_uid

REPLY_CAP = 4 << 20  # a reply kept whole (a run without a reader); the tournament's child writes at most 2 MiB
_DRAIN_SECONDS = 1.0  # after the child ends, how long to wait for the pipes to report end-of-file
_CHUNK = 1 << 16
_REAP_SECONDS = 0.5  # how long bwrap gets to reap its killed child and exit before it is killed itself
_TICK = 0.1  # the longest the supervisor sleeps between looks at a running child (stop_all, CPU, memory)
_WINDOW = 1.0  # the wall-clock backstop looks at this much recent history to tell computing from waiting


class Supervisor:
    """Watch one child: collect its output and reply, enforce the whole run's limits, kill everything at the end."""

    def __init__(self, pid, out_r, reply_r, limits, isolation, uid, group, watch, reader=None, outbox=None):
        self.pid, self.out_r, self.reply_r, self.reader, self.outbox = pid, out_r, reply_r, reader, outbox
        self.writing = False  # the outbox's pipe is watched for room
        self.limits, self.isolation, self.uid, self.group, self.watch = limits, isolation, uid, group, watch
        self.spawned = time.monotonic()
        self.status = ""
        self.detail = ""
        self.samples: collections.deque[tuple[float, float]] = collections.deque(maxlen=64)

    def kill_all(self) -> None:
        if self.isolation.level == "bubblewrap":
            self._end_namespace()
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

    def _end_namespace(self) -> None:
        """Kill the namespace's pid 1 (the kernel ends every process in it) and give bwrap a moment to reap it and
        exit. Killed first, bwrap would leave its child an orphan: a zombie for whoever reaps orphans here (nobody,
        when the grader is a container's pid 1), counted against its uid's process limit until then."""
        for child in _children(self.pid):
            try:
                child_fd = os.pidfd_open(child)
            except OSError:
                continue  # gone already
            try:
                if stat_fields(child)[1:2] == [str(self.pid)]:  # still bwrap's own child, not a pid used again since
                    signal.pidfd_send_signal(child_fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(child_fd)
        try:
            bwrap_fd = os.pidfd_open(self.pid)
        except OSError:
            return
        try:
            select.select([bwrap_fd], [], [], _REAP_SECONDS)  # readable once bwrap has exited
        finally:
            os.close(bwrap_fd)

    def _cpu_now(self) -> float:
        return self.group.cpu_seconds() if self.group is not None else _tree_cpu(self.pid)

    def _computing(self, now: float) -> bool:
        """Was the run computing lately: COMPUTING_RATE or more over the last second?

        Measured CPU time only: a process merely ready to run at the moment of the look does not count, or short
        bursts between sleeps, timed for the looks, would keep a run that mostly waits going.
        """
        used = self._cpu_now()
        self.samples.append((now, used))
        then, before = next(((t, c) for t, c in self.samples if now - t <= _WINDOW * 1.5), (self.spawned, 0.0))
        if now - then < _WINDOW / 2 and then != self.spawned:
            then, before = self.spawned, 0.0
        return (used - before) / max(now - then, 1e-3) >= COMPUTING_RATE

    def _check(self, now: float) -> float:
        """Look at the run's totals; set status when a limit is reached. Returns when to look next."""
        limits = self.limits
        if self.group is not None:
            used = self.group.cpu_seconds()
            self.samples.append((now, used))
            if used >= limits.cpu_seconds:
                self.status = "timeout"
                self.detail = cpu_detail(limits)
                return now
            if self.group.oom_kills():
                self.status, self.detail = "killed", memory_detail(limits)
                return now
            # All its processes together use at most one CPU second per core per second.
            step = min(_TICK, max(0.005, (limits.cpu_seconds - used) / cpus()))
        else:
            step = DISK_TICK if self.watch else _TICK
            if now >= self.deadline - _WINDOW * 1.5:
                self.samples.append((now, _tree_cpu(self.pid)))
        if self.watch and now >= self.next_disk:
            self.next_disk = now + DISK_TICK
            if bytes_of(self.uid, shared_places()) > TMPFS_BYTES:
                self.status = "output-limit"
                self.detail = f"it wrote more than {TMPFS_BYTES >> 20} MiB to the shared temporary folders"
                return now
        if now >= self.deadline:
            elapsed = now - self.spawned
            if elapsed >= self.cap:
                self.status = "timeout"
                self.detail = (
                    f"{WALL_CAP} of {self.cap:g} s ran out, after {self._cpu_now():.1f} s of its "
                    f"{limits.cpu_seconds:g} s of CPU time"
                )
                if limits.wall_cap is not None and self.cap >= limits.wall_cap:
                    self.detail += " (what was left of the wall-clock time of all the student's stages together)"
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
        self.cap = hard_cap(limits)
        self.deadline = self.spawned + min(limits.wall_seconds, self.cap)
        self.next_disk = self.spawned
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1  # old kernel: poll for the exit below
        selector = selectors.DefaultSelector()
        selector.register(self.out_r, selectors.EVENT_READ)
        selector.register(self.reply_r, selectors.EVENT_READ)
        selector.register(stop_fd, selectors.EVENT_READ)
        if pidfd >= 0:
            selector.register(pidfd, selectors.EVENT_READ)
        watching_stop = True
        self._pump(selector)
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
                    if not finished and stop_requested.is_set():
                        self.status, self.detail = "cancelled", "stopped: grading was cancelled"
                    elif not finished and not self.status and now >= next_look:  # a status set is final
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
                    if fd == stop_fd:
                        if watching_stop:
                            selector.unregister(stop_fd)  # it stays readable: look once, not in a busy loop
                            watching_stop = False
                        continue
                    if self.outbox is not None and fd == self.outbox.fd:
                        self._pump(selector)
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
                    elif self.reader is not None:
                        if self.reader.feed(data):  # its last line (or a broken protocol): nothing else counts
                            self.status, self.detail = "done", done_detail()
                            next_look = time.monotonic()
                        elif self.outbox is not None:
                            self._pump(selector)  # what the reader queued on reading this
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
            if self.outbox is not None:
                self.outbox.shut()
            if wait_status is None:  # an exception of ours: still leave nothing behind
                self.kill_all()
                os.wait4(pid, 0)

        status, detail = self.status, self.detail
        if self.group is not None:
            self.group.kill()
            cpu = self.group.cpu_seconds()  # every process of the run, bwrap's and setsid grandchildren included
            if not status and self.group.oom_kills():
                status, detail = "killed", memory_detail(limits)
        else:
            cpu = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
        code = os.waitstatus_to_exitcode(wait_status)
        if self.isolation.level == "bubblewrap" and 128 < code <= 128 + 64:
            code = -(code - 128)  # bwrap reports a child killed by signal N as exit code 128 + N
        if status in ("timeout", "waiting", "cancelled", "done"):
            code = None
        elif status == "killed":
            code = code if code is not None and code < 0 else -signal.SIGKILL
        elif not status:
            if code is not None and code < 0:
                # The per-process CPU limit: the kernel checks it against tick-sampled CPU time, which can run
                # some percent ahead of the precise time measured here.
                rlimit = math.ceil(limits.cpu_seconds) + (1 if self.group is not None else 0)
                if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= rlimit * 0.9):
                    status, detail, code = "timeout", cpu_detail(limits), None
                else:
                    status, detail = "killed", signal_detail(-code)
            else:
                status = "exited"
                if dropped:
                    detail = f"{dropped} bytes of output beyond the first {limits.output_bytes} were discarded"
        return RunResult(status, code, bytes(reply), bytes(output), end - self.spawned, cpu, detail)

    def _pump(self, selector: selectors.BaseSelector) -> None:
        """Write what the outbox holds as far as its pipe takes it; watch the pipe for room while some is left."""
        fd = self.outbox.fd if self.outbox is not None else -1
        if fd < 0:
            return
        more = self.outbox.pump()
        if more and not self.writing:
            selector.register(fd, selectors.EVENT_WRITE)
        elif not more and self.writing:
            selector.unregister(fd)
        self.writing = more
        if self.outbox.finished:
            self.outbox.shut()  # the child reads end-of-file after the last of it


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in read_text(f"/proc/{pid}/task/{pid}/children").split()]
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
        fields = stat_fields(each)
        if len(fields) > 12:
            total += int(fields[11]) + int(fields[12])
    return total / ticks
