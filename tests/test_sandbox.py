"""Does the sandbox contain hostile children at every isolation level this machine offers? (Real processes.)"""

import hashlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder.grading import sandbox
from autograder.grading.sandbox import Isolation, Limits, cgroups, fallback, folders, host, supervisor, uids

ROOT = Path(__file__).resolve().parents[1]
RLIMITS = Isolation("rlimits", "chosen by the test")


def _bubblewrap() -> Isolation | None:
    if shutil.which("bwrap") is None:
        return None
    found = sandbox.detect()
    return found if found.level == "bubblewrap" else None


BWRAP = _bubblewrap()
LEVELS = [
    pytest.param(RLIMITS, id="rlimits"),
    pytest.param(
        BWRAP,
        id="bubblewrap",
        marks=pytest.mark.skipif(
            BWRAP is None,
            reason="bubblewrap missing, failing or AUTOGRADE_ISOLATION=rlimits (apt-get install -y bubblewrap)",
        ),
    ),
]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="a separate uid (and so RLIMIT_NPROC) needs root")
CGROUPS = pytest.mark.skipif(
    sandbox.cgroups_in_use() == "none", reason=f"no usable cgroups here: {cgroups.cgroup_tree()[1]}"
)
QUICK = Limits(cpu_seconds=5, wall_seconds=5)


def run(code: str, level: Isolation, limits: Limits = QUICK, stdin: bytes = b"", name: str = "child.py"):
    return sandbox.run({name: code.encode(), "helper.txt": b"data"}, name, stdin, limits, level)


def survivors(token: str) -> list[int]:
    """Pids of processes (anywhere on the machine) whose command line holds token."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_reply_stdin_and_working_folder(level):
    """Does a well-behaved child get its stdin and files, and does its fd 3 reply come back separate from stdout?"""
    code = "import os, sys\nprint('hello')\nos.write(3, sys.stdin.read().encode() + open('helper.txt', 'rb').read())\n"
    outcome = run(code, level, stdin=b"in:")
    assert (outcome.status, outcome.returncode, outcome.reply) == ("exited", 0, b"in:data")
    assert outcome.output == b"hello\n"
    assert outcome.wall_seconds < 5 and outcome.detail == ""


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    "code, returncode, reply",
    [
        ("import sys\nsys.exit(3)\n", 3, b""),
        ("raise ValueError('boom')\n", 1, b""),
        ("import os\nos.write(3, b'early')\nos._exit(0)\nos.write(3, b'never')\n", 0, b"early"),
        ("raise SystemExit(200)\n", 200, b""),
    ],
    ids=["exit-3", "exception", "os._exit", "exit-200"],
)
def test_exit_codes(level, code, returncode, reply):
    """Is the exit code reported as is, os._exit(0) included (an exit, but with no more reply than was sent)?"""
    outcome = run(code, level)
    assert (outcome.status, outcome.returncode, outcome.reply) == ("exited", returncode, reply)


@pytest.mark.parametrize("level", LEVELS)
def test_killed_by_signal(level):
    """Is a child that dies of a signal (a real fault, here reading address 0) reported as killed, minus its number?"""
    outcome = run("import ctypes\nctypes.string_at(0)\n", level)
    assert (outcome.status, outcome.returncode) == ("killed", -signal.SIGSEGV)
    assert "SIGSEGV" in outcome.detail


@pytest.mark.parametrize("level", LEVELS)
def test_sleeping_loop_ignoring_sigterm_is_waiting_and_gone(level):
    """Is a loop that sleeps and ignores SIGTERM stopped at the wall-clock backstop as "waiting", leaving nothing?"""
    token = uuid.uuid4().hex
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n"
    outcome = run(code, level, Limits(cpu_seconds=2, wall_seconds=1), name=f"loop_{token}.py")
    assert (outcome.status, outcome.returncode) == ("waiting", None), outcome
    assert 1 <= outcome.wall_seconds < 3
    assert "waiting (sleeping or blocked), not computing, for 1 s" in outcome.detail
    assert survivors(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_cpu_limit(level):
    """Does a busy loop end with status timeout at its CPU limit, long before the wall-clock backstop?"""
    outcome = run("while True:\n    pass\n", level, Limits(cpu_seconds=1, wall_seconds=10))
    assert (outcome.status, outcome.returncode) == ("timeout", None), outcome
    assert outcome.detail == "used the CPU time limit of 1 s (all its processes together)"
    assert 0.95 <= outcome.cpu_seconds < 1.3 and outcome.wall_seconds < 5


@pytest.mark.parametrize("level", LEVELS)
def test_setsid_grandchild_is_killed_when_the_child_exits(level):
    """Does a grandchild that escapes with setsid and ignores SIGTERM die with the run (its writes stop)?"""
    token = uuid.uuid4().hex
    # A folder the test owns and the child may write. The rlimits level gives a run a private /tmp over the
    # shared folders it found (once, as a grader does, so before this one exists): make it outside /tmp.
    sandbox.shared_places()
    watched = Path(tempfile.mkdtemp(prefix="sandbox-test-", dir="/run" if os.geteuid() == 0 else None))
    watched.chmod(0o777)
    target = watched / "log"
    code = f"""
import os, signal, time
if os.fork() == 0:
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        while True:
            try:
                with open({str(target)!r}, "a") as log:
                    log.write("x")
            except OSError:
                pass
            time.sleep(0.005)
    os._exit(0)
time.sleep(0.3)
os.write(3, b"parent done")
"""
    try:
        outcome = run(code, level, name=f"escape_{token}.py")
        assert (outcome.status, outcome.reply) == ("exited", b"parent done")
        assert outcome.wall_seconds < 3  # the grandchild did not hold the pipes open until the timeout
        assert survivors(token) == []
        if level.level == "rlimits" and os.geteuid() == 0:
            assert target.exists()  # it did write, under rlimits the test's folder is visible
        size = target.stat().st_size if target.exists() else 0
        time.sleep(0.2)
        assert (target.stat().st_size if target.exists() else 0) == size
    finally:
        shutil.rmtree(watched)


@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_fork_bomb_is_capped_and_cleaned_up(level):
    """Does RLIMIT_NPROC stop a fork bomb, and are all its processes gone afterwards?"""
    token = uuid.uuid4().hex
    code = """
