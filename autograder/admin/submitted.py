"""When a stage was submitted: from a collection tool's timestamp file, a git repository, or the file times.

In this order, the first that answers:
1. a timestamp file written by the instructor's collection tool, `<student>/<stage>/timestamp.txt`, then
   `<student>/timestamp.txt`: nbgrader's convention (its exchange writes the time of `nbgrader submit` with
   the format "%Y-%m-%d %H:%M:%S.%f %Z", "2025-03-07 22:59:12.503241 UTC" by default; see
   nbgrader/exchange/abc/exchange.py, `timestamp_format`). ISO 8601 with an offset is read too;
2. when the student folder holds a .git folder, the committer date of the last commit touching the stage's
   files (`git log -1 --format=%cI -- <files>`), read by the grader with the repository's hooks, fsmonitor,
   signature checks and the machine's git configuration all turned off, so nothing of the student's runs;
3. the latest modification time of the stage's files (of the .zip for a zipped submission).

Each is only as trustworthy as what wrote it: a timestamp file the collection tool wrote is; a commit date
is what the student's machine said; file times are what the copy kept. Which one was used is part of the
result, and the report shows it.
"""

import os
import stat
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.course.stages import STAGE_BY_ID, Stage
from autograder.grading.intake.folders import FolderTree
from autograder.grading.intake.layout import candidates, locate

TIMESTAMP_FILE = "timestamp.txt"
MAX_TIMESTAMP_BYTES = 200
GIT_SECONDS = 20
SOURCES = ("timestamp file", "git commit", "file times")


@dataclass(frozen=True)
class Submitted:
    when: datetime  # aware
    source: str  # one of SOURCES


def submission_time(student_dir: Path, stage: Stage | str) -> Submitted | None:
    """When the stage was submitted, and from which source; None when nothing of the stage is there."""
    stage = STAGE_BY_ID[stage] if isinstance(stage, str) else stage
    if student_dir.is_file():  # a zip: its members' times are naive and the student's; the zip's own is the copy's
        when = _mtime(student_dir)
        return Submitted(when, "file times") if when else None
    root = _stage_root(student_dir)
    files = [name for name in candidates(stage) if _mtime(root / name) is not None]
    if not files:
        return None
    for folder in dict.fromkeys((root / stage.id, root, student_dir)):
        when = timestamp_file_time(folder / TIMESTAMP_FILE)
        if when is not None:
            return Submitted(when, "timestamp file")
    if _is_real_dir(student_dir / ".git"):
        prefix = root.relative_to(student_dir).as_posix()
        paths = [f"{prefix}/{name}" if prefix != "." else name for name in files]
        when = git_commit_time(student_dir, paths) if paths else None
        if when is not None:
            return Submitted(when, "git commit")
    return Submitted(max(_mtime(root / name) for name in files), "file times")


def parse_timestamp(text: str) -> datetime | None:
    """nbgrader's "2025-03-07 22:59:12.503241 UTC" (any IANA zone or a +hhmm offset), or ISO 8601 with an offset."""
    text = text.strip()
    parts = text.split(" ")
    try:
        if len(parts) == 3:
            when = datetime.fromisoformat(f"{parts[0]}T{parts[1]}")
            zone = parts[2]
            if zone[:1] in "+-":
                return when.replace(tzinfo=datetime.strptime(zone, "%z").tzinfo)
            return when.replace(tzinfo=UTC if zone in ("UTC", "GMT", "Z") else ZoneInfo(zone))
        when = datetime.fromisoformat(text)
    except (ValueError, ZoneInfoNotFoundError):
        return None
    return when if when.tzinfo is not None else None  # a time without a zone means nothing


def timestamp_file_time(path: Path) -> datetime | None:
    """The time in a timestamp file, read without following a link and capped; None if absent or not a time."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_TIMESTAMP_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return parse_timestamp(raw.decode("utf-8", "replace"))


def git_commit_time(repo: Path, paths: list[str] | tuple[str, ...] = ()) -> datetime | None:
    """The committer date of the last commit (touching paths, when given) of the repository at repo, read-only.

    None when it is not a repository git can read, has no such commit, or git is not installed. Nothing of the
    repository's own runs: no hooks, no fsmonitor, no signature program, no pager, no system or global config.
    """
    git_dir = repo / ".git"
    if not _is_real_dir(git_dir):
        return None
    command = [
        "git",
        f"--git-dir={git_dir}",
        f"--work-tree={repo}",
        "--no-optional-locks",
        "--no-pager",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        f"safe.directory={repo}",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "log.showSignature=false",
        "-c",
        "gpg.program=/bin/false",
        "log",
        "-1",
        "--no-show-signature",
        "--format=%cI",
        "--",
        *(f":(literal){path}" for path in paths),
    ]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "HOME": "/nonexistent",
        "LC_ALL": "C",
    }
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GIT_SECONDS, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
    try:
        when = datetime.fromisoformat(line) if line else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def _stage_root(student_dir: Path) -> Path:
    """The folder holding the stage files, through wrapper folders, as intake finds it."""
    try:
        tree = FolderTree(student_dir, student_dir.name)
    except Exception:
        return student_dir
    try:
        return student_dir.joinpath(*locate(tree))
    except Exception:
        return student_dir
    finally:
        tree.close()


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _mtime(path: Path) -> datetime | None:
    """A regular file's modification time (a link is not followed), in UTC."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=info.st_mtime_ns // 1000)


__all__ = ["SOURCES", "Submitted", "git_commit_time", "parse_timestamp", "submission_time", "timestamp_file_time"]
