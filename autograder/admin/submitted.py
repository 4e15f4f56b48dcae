"""When a stage was submitted: from a collection tool's timestamp file, a git repository, or the file times.

The time is read for exactly the file the intake graded for the stage (Submission.files: a near-miss name such
as `1_rules/Rules.py` included), and for nothing else. In this order, the first that answers:
1. when the course policy says the class was collected by nbgrader (`collected_by = "nbgrader"`), the timestamp
   file its exchange writes into the assignment folder it submitted, `<student>/<assignment>/timestamp.txt`, for
   a graded file inside that folder (the format "%Y-%m-%d %H:%M:%S.%f %Z", "2025-03-07 22:59:12.503241 UTC" by
   default; see nbgrader/exchange/default/submit.py and collect.py; ISO 8601 with an offset is read too).
   nbgrader writes it after copying the student's files, over any timestamp.txt of theirs, and makes
   `<student>/` itself: nothing else there is its record (a `<student>/timestamp.txt`, or one in a folder that
   holds a .git, is the student's own). Without that setting a timestamp file is something the student wrote,
   and is never read;
2. when the student folder holds a .git folder of its own, the committer date of the last commit touching the
   graded file, read on a snapshot of the repository's data (intake/git_snapshot.py, so nothing the repository
   configures runs), and only when the graded bytes are the ones HEAD holds: a file changed after its last
   commit was not handed in at that commit's date;
3. the graded file's modification time (of the .zip for a zipped submission).

Each is only as trustworthy as what wrote it: a timestamp file the collection tool wrote is; a commit date
is whatever the student's machine (or the student) said; file times are what the copy kept. Which one was used
is part of the result, and the report shows it. A stage that was graded but has no time at all gets the source
NO_TIME, which the feedback, the report and the terminal show, rather than passing as on time.
"""

import hashlib
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.course.stages import STAGE_BY_ID, Stage
from autograder.grading.intake.git_snapshot import GitError, git_dir_problem, git_output, has_git, snapshot
from autograder.grading.intake.tree import MAX_FILE_BYTES
from autograder.record import NO_TIME

TIMESTAMP_FILE = "timestamp.txt"
MAX_TIMESTAMP_BYTES = 200
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
    stage_id = stage if isinstance(stage, str) else stage.id
    if graded is None:
        return None
    return submission_times(student_dir, {STAGE_BY_ID[stage_id].id: graded}, collected_by)[stage_id]


def submission_times(
    student_dir: Path, graded: dict[str, str], collected_by: str | None = None
) -> dict[str, Submitted]:
    """submission_time for every stage of graded (stage id -> the path of its graded file), the repository read
    once for them all."""
    if student_dir.is_file():  # a zip: its members' times are naive and the student's; the zip's own is the copy's
        when = _mtime(student_dir)
        return {stage_id: Submitted(when, "file times") if when else _no_time() for stage_id in graded}
    times: dict[str, Submitted] = {}
    if collected_by is not None and not has_git(student_dir):
        for stage_id, path in graded.items():
            when = collected_time(student_dir, path)
            if when is not None:
                times[stage_id] = Submitted(when, "timestamp file")
    untimed = {stage_id: path for stage_id, path in graded.items() if stage_id not in times}
    if untimed and git_dir_problem(student_dir) is None:
        for stage_id, when in git_commit_times(student_dir, untimed).items():
            times[stage_id] = Submitted(when, "git commit")
    for stage_id, path in graded.items():
        if stage_id not in times:
            when = _mtime(student_dir / path)
            times[stage_id] = Submitted(when, "file times") if when is not None else _no_time()
    return times


def collected_time(student_dir: Path, graded: str) -> datetime | None:
    """The collection tool's time for a graded file: nbgrader's timestamp.txt in the assignment folder it made
    directly under the student's (graded's first folder), or None (a file outside any such folder has none)."""
    parts = graded.split("/")
    if len(parts) < 2:
        return None
    try:
        if not stat.S_ISDIR(os.lstat(student_dir / parts[0]).st_mode):
            return None  # a link to a folder is not the one nbgrader made
    except OSError:
        return None
    return timestamp_file_time(student_dir / parts[0] / TIMESTAMP_FILE)


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
            return _last_commit_time(git_dir, paths)
    except (GitError, OSError):
        return None


def git_commit_times(repo: Path, graded: dict[str, str]) -> dict[str, datetime]:
    """For each stage of graded whose file in the working tree is byte for byte the one HEAD holds, the committer
    date of the last commit touching it; the others are left out (untracked, changed since, or unreadable)."""
    times = {}
    try:
        with snapshot(repo) as git_dir:
            listing = git_output(git_dir, "ls-tree", "-z", "HEAD", "--", *(_literal(path) for path in graded.values()))
            at_head = {}
            for record in listing.split(b"\0"):
                meta, _, path = record.partition(b"\t")
                fields = meta.split()  # mode, type, id
                if len(fields) == 3 and fields[1] == b"blob":
                    at_head[path.decode("utf-8", "surrogateescape")] = fields[2].decode()
            for stage_id, path in graded.items():
                if at_head.get(path) is None or at_head[path] != _blob_id(repo / path):
                    continue
                when = _last_commit_time(git_dir, [path])
                if when is not None:
                    times[stage_id] = when
    except (GitError, OSError):
        pass
    return times


def _last_commit_time(git_dir: Path, paths) -> datetime | None:
    output = git_output(git_dir, "log", "-1", "--format=%cI", "HEAD", "--", *(_literal(path) for path in paths))
    line = output.decode(errors="replace").strip().split("\n")[0]
    try:
        when = datetime.fromisoformat(line) if line else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def _literal(path: str) -> str:
    return f":(literal){path}"


def _blob_id(path: Path) -> str | None:
    """The id git gives these bytes as a blob (SHA-1), read without following a link; None if not readable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        return None
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()


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
    "collected_time",
    "git_commit_time",
    "git_commit_times",
    "parse_timestamp",
    "submission_time",
    "submission_times",
    "timestamp_file_time",
]