import os, time
made = failed = 0
for _ in range(300):
    try:
        if os.fork() == 0:
            while True:
                time.sleep(1)
        made += 1
    except OSError:
        failed += 1
os.write(3, f"{made} {failed}".encode())
"""
    outcome = run(code, level, Limits(cpu_seconds=10, wall_seconds=10, processes=20), name=f"bomb_{token}.py")
    assert outcome.status == "exited", outcome
    made, failed = map(int, outcome.reply.split())
    assert made < 20 and failed > 0
    assert survivors(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_memory_bomb_fails_in_the_child(level):
    """Does a 2 GB allocation fail (MemoryError or a kill) without harming the grader?"""
    code = "import os\ntry:\n    block = bytearray(2 << 30)\nexcept MemoryError:\n    os.write(3, b'MemoryError')\n"
    outcome = run(code, level, Limits(cpu_seconds=10, wall_seconds=20, memory_bytes=1 << 30))
    assert outcome.reply == b"MemoryError" or outcome.status == "killed", outcome


@pytest.mark.parametrize("level", LEVELS)
def test_output_flood_is_capped_and_reply_arrives(level):
    """Is a 100 MB print capped at output_bytes (read and discarded, not stored), with the reply still delivered?"""
    code = "import os, sys\nchunk = 'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.write(chunk)\n"
    code += "sys.stdout.flush()\nos.write(3, b'still here')\n"
    outcome = run(code, level, Limits(cpu_seconds=10, wall_seconds=20, output_bytes=1000))
    assert (outcome.status, outcome.reply) == ("exited", b"still here")
    assert outcome.output == b"x" * 1000
    assert "discarded" in outcome.detail


@pytest.mark.parametrize("level", LEVELS)
def test_reply_over_the_cap_is_an_output_limit(level, monkeypatch):
    """Is a reply larger than the reply cap stopped with status output-limit?"""
    monkeypatch.setattr(supervisor, "REPLY_CAP", 10_000)
    code = "import os\nwhile True:\n    os.write(3, b'y' * 4096)\n"
    outcome = run(code, level)
    assert outcome.status == "output-limit" and len(outcome.reply) <= 10_000


@pytest.mark.parametrize("level", LEVELS)
def test_a_child_cannot_write_over_or_grow_its_stdin(level):
    """Is the job a child reads on stdin sealed: can it neither write into it, nor make it larger or smaller, and
    does it still read all of it?"""
    code = """import os, sys
job = sys.stdin.buffer.read()
found = []
for attempt in (lambda: os.pwrite(0, b"forged", 0), lambda: os.ftruncate(0, 4096), lambda: os.ftruncate(0, 0)):
    try:
        attempt()
        found.append("done")
    except OSError as error:
        found.append(type(error).__name__)
os.write(3, job + b" " + " ".join(found).encode())
"""
    outcome = run(code, level, stdin=b"the job")
    assert outcome.status == "exited", outcome.detail
    assert outcome.reply == b"the job PermissionError PermissionError PermissionError"


@pytest.mark.parametrize("level", LEVELS)
def test_large_unread_stdin_does_not_block(level):
    """Does a child that never reads a large stdin still run to its end?"""
    outcome = run("import os\nos.write(3, b'ok')\n", level, stdin=b"z" * (8 << 20))
    assert (outcome.status, outcome.reply) == ("exited", b"ok")


@pytest.mark.parametrize("level", LEVELS)
def test_submission_folder_is_read_only_and_private_files_are_hidden(level):
    """Can the child neither change its own files nor read /root (mode 0700)?"""
    code = """
import os
results = []
for action in (lambda: open("child.py", "a"), lambda: open("new.txt", "w"), lambda: os.listdir("/root")):
    try:
        action()
        results.append("allowed")
    except OSError:
        results.append("refused")
os.write(3, " ".join(results).encode())
"""
    outcome = run(code, level)
    if os.geteuid() == 0 or level.level == "bubblewrap":
        assert outcome.reply == b"refused refused refused", outcome


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap missing, failing or AUTOGRADE_ISOLATION=rlimits")
def test_bubblewrap_hides_the_repository_and_other_folders():
    """Under bubblewrap, are the repository, the solutions and /work invisible to the child?"""
    paths = [ROOT / "solutions/01_rules/rules.py", ROOT / "autograder/grading/sandbox/runner.py", Path("/work")]
    paths.append(Path(__file__))
    code = f"""
import os
seen = []
for path in {[str(p) for p in paths]!r}:
    seen.append(str(os.path.exists(path)))
os.write(3, " ".join(seen).encode())
"""
    outcome = run(code, BWRAP)
    assert outcome.reply == b" ".join([b"False"] * len(paths)), outcome


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap missing, failing or AUTOGRADE_ISOLATION=rlimits")
def test_bubblewrap_has_no_network():
    """Under bubblewrap, does connecting to a listener on 127.0.0.1 fail, the listener receiving nothing?"""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        code = f"""
import os, socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"leak")
    os.write(3, b"connected")
except OSError as error:
    os.write(3, type(error).__name__.encode())
