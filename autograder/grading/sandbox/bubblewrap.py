"""The bubblewrap level: bwrap's version and the command line that gives a run its own namespaces and file view."""

from __future__ import annotations

import os
import subprocess

from autograder.grading.sandbox.limits import TMPFS_BYTES

SANDBOX_DIR = "/submission"  # where the submission folder appears inside bubblewrap
BWRAP_PROCESSES = 1  # bwrap's own process in a run (its monitor; the child is the namespace's pid 1)


def bwrap_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown version"
    return out.strip() or "unknown version"


def bwrap_args(bwrap: str, folder: str, python: str, prefix: str) -> list[str]:
    # --as-pid-1: no reaper process between bwrap and the child: one process fewer (0.7 ms a run here) and, without
    # cgroups, the child's CPU time reaches the rusage of the bwrap we reap. As pid 1 it ignores the signals it sends
    # itself without a handler; faults and our SIGKILL still end it, and when it ends, the pid namespace and every
    # process in it end too.
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"]
    args.append("--as-pid-1")
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
