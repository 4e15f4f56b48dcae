"""Does the sandbox contain hostile children at every isolation level this machine offers? (Real processes.)"""

import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograder import sandbox
from autograder.sandbox import Isolation, Limits

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
    """Is a child that dies of a signal reported as killed, with minus the signal number?"""
    outcome = run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", level)
    assert (outcome.status, outcome.returncode) == ("killed", -signal.SIGSEGV)
    assert "SIGSEGV" in outcome.detail


@pytest.mark.parametrize("level", LEVELS)
def test_loop_ignoring_sigterm_times_out_and_is_gone(level):
    """Is an endless loop that ignores SIGTERM stopped at the wall-clock limit, leaving no process behind?"""
    token = uuid.uuid4().hex
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n"
    outcome = run(code, level, Limits(wall_seconds=1), name=f"loop_{token}.py")
    assert (outcome.status, outcome.returncode) == ("timeout", None)
    assert 1 <= outcome.wall_seconds < 3
    assert "wall-clock" in outcome.detail
    assert survivors(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_cpu_limit(level):
    """Does a busy loop die of the CPU limit, long before the wall-clock limit?"""
    outcome = run("while True:\n    pass\n", level, Limits(cpu_seconds=1, wall_seconds=10))
    assert outcome.status == "killed", outcome
    assert "CPU" in outcome.detail and outcome.wall_seconds < 5


@pytest.mark.parametrize("level", LEVELS)
def test_setsid_grandchild_is_killed_when_the_child_exits(level):
    """Does a grandchild that escapes with setsid and ignores SIGTERM die with the run (its writes stop)?"""
    token = uuid.uuid4().hex
    watched = Path(tempfile.mkdtemp(prefix="sandbox-test-"))  # a folder the test owns and the child may write
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
    outcome = run(code, level, Limits(wall_seconds=10, processes=20), name=f"bomb_{token}.py")
    assert outcome.status == "exited", outcome
    made, failed = map(int, outcome.reply.split())
    assert made < 20 and failed > 0
    assert survivors(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_memory_bomb_fails_in_the_child(level):
    """Does a 2 GB allocation fail (MemoryError or a kill) without harming the grader?"""
    code = "import os\ntry:\n    block = bytearray(2 << 30)\nexcept MemoryError:\n    os.write(3, b'MemoryError')\n"
    outcome = run(code, level, Limits(memory_bytes=1 << 30))
    assert outcome.reply == b"MemoryError" or outcome.status == "killed", outcome


@pytest.mark.parametrize("level", LEVELS)
def test_output_flood_is_capped_and_reply_arrives(level):
    """Is a 100 MB print capped at output_bytes (read and discarded, not stored), with the reply still delivered?"""
    code = "import os, sys\nchunk = 'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.write(chunk)\n"
    code += "sys.stdout.flush()\nos.write(3, b'still here')\n"
    outcome = run(code, level, Limits(wall_seconds=20, output_bytes=1000))
    assert (outcome.status, outcome.reply) == ("exited", b"still here")
    assert outcome.output == b"x" * 1000
    assert "discarded" in outcome.detail


@pytest.mark.parametrize("level", LEVELS)
def test_reply_over_the_cap_is_an_output_limit(level, monkeypatch):
    """Is a reply larger than the reply cap stopped with status output-limit?"""
    monkeypatch.setattr(sandbox, "REPLY_CAP", 10_000)
    code = "import os\nwhile True:\n    os.write(3, b'y' * 4096)\n"
    outcome = run(code, level)
    assert outcome.status == "output-limit" and len(outcome.reply) <= 10_000


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
    paths = [ROOT / "solutions/01_rules/rules.py", ROOT / "autograder/sandbox.py", Path("/work"), Path(__file__)]
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
        pytest.skip("without root the rlimits level runs the child as the grader's own uid")
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


def test_forcing_the_fallback_with_the_environment(monkeypatch):
    """Does AUTOGRADE_ISOLATION=rlimits make detect() choose the fallback, saying why?"""
    monkeypatch.setenv("AUTOGRADE_ISOLATION", "rlimits")
    try:
        found = sandbox.detect(fresh=True)
        assert found.level == "rlimits" and "AUTOGRADE_ISOLATION" in found.detail
    finally:
        monkeypatch.delenv("AUTOGRADE_ISOLATION")
        sandbox.detect(fresh=True)


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
    outcome = run(code, BWRAP, Limits(wall_seconds=10, file_bytes=16 << 20))
    *refused, written = outcome.reply.split()
    assert refused == [b"refused"] * 3, outcome
    assert int(written) <= sandbox.TMPFS_BYTES