"""
        outcome = run(code, BWRAP)
        assert outcome.status == "exited" and outcome.reply != b"connected", outcome
        with pytest.raises(TimeoutError):
            listener.accept()


@pytest.mark.parametrize("level", LEVELS)
def test_child_cannot_kill_the_grader(level):
    """Can the child neither signal its parent nor the grader's pid given to it?"""
    if level.level == "rlimits" and os.geteuid() != 0:
        pytest.skip("the rlimits level needs root")
    code = """
import os, signal, sys
results = []
for pid in (os.getppid(), int(sys.stdin.read())):
    try:
        os.kill(pid, signal.SIGKILL)
        results.append("sent")
    except OSError as error:
        results.append(type(error).__name__)
os.write(3, " ".join(results).encode())
"""
    outcome = run(code, level, stdin=str(os.getpid()).encode())
    assert outcome.status == "exited", outcome
    assert not outcome.reply.endswith(b"sent"), outcome  # the grader's pid is out of reach (we are alive, too)
    if level.level == "rlimits":
        assert outcome.reply == b"PermissionError PermissionError"


@pytest.mark.parametrize("level", LEVELS)
def test_concurrent_runs_from_threads(level):
    """Do four runs from four threads each get their own reply (and, as root, their own uid)?"""
    code = "import os, sys, time\ntime.sleep(0.3)\nos.write(3, f'{sys.stdin.read()} {os.getuid()}'.encode())\n"
    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(lambda i: run(code, level, stdin=str(i).encode()), range(4)))
    assert [o.reply.split()[0] for o in outcomes] == [b"0", b"1", b"2", b"3"]
    if os.geteuid() == 0:
        assert len({o.reply.split()[1] for o in outcomes}) == 4
    assert threading.active_count() >= 1


class Answering:
    """A reader that, on the child's first line, sends it `more` on its outbox and then reads to the child's end."""

    def __init__(self, more: bytes):
        self.more, self.outbox, self.read = more, sandbox.Outbox(), b""

    def feed(self, data: bytes) -> bool:
        if not self.read and b"\n" in data:
            self.outbox.send(self.more)
        self.read += data
        return False


@pytest.mark.parametrize("level", LEVELS)
def test_what_the_reader_sends_reaches_the_child_after_its_first_line(level):
    """Does the child read on fd 4 exactly what its reader sent once the first line came, however large, then the
    end of it?"""
    more = os.urandom(3 << 20)  # more than the pipe holds: written as the child reads it
    code = (
        "import hashlib, os\nos.write(3, b'ready\\n')\nread = b''\n"
        "while chunk := os.read(4, 1 << 16):\n    read += chunk\n"
        "os.write(3, hashlib.sha256(read).hexdigest().encode())\n"
    )
    reader = Answering(more)
    outcome = sandbox.run({"child.py": code.encode()}, "child.py", b"", QUICK, level, reader, reader.outbox)
    assert outcome.status == "exited", outcome
    assert reader.read == b"ready\n" + hashlib.sha256(more).hexdigest().encode()


@pytest.mark.parametrize("level", LEVELS)
def test_a_child_that_never_reads_what_it_is_sent_does_not_hold_the_run(level):
    """Does a child that ignores fd 4 (or closes it) end as it would, the parent never blocked by what it sends?"""
    for code in ("import os\nos.write(3, b'ready\\n')\n", "import os\nos.close(4)\nos.write(3, b'ready\\n')\n"):
        reader = Answering(b"x" * (8 << 20))
        outcome = sandbox.run({"child.py": code.encode()}, "child.py", b"", QUICK, level, reader, reader.outbox)
        assert (outcome.status, outcome.returncode, reader.read) == ("exited", 0, b"ready\n")
        assert outcome.wall_seconds < 3


def test_forcing_the_fallback_with_the_environment(monkeypatch):
    """Does AUTOGRADE_ISOLATION=rlimits make detect() choose the fallback, saying why?"""
    monkeypatch.setenv("AUTOGRADE_ISOLATION", "rlimits")
    try:
        found = sandbox.detect(fresh=True)
        assert found.level == "rlimits" and "AUTOGRADE_ISOLATION" in found.detail
    finally:
        monkeypatch.delenv("AUTOGRADE_ISOLATION")
        sandbox.detect(fresh=True)


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap missing, failing or AUTOGRADE_ISOLATION=rlimits")
def test_a_detection_under_way_is_waited_for_not_tried_again():
    """`autograde grade` finds the sandbox's level in a thread while it reads the class: when grading asks for the
    level before that thread is done, does it wait for the same answer instead of running a second probe child?"""
    from autograder.grading.sandbox import isolation, runner

    probes, answers = [], []

    def probe(*args):
        probes.append(args[1])
        time.sleep(0.3)  # a slow probe: the second caller surely asks while it runs
        return runner.run(*args)

    def ask(fresh):
        answers.append(isolation.detect_with(probe, fresh))

    first = threading.Thread(target=ask, args=(True,))  # a detection of its own, whatever is cached already
    first.start()
    while not probes:
        time.sleep(0.01)
    ask(False)
    first.join()
    assert probes == ["probe.py"] and answers[0] is answers[1] and answers[0].level == "bubblewrap"


def test_flat_names_only():
    """Is a file name with a folder in it refused before anything runs?"""
    with pytest.raises(ValueError):
        sandbox.run({"../evil.py": b""}, "../evil.py", b"", QUICK, RLIMITS)


