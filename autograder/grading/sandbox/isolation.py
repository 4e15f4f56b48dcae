"""The isolation levels (bubblewrap, rlimits, none): what each protects, and choosing the strongest that works."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from autograder.grading.sandbox.bubblewrap import bwrap_version
from autograder.grading.sandbox.cgroups import Tree, cgroup_tree, cgroups_in_use
from autograder.grading.sandbox.fallback import DISK_TICK, private_tmp, shared_places
from autograder.grading.sandbox.host import cache_lock, child_python, is_root, tool
from autograder.grading.sandbox.limits import PATIENT_PROBE_LIMITS, TMPFS_BYTES, Limits
from autograder.grading.sandbox.run_result import RunResult
from autograder.grading.sandbox.uids import UID_BASE, UID_COUNT


@dataclass(frozen=True)
class Isolation:
    level: str  # "bubblewrap", "rlimits" (root, another uid) or "none" (not root: no isolation from the grader)
    detail: str  # exactly what is protected and what is not
    cgroups: str = field(default_factory=cgroups_in_use)  # "v1", "v2" or "none"


_isolation: Isolation | None = None
# Held for a whole detection: a caller that comes while another thread detects (`autograde grade` starts it early,
# in a thread of its own) waits for that answer instead of trying every level a second time.
_detecting = threading.Lock()


def _limits_text(tree: Tree | None, reason: str) -> str:
    if tree is not None:
        return (
            f"CPU time, memory and processes limited for all of a run's processes together, with equal CPU shares "
            f"(cgroup {tree.version})"
        )
    return f"no cgroups ({reason}): CPU time and memory limited per process, and a run cannot start another process"


# What detect_with() tries a level with: the sandbox's run(), passed in so that this module stays below the runner.
Run = Callable[[dict[str, bytes], str, bytes, Limits, Isolation], RunResult]


def detect_with(run: Run, fresh: bool = False) -> Isolation:
    """The strongest level that really works here (tried once with a real child run by run, then cached; fresh: try
    again). The sandbox's detect() is this with its own run().

    Raises RuntimeError (one line) when the only thing left would be no isolation from the grader and
    AUTOGRADE_ISOLATION=none was not given, or when a level or cgroup version forced by the environment fails.
    """
    with _detecting:
        with cache_lock:
            if _isolation is not None and not fresh:
                return _isolation
        return _detect(run, fresh)


def _detect(run: Run, fresh: bool) -> Isolation:
    global _isolation
    forced = os.environ.get("AUTOGRADE_ISOLATION", "").strip().lower()
    if forced not in ("", "bubblewrap", "rlimits", "none"):
        raise RuntimeError(f"AUTOGRADE_ISOLATION={forced!r}: use bubblewrap, rlimits or none")
    # The children's interpreter is asked for its version (a Python start) while the cgroups are tried; the probe
    # run below waits for that answer, and asks again if it failed, which raises there.
    threading.Thread(target=_child_python_quietly, name="child-python").start()
    tree, reason = cgroup_tree(fresh)
    cgroups = tree.version if tree else "none"
    limits = _limits_text(tree, reason)
    root = is_root()
    uid = os.getuid()
    if forced == "none" and root:
        raise RuntimeError(
            "AUTOGRADE_ISOLATION=none is for a grader that is not root; as root use rlimits or bubblewrap"
        )
    if forced == "none":
        found = Isolation(
            "none",
            f"no isolation from the grader (AUTOGRADE_ISOLATION=none): student code runs as the grader's own uid "
            f"{uid}, so it can read and change every file the grader can (the gradebook and other students' "
            f"results included), signal or kill the grader and use the network, and its files are not removed; "
            f"{limits}",
            cgroups,
        )
    elif forced == "rlimits" and not root:
        raise RuntimeError(_refusal("AUTOGRADE_ISOLATION=rlimits needs root (it runs each child as another uid)"))
    else:
        found = None
        bwrap = tool("bwrap") if forced != "rlimits" else None
        why_not = "AUTOGRADE_ISOLATION=rlimits" if forced == "rlimits" else "bubblewrap not installed"
        if bwrap is not None:
            version = bwrap_version(bwrap)
            who = (
                "as its own unprivileged uid"
                if root
                else f"as the grader's uid {uid} mapped into its user namespace (not root: it still shares the "
                f"grader's uid for the kernel's per-user counts)"
            )
            trial = Isolation(
                "bubblewrap",
                f"{version}: each run in its own user, pid, network, IPC, UTS and mount namespaces {who}, seeing "
                f"only the Python runtime and its own files (read-only) and a {TMPFS_BYTES >> 20} MiB /tmp: no other "
                f"file, no network, no other process (the kernel is shared); {limits}",
                cgroups,
            )
            probe = run({"probe.py": b"import os\nos.write(3, b'ok')\n"}, "probe.py", b"", PATIENT_PROBE_LIMITS, trial)
            if probe.status == "exited" and probe.returncode == 0 and probe.reply == b"ok":
                found = trial
            elif forced == "bubblewrap":
                raise RuntimeError(f"AUTOGRADE_ISOLATION=bubblewrap but bubblewrap fails here: {_why(probe)}")
            else:
                why_not = f"{version} is installed but fails here ({_why(probe)})"
        if found is None and not root:
            raise RuntimeError(_refusal(f"not root and {why_not}"))
        if found is None:
            found = Isolation("rlimits", f"rlimits ({why_not}): {_rlimits_text()}; {limits}", cgroups)
    with cache_lock:
        _isolation = found
        return _isolation


def _child_python_quietly() -> None:
    try:
        child_python()
    except Exception:  # noqa: BLE001 (raised again where a run needs the interpreter)
        pass


def _refusal(why: str) -> str:
    return (
        f"{why}, so student code would run with no isolation from the grader (as uid {os.getuid()}, able to "
        f"read and change its files and to kill it): run as root, make bubblewrap work, or set "
        f"AUTOGRADE_ISOLATION=none to grade without isolation"
    )


def _rlimits_text() -> str:
    last = UID_BASE + UID_COUNT - 1
    text = (
        f"each run as its own unprivileged uid ({UID_BASE}-{last}), so it cannot signal the grader or change its files"
    )
    fstab, why = private_tmp()
    if fstab:
        places = ", ".join(["/tmp", *(p for p in shared_places() if p not in ("/tmp", "/dev/mqueue"))])
        text += (
            f", in its own mount, IPC, network and UTS namespaces: no network, and one private {TMPFS_BYTES >> 20} "
            f"MiB tmpfs over {places} (gone after the run; any other folder that every user may write to is not "
            f"covered)"
        )
    else:
        text += (
            f"; no private namespaces ({why}): it can use the network, and its files in the shared folders "
            f"{', '.join(shared_places())} are counted every {DISK_TICK * 1000:.0f} ms, the run stopped once they "
            f"pass {TMPFS_BYTES >> 20} MiB (a burst between two looks gets through), and removed after the run with "
            f"its SysV IPC objects"
        )
    hidden = (
        "; the course, the reference solutions, the hidden checks, the class and OUT are covered by empty mounts, "
        "and a child of this level tries to open them before anything is graded (the grader refuses if one opens)"
        if fstab
        else "; nothing is hidden by mounts: a child of this level tries to open the course, the reference solutions, "
        "the hidden checks, the class and OUT before anything is graded, and the grader refuses if one opens"
    )
    return text + hidden + "; its processes are all killed after the run"


def _why(outcome: RunResult) -> str:
    text = outcome.output.decode("utf-8", "replace").strip().splitlines()
    return (text[-1] if text else outcome.detail or outcome.status)[:200]
