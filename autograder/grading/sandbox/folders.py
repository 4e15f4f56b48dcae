"""Run folders: where each run's files are written, readable by the run's uid only."""

from __future__ import annotations

import os
import tempfile

from autograder.grading.sandbox.host import is_root

RUNS_DIR = "/run/autograde-runs"  # as root: run folders live outside /tmp, which a run gets a private copy of


def runs_dir() -> str:
    if is_root() and os.path.isdir(os.path.dirname(RUNS_DIR)):
        return RUNS_DIR
    return tempfile.gettempdir()


def check_name(name: str) -> None:
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        raise ValueError(f"sandbox file names must be flat, got {name!r}")


def prepare(base: str, files: dict[str, bytes], uid: int | None) -> tuple[str, str]:
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