@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_no_files_are_left_for_a_later_run(level):
    """Is a file the child drops in the shared /tmp, /var/tmp or /dev/shm gone after the run?"""
    token = uuid.uuid4().hex
    code = "import os\nfor folder in ('/tmp', '/var/tmp', '/dev/shm'):\n    try:\n"
    code += f"        open(os.path.join(folder, {token!r}), 'w').write('note')\n    except OSError:\n        pass\n"
    outcome = run(code, level)
    assert outcome.status == "exited", outcome
    assert not any(Path(folder, token).exists() for folder in ("/tmp", "/var/tmp", "/dev/shm"))


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap missing, failing or AUTOGRADE_ISOLATION=rlimits")
def test_bubblewrap_writes_only_to_a_small_tmp():
    """Under bubblewrap, are /, /dev and /dev/shm read-only, and does /tmp fill up at its size instead of the RAM?"""
    code = """
import os
results = []
for path in ("/x", "/dev/shm/x", "/etc/x"):
    try:
        open(path, "w").write("x")
        results.append("written")
    except OSError:
        results.append("refused")
written = 0
try:
    for i in range(10):
        with open(f"/tmp/fill{i}", "wb") as fill:
            for _ in range(16):
                fill.write(b"z" * (1 << 20))
                fill.flush()
                written += 1 << 20
except OSError:
    pass
os.write(3, (" ".join(results) + f" {written}").encode())
"""
    outcome = run(code, BWRAP, Limits(cpu_seconds=10, wall_seconds=10, file_bytes=16 << 20))
    *refused, written = outcome.reply.split()
    assert refused == [b"refused"] * 3, outcome
    assert int(written) <= sandbox.TMPFS_BYTES


# ---------------------------------------------------------------------------------------------------------------
# Whole-run limits (cgroups), the wall-clock backstop, stop_all, the fallback's clean-up, and a grader not root.

SETSID_HOGS = """
import os, time
for _ in range(4):
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
while True:
    time.sleep(1)
"""


@CGROUPS
@pytest.mark.parametrize("level", LEVELS)
def test_busy_processes_in_sessions_of_their_own_share_one_cpu_limit(level):
    """Are four busy setsid processes stopped when all of them together used the CPU limit, none surviving?"""
    token = uuid.uuid4().hex
    outcome = run(SETSID_HOGS, level, Limits(cpu_seconds=1, wall_seconds=10), name=f"hogs_{token}.py")
    assert (outcome.status, outcome.returncode) == ("timeout", None), outcome
    assert "all its processes together" in outcome.detail
    assert 0.95 <= outcome.cpu_seconds < 1.4, outcome  # about the limit, not four times it
    assert outcome.wall_seconds < 3
    assert survivors(token) == []


@CGROUPS
@pytest.mark.parametrize("level", LEVELS)
def test_memory_limit_holds_for_all_processes_together(level):
    """Are three processes of 300 MiB each (each within RLIMIT_AS) stopped together over a 512 MiB limit?"""
    token = uuid.uuid4().hex
    code = """
import os, time
for _ in range(3):
    if os.fork() == 0:
        block = bytearray(b"x") * (300 << 20)  # filled, so really in memory
        time.sleep(30)
time.sleep(30)
"""
    outcome = run(code, level, Limits(cpu_seconds=10, wall_seconds=20, memory_bytes=512 << 20), name=f"mem_{token}.py")
    assert outcome.status == "killed", outcome
    assert outcome.detail == "killed: its processes together reached the memory limit of 512 MiB"
    assert outcome.wall_seconds < 10
    assert survivors(token) == []


@CGROUPS
@pytest.mark.parametrize("level", LEVELS)
def test_process_count_is_capped_for_the_whole_run(level):
    """Do processes that each start a session of their own and fork again stay within one count for the run?"""
    token = uuid.uuid4().hex
    code = """
import os, time
def spread(depth):
    for _ in range(6):
        try:
            if os.fork() == 0:
                os.setsid()
                os.write(3, b".")
                if depth < 3:
                    spread(depth + 1)
                time.sleep(30)
        except OSError:
            return
spread(0)
time.sleep(0.5)
os._exit(0)
"""
    outcome = run(code, level, Limits(cpu_seconds=5, wall_seconds=10, processes=12), name=f"spread_{token}.py")
    assert outcome.status == "exited", outcome
    assert 0 < len(outcome.reply) < 12  # at most 11 processes besides the child itself ever ran at once
    assert survivors(token) == []


@CGROUPS
def test_runs_get_equal_cpu_shares_however_many_processes_they_start():
    """Beside a run of four busy setsid processes, does a one-process run get as much CPU per second as it does?"""
    hog_code = SETSID_HOGS.replace("while True:\n    time.sleep(1)\n", "time.sleep(1.8)\n")
    honest = (
        "import os, time\nstart, used = time.perf_counter(), time.process_time()\n"
        "while time.perf_counter() - start < 1.5:\n    pass\n"
        "os.write(3, str(time.process_time() - used).encode())\n"
    )
    level = BWRAP or RLIMITS
    with ThreadPoolExecutor(1) as pool:
        hog = pool.submit(run, hog_code, level, Limits(cpu_seconds=30, wall_seconds=10))
        time.sleep(0.15)
        alone = run(honest, level, Limits(cpu_seconds=30, wall_seconds=10))
        hogs = hog.result()
    assert hogs.status == "exited" and alone.status == "exited", (hogs, alone)
    hog_rate, honest_rate = hogs.cpu_seconds / hogs.wall_seconds, float(alone.reply) / 1.5
    # With a weight per session (autogroup) it would be about a quarter; with equal weights per run about 1.
    assert honest_rate > 0.6 * hog_rate, (honest_rate, hog_rate)


@pytest.mark.parametrize("level", LEVELS)
def test_busy_child_on_a_loaded_machine_is_decided_by_cpu_time(level):
    """With both cores kept busy outside the sandbox, is a busy child past its wall-clock backstop still computing,
    and so stopped by its CPU time (status timeout), not by the wall clock?"""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        outcome = run("while True:\n    pass\n", level, Limits(cpu_seconds=2, wall_seconds=1))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert (outcome.status, outcome.returncode) == ("timeout", None), outcome
    assert "CPU time limit of 2 s" in outcome.detail
    assert outcome.wall_seconds >= 1.9 and 1.9 <= outcome.cpu_seconds < 2.5


def test_wall_backstop_is_generous():
    """Is the wall-clock backstop well above the CPU limit it goes with (and so never the usual way a run ends)?"""
    assert sandbox.wall_backstop(1) == 31 and sandbox.wall_backstop(60) == 180
    assert all(sandbox.wall_backstop(s) >= 3 * s for s in (0.5, 10, 100))


