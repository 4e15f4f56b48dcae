"""`autograde doctor`: say which isolation and whole-run limits this machine gives student code, and check them live."""

import argparse
import os
import platform
import socket
import subprocess
import threading
from pathlib import Path

from autograder.grading import sandbox
from autograder.grading.sandbox.cgroups import cgroup_tree
from autograder.grading.sandbox.host import tool

ROOT = Path(__file__).resolve().parents[2]


def _userns_works() -> tuple[bool, str]:
    """Can an unprivileged uid create a user namespace (what bubblewrap needs when it is not setuid)?"""
    unshare = tool("unshare")
    if unshare is None:
        return False, "unshare (util-linux) not found, so not tested"
    command = [unshare, "--user", "--map-root-user", "true"]
    if sandbox.is_root():
        setpriv = tool("setpriv")
        if setpriv is None:
            return False, "setpriv not found, so not tested"
        uid = sandbox.UID_BASE
        command = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    if result.returncode == 0:
        return True, "an unprivileged uid can create user namespaces"
    return False, f"an unprivileged uid cannot create user namespaces ({result.stderr.strip() or result.returncode})"


def _live_checks(isolation: sandbox.Isolation) -> list[tuple[str, bool, str]]:
    """(check, passed, what happened) for a few escapes, tried by a real child under the level in force."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        code = f"""
import os, socket
def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as error:
        return type(error).__name__
results = [
    attempt(lambda: os.listdir({str(ROOT)!r})),
    attempt(lambda: os.listdir("/work")),
    attempt(lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2).close()),
    attempt(lambda: os.kill(int({os.getpid()}), 0)),
]
os.write(3, " ".join(results).encode())
"""
        outcome = sandbox.run({"doctor.py": code.encode()}, "doctor.py", b"", sandbox.PATIENT_PROBE_LIMITS, isolation)
        try:
            listener.accept()[0].close()
            heard = True
        except TimeoutError:
            heard = False
    if outcome.status != "exited" or len(outcome.reply.split()) != 4:
        return [("a child runs and replies", False, f"{outcome.status}: {outcome.detail or outcome.output[-300:]!r}")]
    repo, work, net, signal = outcome.reply.decode().split()
    return [
        ("a child runs and replies", True, f"{outcome.wall_seconds * 1000:.0f} ms"),
        (f"a child cannot read the repository {ROOT}", repo != "allowed", repo),
        ("a child cannot read /work", work != "allowed", work),
        ("a child cannot connect to 127.0.0.1", net != "allowed" and not heard, net),
        ("a child cannot signal the grader", signal != "allowed", signal),
    ]


def _keyring_check(isolation: sandbox.Isolation) -> tuple[str, bool, str]:
    """A key in the grader's session keyring (as after `su -l`): can a real child read it, or leave one behind?"""
    from autograder.grading.sandbox import keyrings

    check = "a child cannot read the grader's session keyring, nor leave a key in it or its uid's keyrings"
    box: dict = {}

    def attempt():  # in a thread of its own: keyrings belong to a thread, and the doctor's keeps its own
        try:
            if not keyrings.join_fresh_session():
                box["said"] = (True, "keyrings are not available here (kernel or seccomp): nothing to read")
                return
            key = keyrings.add_key("user", "autograde-doctor", b"doctor-secret", keyrings.KEY_SPEC_SESSION_KEYRING)
        except OSError as error:
            box["said"] = (True, f"keyrings are not available here ({error.strerror})")
            return
        machine = keyrings._SYSCALLS[platform.machine()]
        code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buffer = ctypes.create_string_buffer(64)
