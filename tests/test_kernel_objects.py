"""What the kernel shares between processes without a namespace (keyrings, a terminal, IPC, /proc): can a run reach
the grader's, leave something for a later run, or reach a concurrent one? (Real syscalls, real sandbox levels.)"""

import ctypes
import errno
import json
import os
import platform
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.grading import sandbox
from autograder.grading.sandbox import keyrings
from autograder.grading.sandbox.uids import pool
from tests.test_sandbox import LEVELS, QUICK, ROOT_ONLY

KEYRINGS = pytest.mark.skipif(
    platform.machine() not in keyrings._SYSCALLS, reason=f"keyctl syscall numbers unknown on {platform.machine()}"
)

# The child's side of the keyring tests: the same syscalls through ctypes (the child cannot import the grader).
CHILD_KEYCTL = f"""
import ctypes, json, os, platform, sys
ADD, KEYCTL = {keyrings._SYSCALLS!r}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def keyctl(*args):
    result = libc.syscall(ctypes.c_long(KEYCTL), *(ctypes.c_long(a) for a in args))
    return result if result >= 0 else -ctypes.get_errno()
def add(description, payload, ring):
    result = libc.syscall(ctypes.c_long(ADD), b"user", description.encode(), payload, ctypes.c_size_t(len(payload)),
                          ctypes.c_long(ring))
    return result if result >= 0 else -ctypes.get_errno()
def possess():  # link the uid's keyrings into the session keyring: their keys become the caller's to read
    return [keyctl(8, -4, -3), keyctl(8, -5, -3), keyctl(22, -1, -3)]
def read(key):
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(11), ctypes.c_long(key), buffer, ctypes.c_long(4096))
    return buffer.raw[:size].decode("latin-1") if size >= 0 else -ctypes.get_errno()
"""


def keyctl_available() -> bool:
    try:
        keyrings.keyctl(keyrings.KEYCTL_GET_KEYRING_ID, keyrings.KEY_SPEC_THREAD_KEYRING, 0)
    except OSError as error:
        return error.errno not in (errno.ENOSYS, errno.EPERM)
    return True


def session_keys() -> list[int]:
    """The ids linked in the calling thread's session keyring (KEYCTL_READ of a keyring: an array of int32)."""
    buffer = ctypes.create_string_buffer(4096)
    size = keyrings._syscall(
        keyrings._SYSCALLS[platform.machine()][1], ctypes.c_long(keyrings.KEYCTL_READ),
        ctypes.c_long(keyrings.KEY_SPEC_SESSION_KEYRING), buffer, ctypes.c_long(4096),
    )  # fmt: skip
    return list(memoryview(buffer.raw[: min(size, 4096)]).cast("i"))