class LastLine:
    """A reader of the reply channel (what run() is given): done once the line "last" has arrived."""

    def __init__(self):
        self.seen = b""

    def feed(self, data: bytes) -> bool:
        self.seen = (self.seen + data)[-64:]
        return b"last\n" in self.seen


LINGER = """
import atexit, os, signal, threading, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def trickle():  # sleeps, with short bursts of CPU between (what a lingering helper thread might do)
    while True:
        end = time.process_time() + 0.005
        while time.process_time() < end:
            pass
        time.sleep(0.05)
threading.Thread(target=trickle).start()  # not a daemon: the interpreter would wait for it at exit
atexit.register(time.sleep, 3600)
try:
    if os.fork() == 0:
        os.setsid()
        trickle()
except OSError:
    pass  # without cgroups a run cannot fork
os.write(3, b"last\\n")
os.close(1)
os.close(2)
"""


@pytest.mark.parametrize("level", LEVELS)
def test_a_run_ends_at_once_when_the_child_is_done(level):
    """Once the reader has the child's last line, is every process killed at once (a non-daemon thread, an atexit
    handler, a setsid grandchild, stdout closed early), with status done, long before any backstop?"""
    token = uuid.uuid4().hex
    reader = LastLine()
    outcome = sandbox.run({f"linger_{token}.py": LINGER.encode()}, f"linger_{token}.py", b"", QUICK, level, reader)
    assert (outcome.status, outcome.returncode, outcome.reply) == ("done", None, b""), outcome
    assert outcome.wall_seconds < 2
    assert survivors(token) == []
    honest = run("import os\nos.write(3, b'last\\n')\n", level)  # without a reader: as before
    assert (honest.status, honest.reply) == ("exited", b"last\n")


ORPHANS = """
import ctypes, os, sys, time
sys.path.insert(0, {root!r})
from autograder.grading import sandbox
from tests.test_sandbox import LINGER, QUICK, LastLine
assert ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER: what a run orphans comes here
level = sandbox.detect()
runs = [sandbox.run({{"linger.py": LINGER.encode()}}, "linger.py", b"", QUICK, level, LastLine()) for _ in range(8)]
time.sleep(0.3)
orphans = 0
try:
    while os.waitpid(-1, os.WNOHANG)[0]:
        orphans += 1
except ChildProcessError:
    pass  # none left to reap
print(*(run.status for run in runs), orphans)
"""


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap missing or failing (apt-get install -y bubblewrap)")
def test_a_run_ended_at_its_last_line_leaves_no_orphan_to_reap():
    """Once a run is killed at its last line (its child still running, with a thread, a setsid grandchild where
    it may fork), does nothing of it reach the grader's reaper? A grader that is a container's pid 1 would keep
    each one as a zombie, counted against that uid's process limit. (In a process of its own, a subreaper.)"""
    script = ORPHANS.format(root=str(ROOT))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    *statuses, orphans = result.stdout.split()
    assert statuses == [b"done"] * 8
    assert orphans == b"0"


BURSTS = """
import time
while True:  # mostly asleep, with bursts of CPU: about 0.1 CPU seconds a second, twice the old "computing" rate
    end = time.process_time() + 0.01
    while time.process_time() < end:
        pass
    time.sleep(0.09)
"""


@pytest.mark.parametrize("level", LEVELS)
def test_short_bursts_between_sleeps_are_waiting(level):
    """Is a run that mostly sleeps, with short bursts of CPU, stopped at its backstop as waiting (not kept going
    as if it computed, up to its CPU limit or a multiple of the backstop)?"""
    outcome = run(BURSTS, level, Limits(cpu_seconds=30, wall_seconds=1))
    assert outcome.status == "waiting", outcome
    assert 1 <= outcome.wall_seconds < 3 and outcome.cpu_seconds < 1


@pytest.mark.parametrize("level", LEVELS)
def test_the_hard_bound_stops_a_run_that_keeps_computing(level):
    """Is a run that computes (half a core, so past its backstop) stopped at the hard bound it was given (what is
    left of a student's budget), with a detail saying so, though CPU time remains?"""
    code = BURSTS.replace("0.01", "0.05").replace("0.09", "0.05")
    outcome = run(code, level, Limits(cpu_seconds=30, wall_seconds=1, wall_cap=2.5))
    assert outcome.status == "timeout" and outcome.detail.startswith(sandbox.run_result.WALL_CAP), outcome
    assert "all the student's stages" in outcome.detail
    assert 2.5 <= outcome.wall_seconds < 4 and outcome.cpu_seconds < 2


def test_the_hard_bound_leaves_a_computing_run_its_cpu_time():
    """Does the hard bound leave a run that computes at a quarter core or more all along its whole CPU limit, and
    is it far below the old four backstops (720 s at the default 60 s)?"""
    for seconds in (0.5, 2, 10, 60, 3600):
        limits = Limits(cpu_seconds=seconds, wall_seconds=sandbox.wall_backstop(seconds))
        assert sandbox.hard_cap(limits) >= seconds / 0.25
    assert sandbox.hard_cap(Limits(60, sandbox.wall_backstop(60))) == 420
    assert sandbox.hard_cap(Limits(60, 180, wall_cap=50)) == 50
    assert sandbox.student_budget(60) == 720 and sandbox.student_budget(2) == 128


