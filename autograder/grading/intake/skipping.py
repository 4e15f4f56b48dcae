"""Which entries of a SUBMISSIONS folder are not students, and why: each is skipped with a note saying so.

Looked at without following links and reading at most a few KiB of a file the grader itself writes, so a
student cannot make the look cost anything: one open folder, three names tried in it.
"""

import os
import stat

from autograder.grading.intake.layout import is_near
from autograder.grading.intake.tree import OPEN_DIR, OPEN_FILE
from autograder.outputs.results import RESULTS_START

# Folders and files that tools leave beside the submissions (compared without case).
TOOL_LEFTOVERS = {
    "__macosx": "macOS's resource forks, added when a zip is made in the Finder",
    "thumbs": "a Windows thumbnail folder",
    "thumbs.db": "a Windows thumbnail cache",
    "desktop.ini": "a Windows folder setting",
    ".ds_store": "a macOS folder setting",
    ".git": "a git repository's own data",
    ".ipynb_checkpoints": "Jupyter's autosaved copies",
}
SQLITE_HEADER = b"SQLite format 3\0"


def why_skipped(folder: str, entry: str, info: os.stat_result) -> str | None:
    """Why an entry of SUBMISSIONS (lstat'ed as info) is not a student, or None when it may be one."""
    known = TOOL_LEFTOVERS.get(entry.casefold())
    if known:
        return f"{known}, not a student"
    if entry.startswith("."):
        return "a hidden " + ("folder" if stat.S_ISDIR(info.st_mode) else "file") + ", not a student"
    if entry.startswith("_"):
        return "names starting with '_' are not students (the grader's own folders start with it)"
    if stat.S_ISDIR(info.st_mode):
        return grader_output(os.path.join(folder, entry))
    return None


def grader_output(path: str) -> str | None:
    """Does the folder hold what an earlier run of the grader wrote (a gradebook, or a student's results.json)?"""
    try:
        fd = os.open(path, OPEN_DIR)
    except OSError:
        return None  # read_student says why it cannot be read
    try:
        if _starts_with(fd, "gradebook.db", SQLITE_HEADER):
            return "it holds a gradebook.db: an earlier run's output folder, not a submission"
        if _starts_with(fd, "results.json", RESULTS_START):
            return "it holds a results.json the grader wrote: a student's results from an earlier run"
    finally:
        os.close(fd)
    return None


def _starts_with(folder_fd: int, name: str, start: bytes) -> bool:
    try:
        fd = os.open(name, OPEN_FILE, dir_fd=folder_fd)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(start)) == start
    except OSError:
        return False
    finally:
        os.close(fd)


def stage_entries(entries: list[str]) -> list[str]:
    """The entries named like a stage's folder or module (or nearly): what one student's folder holds."""
    return [entry for entry in entries if is_near(entry)]