def in_thread(function):
    """Run function in a thread of its own (keyrings belong to a thread: pytest's own thread keeps its keyring)."""
    box = {}

    def target():
        try:
            box["value"] = function()
        except BaseException as error:  # noqa: BLE001
            box["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def honest(level) -> bytes:
    outcome = sandbox.run({"c.py": b"import os\nos.write(3, b'%d' % (6 * 7))\n"}, "c.py", b"", QUICK, level)
    assert outcome.status == "exited", outcome
    return outcome.reply


def from_grading_thread(*args):
    """sandbox.run(*args) in a thread of a grading pool, which spawns its children itself (keyrings.spawning_thread)."""
    with ThreadPoolExecutor(max_workers=1, initializer=sandbox.spawning_thread) as pool:
        return pool.submit(sandbox.run, *args).result()


@KEYRINGS
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("run", [sandbox.run, from_grading_thread], ids=["spawning thread", "grading thread"])
def test_a_run_neither_reads_nor_keeps_a_key_in_the_graders_session_keyring(level, run):
    """Started from a login session (a session keyring holding an instructor's key), can a child read that key by
    its id or by searching, or leave a key of its own in the grader's session? Whether the run is spawned by the
    sandbox's spawning thread or by a grading thread of a pool, which inherited that keyring when it started."""
    if not keyctl_available():
        pytest.skip("keyrings are not available here (seccomp or kernel)")

    def scenario():
        keyrings.join_fresh_session()  # what `su -l` or an ssh login gives the grader
        secret = b"instructor-token-" + os.urandom(8).hex().encode()
        key = keyrings.add_key("user", "instructor:token", secret, keyrings.KEY_SPEC_SESSION_KEYRING)
        code = (
            CHILD_KEYCTL
            + f"""
search = libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(10), ctypes.c_long(-3), b"user", b"instructor:token",
                      ctypes.c_long(0))
left = add("left-behind", b"student", -3)
os.write(3, json.dumps({{"read": read({key}), "search": search, "mine": keyctl(0, -3, 0), "left": left}}).encode())
"""
        )
        outcome = run({"c.py": code.encode()}, "c.py", b"", QUICK, level)
        return key, secret, outcome, session_keys()

    key, secret, outcome, after = in_thread(scenario)
    assert outcome.status == "exited", outcome
    seen = json.loads(outcome.reply)
    assert seen["read"] == -errno.EACCES and seen["search"] < 0, seen  # not possessed, and not its uid's
    assert seen["left"] > 0 and seen["mine"] > 0  # it had a session keyring of its own, and used it
    assert after == [key], "the grader's session keyring holds its own key and nothing the child added"
    assert secret.decode() not in outcome.output.decode(errors="replace")
    assert honest(level) == b"42"


@KEYRINGS
@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_keys_a_run_leaves_in_its_uids_keyrings_are_gone_for_the_next_run_with_that_uid(level):
    """Run uids are shared by later runs: is a key a child links, readable by anyone, into its user keyring, user
    session keyring and persistent keyring gone (unreadable by its id, by the same uid) when the run ends?"""
    if not keyctl_available():
        pytest.skip("keyrings are not available here (seccomp or kernel)")
    code = (
        CHILD_KEYCTL
        + """
possess()
ids = [add("stash-u", b"hidden board", -4), add("stash-us", b"hidden board", -5)]
persistent = keyctl(22, -1, -3)
ids.append(add("stash-p", b"hidden board", persistent) if persistent > 0 else persistent)
for key in ids:
    keyctl(5, key, 0x3f3f3f3f)  # KEYCTL_SETPERM: everyone may read it
os.write(3, json.dumps({"uid": os.getuid(), "ids": ids, "read": [read(k) for k in ids]}).encode())
"""
    )
    outcome = sandbox.run({"c.py": code.encode()}, "c.py", b"", QUICK, level)
    assert outcome.status == "exited", outcome
    seen = json.loads(outcome.reply)
    assert seen["read"] == ["hidden board"] * 3, seen  # the attack worked inside the run
    uid = int(outcome.reply and seen["uid"]) if level.level == "rlimits" else None
    reader = CHILD_KEYCTL + f"possess()\nfound = json.dumps([read(k) for k in {seen['ids']}])\n"
    if level.level == "rlimits":
        # A later process of that uid outside any sandbox, the strongest reader: every key is gone.
        uid = seen["uid"]
        assert keyrings.keys_of(uid) == 0
        result = subprocess.run(
            [sandbox.child_python()[0], "-I", "-S", "-c", reader + "print(found)"],
            user=uid, group=uid, extra_groups=[], capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert all(value in (-errno.ENOKEY, -errno.EKEYREVOKED, -errno.EACCES) for value in json.loads(result.stdout))
        assert keyrings.clear_uid(uid, sandbox.child_python()[0])  # the reader's own empty keyrings
    again = sandbox.run({"c.py": (reader + "os.write(3, found.encode())").encode()}, "c.py", b"", QUICK, level)
    assert again.status == "exited" and "hidden board" not in json.loads(again.reply), again
    assert honest(level) == b"42"


@KEYRINGS
@ROOT_ONLY
def test_a_uid_whose_run_locked_its_keyrings_is_not_given_to_another_run():
    """At the rlimits level a child can take every permission off its own user keyring (KEYCTL_SETPERM 0), so that
    nobody can empty it: is that uid retired, so no later run gets it? (The keys expire after 3 s.)"""
    if not keyctl_available():
        pytest.skip("keyrings are not available here (seccomp or kernel)")
    code = (
        CHILD_KEYCTL
        + """
ring = keyctl(0, -4, 1)
key = add("stash", b"hidden board", ring)
for each in (key, ring):
    keyctl(15, each, 3)  # KEYCTL_SET_TIMEOUT: gone by itself in 3 s (a real attack would not set one)
keyctl(5, key, 0x3f3f3f3f)
keyctl(5, ring, 0)
os.write(3, str(os.getuid()).encode())
"""
    )
    level = sandbox.Isolation("rlimits", "chosen by the test")
    outcome = sandbox.run({"c.py": code.encode()}, "c.py", b"", QUICK, level)
    assert outcome.status == "exited", outcome
    uid = int(outcome.reply)
    assert uid in pool._retired
    later = [int(sandbox.run({"c.py": b"import os\nos.write(3, str(os.getuid()).encode())"}, "c.py", b"", QUICK,
                             level).reply) for _ in range(3)]  # fmt: skip
    assert uid not in later
    assert honest(level) == b"42"


@pytest.mark.parametrize("level", LEVELS)
def test_doctor_reports_whether_a_child_reads_the_graders_session_keyring(level, monkeypatch):
    """Does `autograde doctor`'s live check pass with the fresh session keyring, and fail (the child read the key
    and left one) when children are spawned straight from the grader's thread, as before?"""
    from autograder.grading import doctor
    from autograder.grading.sandbox import runner

    if not keyctl_available():
        pytest.skip("keyrings are not available here (seccomp or kernel)")
    check, passed, happened = doctor._keyring_check(level)
    assert passed and "denied" in happened and "0 key(s) of that uid left" in happened, happened
    monkeypatch.setattr(runner, "spawn", os.posix_spawn)  # the child shares the doctor thread's session keyring
    check, passed, happened = doctor._keyring_check(level)
    assert not passed and "read was read" in happened and "2 key(s)" in happened, happened


# A child tries to type into the terminal of the grader (TIOCSTI), on its descriptors and on /dev/tty.
TYPE_INTO_TERMINAL = b"""
import fcntl, os, termios
tried = []
for fd in (0, 1, 2, "/dev/tty"):
    try:
        fd = os.open(fd, os.O_RDWR) if isinstance(fd, str) else fd
        fcntl.ioctl(fd, termios.TIOCSTI, b"Q")
        tried.append("typed")
    except OSError as error:
        tried.append(error.errno)
os.write(3, repr(tried).encode())
"""

# Run in a process whose controlling terminal is a pty, like a grader started from a terminal: first a plain
# process of that session types a Z (the control: the attack works where nothing stops it), then a sandboxed run.
TERMINAL_DRIVER = """
import fcntl, os, subprocess, sys, termios
sys.path.insert(0, {root!r})
from autograder.grading import sandbox
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
control = "import fcntl, os, termios; fcntl.ioctl(os.open('/dev/tty', os.O_RDWR), termios.TIOCSTI, b'Z')"
subprocess.run([sys.executable, "-I", "-S", "-c", control], check=False)
outcome = sandbox.run({{"c.py": {code!r}}}, "c.py", b"", sandbox.Limits(cpu_seconds=10, wall_seconds=20),
                      sandbox.Isolation({level!r}, "chosen by the test"))
with open({report!r}, "w") as report:
    report.write(outcome.status + " " + outcome.reply.decode())
"""


@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_a_run_cannot_type_into_the_graders_terminal(level, tmp_path):
    """A grader started from a terminal: can a child push characters into that terminal's input (TIOCSTI), which
    the shell would run as the instructor once the grader exits? (A plain process of the session can.)"""
    import pty
    import select
    import sys
    from pathlib import Path

    master, slave = pty.openpty()
    report = tmp_path / "report"
    driver = TERMINAL_DRIVER.format(
        root=str(Path(__file__).resolve().parents[1]), code=TYPE_INTO_TERMINAL, level=level.level, report=str(report)
    )
    process = subprocess.Popen(
        [sys.executable, "-c", driver], stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    typed = b""
    while process.poll() is None or select.select([master], [], [], 0.2)[0]:
        if select.select([master], [], [], 0.2)[0]:
            try:
                typed += os.read(master, 4096)
            except OSError:
                break
    os.close(master)
    process.wait()
    status, tried = report.read_text().split(" ", 1)
    if b"Z" not in typed:
        pytest.skip(f"TIOCSTI is refused on this kernel even without a sandbox ({typed!r})")
    assert status == "exited" and "typed" not in tried and b"Q" not in typed, (status, tried, typed)
    assert honest(level) == b"42"


@ROOT_ONLY
@pytest.mark.parametrize("level", LEVELS)
def test_concurrent_runs_cannot_signal_each_other_nor_reach_the_graders_abstract_socket(level):
    """Two students graded at the same time: can one kill every process it may signal (kill -1), and so the other
    student's run, or connect to an abstract UNIX socket the grader listens on, or see other processes in /proc?"""
    import socket

    from autograder.grading.sandbox import fallback

    name = b"\0autograde-test-" + os.urandom(6).hex().encode()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(name)
    listener.listen()
    attacker = f"""
import os, signal, socket, time
time.sleep(0.5)  # the classmate is running by now
try:
    os.kill(-1, signal.SIGKILL)
    killed = "sent"
except OSError as error:
    killed = error.errno
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect({name!r})
    reached = "connected"
except OSError as error:
    reached = error.errno
seen = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) != os.getpid()]
os.write(3, repr((killed, reached, seen)).encode())
"""
    classmate = b"import os, time\ntime.sleep(2)\nos.write(3, b'%d' % (6 * 7))\n"
    results = {}

    def grade(key, code):
        results[key] = sandbox.run({"c.py": code}, "c.py", b"", QUICK, level)

    threads = [
        threading.Thread(target=grade, args=args)
        for args in (("classmate", classmate), ("attacker", attacker.encode()))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    listener.close()
    assert results["classmate"].status == "exited" and results["classmate"].reply == b"42", results["classmate"]
    killed, reached, seen = eval(results["attacker"].reply)  # noqa: S307 (our own test's repr)
    private = level.level == "bubblewrap" or fallback.private_tmp()[0] is not None
    if private:  # a network namespace of its own (abstract sockets belong to it) and a /proc of its own
        assert reached != "connected" and seen == [], (reached, seen)