STOP_ALL = """
import sys, threading, time
sys.path.insert(0, {root!r})
from autograder.grading import sandbox
level = sandbox.detect()
busy = b"import os\\nif os.fork() == 0:\\n    os.setsid()\\nwhile True:\\n    pass\\n"
outcomes = []
def grade(code):
    outcomes.append(sandbox.run({{"{token}.py": code}}, "{token}.py", b"", sandbox.Limits(30, 60), level))
threads = [threading.Thread(target=grade, args=(code,)) for code in (busy, b"import time\\ntime.sleep(60)\\n")]
for thread in threads:
    thread.start()
time.sleep(0.8)
stopped = time.monotonic()
sandbox.stop_all()
for thread in threads:
    thread.join()
took = time.monotonic() - stopped
start = time.monotonic()
later = sandbox.run({{"{token}.py": b"pass"}}, "{token}.py", b"", sandbox.PROBE_LIMITS, level)
print(took, *sorted(o.status for o in outcomes), later.status, time.monotonic() - start)
"""


def test_stop_all_kills_running_children_within_a_second():
    """After stop_all(), are a busy and a sleeping run cancelled within a second, no process left, and a later
    run cancelled at once? (In a process of its own: stop_all() is for good.)"""
    token = f"stop_{uuid.uuid4().hex}"
    script = STOP_ALL.format(root=str(ROOT), token=token)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    took, first, second, later, later_took = result.stdout.split()
    assert float(took) < 1.0
    assert (first, second, later) == ("cancelled", "cancelled", "cancelled")
    assert float(later_took) < 0.01
    assert survivors(token) == []


LEAVE_BEHIND = """
import ctypes, os, time
for folder in ("/run/lock", "/dev/shm", "/tmp", "/var/tmp"):
    try:
        with open(os.path.join(folder, "{token}"), "w") as handle:
            handle.write("note")
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget({key}, 4096, 0o1000 | 0o600)  # IPC_CREAT
os.write(3, str(segment).encode())
written = 0
try:
    for i in range(13):
        with open(f"/tmp/{token}-fill{{i}}", "wb") as fill:
            for _ in range(16):
                fill.write(b"z" * (1 << 20))
                fill.flush()
                written += 1 << 20
except OSError:
    pass
os.write(3, f" {{written}}".encode())
time.sleep({linger})  # still running: a watcher that counts the bytes now must stop it
"""


def _shm_keys() -> set[int]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines}


def _fallback_leaves_nothing(private: bool):
    token = uuid.uuid4().hex
    key = int(token[:7], 16)
    places = ("/run/lock", "/dev/shm", "/tmp", "/var/tmp")
    code = LEAVE_BEHIND.format(token=token, key=key, linger=0 if private else 10)
    outcome = run(code, RLIMITS, Limits(cpu_seconds=10, wall_seconds=20))
    assert outcome.reply, outcome  # once seen empty with three test workers: say how the run ended
    segment, *written = outcome.reply.split()
    assert int(segment) >= 0, outcome  # it did create a shared-memory segment
    if private:  # a private 64 MiB tmpfs: the writes fail there, like under bubblewrap
        assert outcome.status == "exited" and int(written[0]) <= sandbox.TMPFS_BYTES, outcome
    else:  # watched: the run is stopped at the first look past the cap (its writes may be faster than the looks)
        assert outcome.status == "output-limit" and "64 MiB" in outcome.detail, outcome
        assert outcome.wall_seconds < 5
    assert not [f"{p}/{n}" for p in places if Path(p).is_dir() for n in os.listdir(p) if n.startswith(token)]
    assert key not in _shm_keys()


@ROOT_ONLY
def test_fallback_leaves_no_files_ipc_or_200_mib_behind():
    """At the rlimits level, are files in /run/lock, /dev/shm, /tmp, /var/tmp and a SysV shared-memory segment
    gone after the run, and is writing 200 MiB to /tmp stopped at 64 MiB?"""
    if fallback.private_tmp()[0] is None:
        pytest.skip(f"no private namespaces here: {fallback.private_tmp()[1]}")
    _fallback_leaves_nothing(private=True)


@ROOT_ONLY
def test_fallback_without_namespaces_sweeps_and_caps_the_uid(monkeypatch):
    """Where unshare does not work, is a run holding more than 64 MiB in the shared folders stopped, and are its
    files and IPC objects removed after the run?"""
    monkeypatch.setattr(fallback, "_private", (None, "disabled by the test"))
    _fallback_leaves_nothing(private=False)


NOT_ROOT = """
import sys
sys.path.insert(0, {root!r})
from autograder.grading import sandbox
try:
    level = sandbox.detect()
except RuntimeError as error:
    print("refused:", error)
else:
    outcome = sandbox.run({{"c.py": b"import os\\nos.write(3, b'ran')\\n"}}, "c.py", b"", sandbox.PROBE_LIMITS, level)
    print(level.level, outcome.reply.decode(), level.detail)
"""


THREADED = """
import sys, threading, time
sys.path.insert(0, {root!r})
from autograder.grading import sandbox
level = sandbox.detect()
for _ in range(100):  # the threads a browser or an editor of the same user has: the kernel counts each one
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
outcome = sandbox.run({{"c.py": b"import os\\nos.write(3, b'ran')\\n"}}, "c.py", b"", sandbox.PROBE_LIMITS, level)
print(level.level, outcome.status, outcome.reply.decode(), outcome.detail)
"""


@ROOT_ONLY
@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) is needed to become another user")
def test_a_grader_that_is_not_root_runs_children_beside_a_hundred_threads_of_its_user():
    """As uid 65534 under bubblewrap, does a run still start when the user's processes hold 100 threads, which
    RLIMIT_NPROC counts as tasks of the uid, as it counts processes?"""
    python = "/usr/bin/python3"
    if not host.world_readable(python):
        pytest.skip(f"{python} is needed, readable by uid 65534")
    env = {"PATH": "/usr/bin:/bin", "AUTOGRADE_CHILD_PYTHON": python}
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I", "-c"]
    result = subprocess.run(
        [*command, THREADED.format(root=str(ROOT))], capture_output=True, text=True, env=env, timeout=60, cwd="/"
    )
    said = result.stdout.strip()
    if result.returncode != 0 or not said.startswith("bubblewrap"):
        pytest.skip(f"no bubblewrap for uid 65534 here: {said or result.stderr[-300:]}")
    assert said.startswith("bubblewrap exited ran"), said