read = libc.syscall(ctypes.c_long({machine[1]}), ctypes.c_long(11), ctypes.c_long({key}), buffer, ctypes.c_long(64))
left = libc.syscall(ctypes.c_long({machine[0]}), b"user", b"left", b"x", ctypes.c_size_t(1), ctypes.c_long(-3))
mine = libc.syscall(ctypes.c_long({machine[0]}), b"user", b"left", b"x", ctypes.c_size_t(1), ctypes.c_long(-4))
os.write(3, (b"read" if read >= 0 else b"denied") + b" %d %d" % (os.getuid(), mine))
"""
        outcome = sandbox.run({"keys.py": code.encode()}, "keys.py", b"", sandbox.PATIENT_PROBE_LIMITS, isolation)
        linked = keyrings.keyctl(keyrings.KEYCTL_READ, keyrings.KEY_SPEC_SESSION_KEYRING, 0, 0) // 4
        read, uid, mine = (outcome.reply.decode(errors="replace").split() + ["", "-1", "-1"])[:3]
        # The uid's own keyrings (user, user session): run uids are reused, so a key left there must be gone now.
        kept = keyrings.keys_of(int(uid)) if sandbox.is_root() and uid.isdigit() and int(uid) > 0 else 0
        box["said"] = (
            read == "denied" and linked == 1 and kept == 0,
            f"the child's read was {read or outcome.status}; {linked} key(s) in the grader's session keyring after "
            f"the run (1 is the doctor's own); the child {'added' if int(mine) > 0 else 'could not add'} a key to "
            f"its uid's user keyring, {kept} key(s) of that uid left after the run",
        )

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    passed, happened = box.get("said", (False, "the check failed to run"))
    return check, passed, happened


# Four busy processes, each in a session of its own; without cgroups the fork must fail and the child spins alone.
FORKING_HOG = b"""
import os
for _ in range(4):
    try:
        if os.fork() == 0:
            os.setsid()
            break
    except OSError:
        os.write(3, b"no-fork")
        break
while True:
    pass
"""


def _whole_run_check(isolation: sandbox.Isolation) -> tuple[str, bool, str]:
    """A child that forks busy setsid processes must be stopped when they all together used the CPU limit."""
    limits = sandbox.Limits(cpu_seconds=1, wall_seconds=30)
    outcome = sandbox.run({"hog.py": FORKING_HOG}, "hog.py", b"", limits, isolation)
    used = f"{outcome.status} after {outcome.cpu_seconds:.2f} s of CPU in {outcome.wall_seconds:.2f} s"
    within = outcome.status == "timeout" and outcome.cpu_seconds < 1.5
    if isolation.cgroups == "none":
        return (
            "a child cannot fork (no cgroups), and stops at its 1 s CPU limit",
            within and outcome.reply == b"no-fork",
            used,
        )
    return "four busy setsid processes together stop at the 1 s CPU limit", within and outcome.reply == b"", used


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="autograde doctor", description=__doc__)
    parser.parse_args(argv)

    try:
        isolation = sandbox.detect()
    except RuntimeError as error:
        print(f"isolation level: refused: {error}")
        return 2
    print(f"isolation level: {isolation.level}")
    print(f"  what it protects: {isolation.detail}")
    tree, reason = cgroup_tree()
    if tree is not None:
        print(f"cgroups: {tree.version}, one per run under {', '.join(tree.parents)}")
    else:
        print(f"cgroups: none ({reason}); a run cannot start another process")
    bwrap = tool("bwrap")
    print(f"bubblewrap: {bwrap} ({sandbox.bwrap_version(bwrap)})" if bwrap else "bubblewrap: not installed")
    works, why = _userns_works()
    print(f"user namespaces: {'yes' if works else 'no'} ({why})")
    if sandbox.is_root():
        last = sandbox.UID_BASE + sandbox.UID_COUNT - 1
        print(f"running as root: yes; each run gets its own uid from {sandbox.UID_BASE}-{last}")
    else:
        print(f"running as root: no; children run as the grader's uid {os.getuid()}")
    try:
        python, prefix = sandbox.child_python()
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        print(f"child interpreter: none usable ({error})")
        return 1
    print(f"child interpreter: {python} -I -S (prefix {prefix})")

    failed_essential = False
    warnings = 0
    print("live checks:")
    for check, passed, happened in [*_live_checks(isolation), _keyring_check(isolation), _whole_run_check(isolation)]:
        essential = check == "a child runs and replies" or "CPU limit" in check
        mark = "ok  " if passed else ("FAIL" if essential else "WARN")
        print(f"  {mark} {check}: {happened}")
        failed_essential |= essential and not passed
        warnings += not passed and not essential
    if warnings and isolation.level in ("rlimits", "none"):
        print(f"the {isolation.level} level does not hide files: install bubblewrap (apt-get install -y bubblewrap)")
    return 1 if failed_essential else 0
