"""When a stage was submitted: from a collection tool's timestamp file, a git repository, or the file times.

The time is read for exactly the file the intake graded for the stage (Submission.files: a near-miss name such
as `1_rules/Rules.py` included), and for nothing else. In this order, the first that answers:
1. when the course policy says the class was collected by nbgrader (`collected_by = "nbgrader"`), the timestamp
   file its exchange writes, `<student>/<stage>/timestamp.txt`, then `<student>/timestamp.txt` (the format
   "%Y-%m-%d %H:%M:%S.%f %Z", "2025-03-07 22:59:12.503241 UTC" by default; see nbgrader/exchange/abc/exchange.py,
   `timestamp_format`; ISO 8601 with an offset is read too). nbgrader writes it after copying the student's
   files, over any timestamp.txt of theirs. Without that setting a timestamp file is something the student
   wrote, and is never read;
2. when the student folder holds a .git folder of its own, the committer date of the last commit touching the
   graded file, read on a snapshot of the repository's data (intake/git_snapshot.py), so nothing the
   repository configures runs;
3. the graded file's modification time (of the .zip for a zipped submission).

Each is only as trustworthy as what wrote it: a timestamp file the collection tool wrote is; a commit date
is whatever the student's machine (or the student) said; file times are what the copy kept. Which one was used
is part of the result, and the report shows it. A stage that was graded but has no time at all gets the source
NO_TIME, which the feedback, the report and the terminal show, rather than passing as on time.
"""

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.course.stages import STAGE_BY_ID, Stage
from autograder.grading.intake.git_snapshot import GitError, git_dir_problem, git_output, snapshot

TIMESTAMP_FILE = "timestamp.txt"
MAX_TIMESTAMP_BYTES = 200
NO_TIME = "no time found"
SOURCES = ("timestamp file", "git commit", "file times", NO_TIME)


@dataclass(frozen=True)
class Submitted:
    when: datetime | None  # aware; None only with the source NO_TIME
    source: str  # one of SOURCES


def submission_time(
    student_dir: Path, stage: Stage | str, graded: str | None, collected_by: str | None = None
) -> Submitted | None:
    """When the stage's graded file (graded: its path inside the submission) was submitted, and from which source.

    None when nothing was graded for the stage (not submitted); Submitted with source NO_TIME when something was
    graded but no time can be read for it.
    """
    stage = STAGE_BY_ID[stage] if isinstance(stage, str) else stage
    if graded is None:
        return None
    if student_dir.is_file():  # a zip: its members' times are naive and the student's; the zip's own is the copy's
        when = _mtime(student_dir)
        return Submitted(when, "file times") if when else _no_time()
    if collected_by is not None:
        folders = [student_dir / stage.id, student_dir]
        for folder in folders:
            when = timestamp_file_time(folder / TIMESTAMP_FILE)
            if when is not None:
                return Submitted(when, "timestamp file")
    if git_dir_problem(student_dir) is None:
        when = git_commit_time(student_dir, [graded])
        if when is not None:
            return Submitted(when, "git commit")
    when = _mtime(student_dir / graded)
    return Submitted(when, "file times") if when is not None else _no_time()


def _no_time() -> Submitted:
    return Submitted(None, NO_TIME)


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
    """The committer date of the last commit (touching paths, when given) of the repository at repo.

    None when it is not a repository the grader reads (see git_snapshot), has no such commit, or git is not
    installed. Git runs on a snapshot of the repository's data, never on the repository itself.
    """
    try:
        with snapshot(repo) as git_dir:
            output = git_output(
                git_dir, "log", "-1", "--format=%cI", "HEAD", "--", *(f":(literal){path}" for path in paths)
            )
    except (GitError, OSError):
        return None
    line = output.decode(errors="replace").strip().split("\n")[0]
    try:
        when = datetime.fromisoformat(line) if line else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def _mtime(path: Path) -> datetime | None:
    """A regular file's modification time (a link is not followed), in UTC."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=info.st_mtime_ns // 1000)


__all__ = [
    "NO_TIME",
    "SOURCES",
    "Submitted",
    "git_commit_time",
    "parse_timestamp",
    "submission_time",
    "timestamp_file_time",
]