@ROOT_ONLY
@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) is needed to become another user")
@pytest.mark.parametrize("asked", ["", "rlimits", "none"])
def test_grader_that_is_not_root_refuses_unless_asked(asked):
    """As uid 65534, is grading without isolation refused unless AUTOGRADE_ISOLATION=none, which says so?"""
    python = "/usr/bin/python3"
    if not host.world_readable(python):
        pytest.skip(f"{python} is needed, readable by uid 65534")
    env = {"PATH": "/usr/bin:/bin", "AUTOGRADE_ISOLATION": asked, "AUTOGRADE_CHILD_PYTHON": python}
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I", "-c"]
    result = subprocess.run(
        [*command, NOT_ROOT.format(root=str(ROOT))], capture_output=True, text=True, env=env, timeout=60, cwd="/"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    said = result.stdout.strip()
    if asked == "none":
        assert said.startswith("none ran no isolation from the grader"), said
    elif asked == "rlimits" or not said.startswith("bubblewrap ran"):  # without bubblewrap only "none" is left
        assert said.startswith("refused:") and "no isolation from the grader" in said, said
        assert "AUTOGRADE_ISOLATION=none" in said and "\n" not in said


@pytest.mark.parametrize("level", LEVELS)
def test_without_cgroups_a_run_cannot_fork(level):
    """Without cgroups (nothing would hold a whole run's limits), can a run start neither a process nor a thread?"""
    code = """
import os, threading
results = []
try:
    if os.fork() == 0:
        os._exit(0)
    results.append("forked")
except OSError:
    results.append("no-fork")
try:
    threading.Thread(target=print).start()
    results.append("thread")
except RuntimeError:
    results.append("no-thread")
os.write(3, " ".join(results).encode())
"""
    outcome = run(code, Isolation(level.level, level.detail, cgroups="none"))
    assert (outcome.status, outcome.reply) == ("exited", b"no-fork no-thread"), outcome
    busy = run("while True:\n    pass\n", Isolation(level.level, level.detail, cgroups="none"), Limits(1, 10))
    # The reaped child's own CPU time; RLIMIT_CPU, which decides here, counts in clock ticks.
    assert busy.status == "timeout" and 0.85 <= busy.cpu_seconds < 1.3, busy


@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_without_cgroups_a_run_starts_while_its_uid_still_has_a_process(level, monkeypatch):
    """Does a run without cgroups start even when its uid still has a process (one being reaped, say)? The kernel
    refuses an execve after setuid while the new uid is over RLIMIT_NPROC, so the 0 must come after the switch."""
    uid, lock = uids.pool.acquire()
    lingering = subprocess.Popen(["sleep", "30"], user=uid, group=uid, extra_groups=[])
    monkeypatch.setattr(uids.pool, "acquire", lambda: (uid, lock))
    try:
        outcome = run("import os\nos.write(3, b'started')\n", Isolation(level.level, level.detail, cgroups="none"))
        assert (outcome.status, outcome.reply) == ("exited", b"started"), outcome
    finally:
        lingering.kill()
        lingering.wait()


def take(pool: uids.UidPool, uid: int) -> tuple[int, int]:
    """pool.acquire(), starting its round at uid (another test's run may hold uid: then the pool takes the next)."""
    pool._next = uid - uids.UID_BASE
    return pool.acquire()


@ROOT_ONLY
def test_what_a_grader_that_died_left_under_a_uid_goes_when_the_uid_is_next_taken():
    """A grader dies holding a run uid (its lock file still says taken), leaving a process and a run folder under
    it. Are both gone when the uid is next taken, even by a grader that took it cleanly before; and does a take
    after a clean release leave the uid as it is (our runs leave nothing, so it need not look)?"""
    again = uids.UidPool()
    uid, lock = again.acquire()
    uids.UidPool.release(lock)
    dead = uids.UidPool()
    taken, lock = take(dead, uid)
    if taken != uid:
        uids.UidPool.release(lock)
        pytest.skip(f"another run holds uid {uid} now")
    left = Path(sandbox.folders.runs_dir(), f"autograde-run-{uid}-{uuid.uuid4().hex}")
    (left / "submission").mkdir(parents=True)
    lingering = subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[])
    os.close(lock)  # the grader dies: the kernel drops its lock and nobody says the uid is clean
    try:
        taken, lock = take(again, uid)
        uids.UidPool.release(lock)
        if taken == uid:
            assert lingering.wait(timeout=10) == -signal.SIGKILL
            assert not left.exists()
            left.mkdir()
            taken, lock = take(again, uid)
            uids.UidPool.release(lock)
            assert taken != uid or left.exists()  # the take after a clean release did not look
    finally:
        lingering.kill()
        lingering.wait()
        shutil.rmtree(left, ignore_errors=True)


@ROOT_ONLY
def test_a_run_folder_that_could_not_be_removed_goes_when_its_uid_is_next_taken(monkeypatch):
    """rmtree fails on a run's folder (as it may on a full or failing disk): does the release leave the uid's lock
    file saying taken, so the next take of that uid removes the folder, rather than say clean and leave it?"""
    from autograder.grading.sandbox import runner

    kept = []

    def failing_rmtree(path, ignore_errors=False):  # what rmtree(ignore_errors=True) does when every unlink fails
        kept.append(Path(path))

    monkeypatch.setattr(runner, "shutil", type("Shutil", (), {"rmtree": staticmethod(failing_rmtree)}))
    outcome = run("print('ok')", sandbox.detect())
    monkeypatch.undo()
    assert outcome.status == "exited", outcome.detail
    (left,) = kept
    uid = int(left.name.split("-")[2])
    try:
        assert left.is_dir()
        assert Path(uids.UidPool.folder(), str(uid)).read_bytes().startswith(uids.TAKEN)
        taken, lock = take(uids.UidPool(), uid)
        uids.UidPool.release(lock)
        assert taken != uid or not left.exists()
    finally:
        shutil.rmtree(left, ignore_errors=True)


def test_cgroups_can_be_turned_off_with_the_environment(monkeypatch):
    """Does AUTOGRADE_CGROUPS=none make detect() report no cgroups, and say so in its detail?"""
    monkeypatch.setenv("AUTOGRADE_CGROUPS", "none")
    try:
        found = sandbox.detect(fresh=True)
        assert found.cgroups == "none" and "no cgroups (AUTOGRADE_CGROUPS=none)" in found.detail
        assert "cannot start another process" in found.detail
    finally:
        monkeypatch.delenv("AUTOGRADE_CGROUPS")
        sandbox.detect(fresh=True)


@CGROUPS
def test_leftover_cgroups_of_a_dead_grader_are_removed():
    """Is a run cgroup left by a grader that was killed (its process still inside) removed on the next start?"""
    tree, _ = cgroups.cgroup_tree()
    gone = subprocess.Popen(["true"])
    gone.wait()
    name = f"{os.stat('/proc/self/ns/pid').st_ino}-{gone.pid}-0-1"  # a pid that has ended
    folders = [os.path.join(parent, name) for parent in tree.parents]
    for folder in folders:
        os.mkdir(folder)
    token = uuid.uuid4().hex
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", token])
    for folder in folders:
        Path(folder, "cgroup.procs").write_text(str(left.pid))
    cgroups.cgroup_tree(fresh=True)
    assert left.wait(timeout=5) == -signal.SIGKILL
    assert not any(os.path.exists(folder) for folder in folders)
    sandbox.detect(fresh=True)


@pytest.mark.skipif(
    sandbox.cgroups_in_use() != "v1" or not os.path.exists("/sys/fs/cgroup/unified/cgroup.procs"),
    reason="only where cgroup v1 holds the controllers and an empty cgroup v2 is mounted beside it",
)
def test_cgroup_v2_accounting_and_kill(monkeypatch):
    """On the unified hierarchy (without its controllers here), do placement, CPU accounting and cgroup.kill
    stop four setsid busy processes at one CPU limit for them all?"""
    monkeypatch.setenv("AUTOGRADE_CGROUPS", "v2")
    monkeypatch.setattr(cgroups, "_V2_NEEDED", ())
    try:
        found = sandbox.detect(fresh=True)
        assert found.cgroups == "v2"
        for level in filter(None, (BWRAP and found, Isolation("rlimits", "v2 test", cgroups="v2"))):
            token = uuid.uuid4().hex
            outcome = run(SETSID_HOGS, level, Limits(cpu_seconds=1, wall_seconds=10), name=f"hogs_{token}.py")
            assert outcome.status == "timeout" and 0.95 <= outcome.cpu_seconds < 1.4, outcome
            assert survivors(token) == []
    finally:
        monkeypatch.delenv("AUTOGRADE_CGROUPS")
        monkeypatch.undo()
        sandbox.detect(fresh=True)


def test_a_run_folder_in_a_place_every_user_writes_is_used_only_when_it_is_ours(tmp_path):
    """Is the folder for run folders in /dev/shm (writable by every user, like /tmp) used only when it is a real
    folder of the grader's, mode 0711, and never a link, someone else's folder or one anyone may write?"""
    os.umask(umask := os.umask(0o077))  # mkdir's mode is narrowed by the umask; the folder must still be 0711
    try:
        mine = tmp_path / "mine"
        assert folders.own_folder(str(mine)) and stat.S_IMODE(mine.stat().st_mode) == 0o711
        assert folders.own_folder(str(mine))  # found made
    finally:
        os.umask(umask)
    (tmp_path / "elsewhere").mkdir(mode=0o711)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    assert not folders.own_folder(str(tmp_path / "link"))
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    assert not folders.own_folder(str(tmp_path / "open"))
    if os.geteuid() == 0:
        (tmp_path / "theirs").mkdir(mode=0o711)
        os.chown(tmp_path / "theirs", 65534, 65534)
        assert not folders.own_folder(str(tmp_path / "theirs"))


def test_bubblewrap_runs_get_their_folders_in_memory_when_run_is_on_a_disk(monkeypatch):
    """Does a bubblewrap run's folder go to /dev/shm when /run is on a disk (each folder and file made there cost
    half a millisecond here), stay in /run when that is a tmpfs, and never leave it for the rlimits level, whose
    private mounts cover /dev/shm?"""
    if os.geteuid() != 0:
        assert folders.runs_dir(in_memory=True) == folders.runs_dir() == tempfile.gettempdir()
        return
    mounts = {"/run": "ext4", "/dev/shm": "tmpfs"}
    free = [0]  # blocks of 4 KiB free in /dev/shm
    monkeypatch.setattr(folders, "mount_table", lambda: [(point, "/", kind, []) for point, kind in mounts.items()])
    monkeypatch.setattr(folders, "own_folder", lambda path: path == folders.MEMORY_RUNS_DIR)
    room = lambda path: os.statvfs_result((4096, 4096, 0, 0, free[0], 0, 0, 0, 0, 0))  # noqa: E731
    monkeypatch.setattr(folders.os, "statvfs", room)

    def chosen() -> str:
        folders._memory_runs_dir.cache_clear()
        return folders.runs_dir(in_memory=True)

    try:
        assert chosen() == folders.RUNS_DIR  # no room in /dev/shm (a container's may be small)
        free[0] = folders.MEMORY_FREE // 4096
        assert chosen() == folders.MEMORY_RUNS_DIR
        assert folders.runs_dir() == folders.RUNS_DIR
        mounts["/run"] = "tmpfs"
        assert chosen() == folders.RUNS_DIR
    finally:
        folders._memory_runs_dir.cache_clear()
