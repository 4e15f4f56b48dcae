"""A class of git repositories, as GitHub Classroom's tools clone them: SUBMISSIONS/<assignment>-<username>/.git.

The student's name is the username: the longest prefix ending in "-" that every folder's name shares (the
assignment's name) is dropped, when there are at least two repositories and every name left is a plain one.
Without --at the working tree is read like any submission folder (the intake opens only the stage files, so
.git and everything else is never read). With --at the repository is read as it was at that time, at its last
commit at or before it (by the committer's date), without touching its working tree: the stage files of that
commit are copied out of git's object store (`git ls-tree`, `git cat-file`) into a temporary folder, which the
usual folder reader then reads with all its caps. Git never reads the student's repository itself: it runs on a
snapshot of its history data in a folder of the grader's own (git_snapshot.py), so nothing the repository
configures runs, and a .git that points elsewhere is refused for that student.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from autograder.course.stages import STAGES
from autograder.grading.intake.git_snapshot import GitError, git_output, has_git, snapshot
from autograder.grading.intake.layout import FLAT_NAMES, MAX_WRAPPERS, STAGE_FOLDERS
from autograder.grading.intake.text import note
from autograder.grading.intake.tree import MAX_FILE_BYTES, MAX_TOTAL_BYTES
from autograder.grading.submissions import ClassError, Submission, read_student
from autograder.record import Commit

__all__ = ["Commit", "class_of", "parse_at", "read_at"]

MAX_LISTING_BYTES = 16 << 20  # of `git ls-tree -r` output: some 200,000 paths
MAX_COPIED = 200  # stage-named entries copied out of one commit; a real one has 7 to 14
# The stage files sit at most this deep: wrappers, then a stage folder, then the module.
MAX_DEPTH = MAX_WRAPPERS + 2
# ---------------------------------------------------------------------------------------------------------------
# The class


def is_repository(path: Path) -> bool:
    """A folder holding a .git of any kind: whether git may read it is decided per student (snapshot)."""
    return not path.is_symlink() and path.is_dir() and has_git(path)


def is_repository_class(students: list[tuple[str, Path]]) -> bool:
    """Is every submission a git repository (a folder holding .git)?"""
    return bool(students) and all(is_repository(path) for _name, path in students)


def assignment_prefix(names: list[str]) -> str:
    """The longest prefix ending in "-" shared by every name, or "" (one name alone has no known prefix)."""
    if len(names) < 2:
        return ""
    shared = os.path.commonprefix(names)
    prefix = shared[: shared.rfind("-") + 1]
    left = [name[len(prefix) :] for name in names]
    if any(not name or name.startswith((".", "_", "-")) for name in left):
        return ""  # a name would be empty, or hidden, or look like an output folder: keep the folders' names
    return prefix


def usernames(students: list[tuple[str, Path]]) -> tuple[list[tuple[str, Path]], list[str]]:
    """The students named by their usernames, and a note saying which prefix was dropped."""
    prefix = assignment_prefix([name for name, _path in students])
    if not prefix:
        return students, []
    renamed = sorted((name[len(prefix) :], path) for name, path in students)
    return renamed, [note(f"git repositories: each student is named by their folder's name without {prefix!r}")]


def class_of(students: list[tuple[str, Path]], notes: list[str], at: bool) -> tuple[list[tuple[str, Path]], list[str]]:
    """find_class's students named by username when they are all git repositories; --at (at) requires that."""
    if is_repository_class(students):
        renamed, more = usernames(students)
        return renamed, [*notes, *more]
    if at:
        plain = next(path for _name, path in students if not is_repository(path))
        raise ClassError(f"--at grades git repositories, and {plain.name} is not one (no .git in it)")
    return students, notes


# ---------------------------------------------------------------------------------------------------------------
# --at


def parse_at(text: str) -> tuple[datetime | None, str | None]:
    """The time of --at, or why it is not one: ISO 8601 with a zone (2026-03-01T23:59:00+01:00, or Z for UTC)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None, f"--at must be an ISO 8601 time with a zone, e.g. 2026-03-01T23:59:00+01:00, not {text!r}"
    if moment.tzinfo is None or moment.utcoffset() is None:
        return None, f"--at {text} has no time zone: add one, e.g. {text}+00:00 or {text}Z"
    return moment, None


def commit_at(git_dir: Path, moment: datetime) -> Commit | None:
    """The last commit of HEAD's history whose committer date is at or before moment, or None when there is none,
    or no commit at all (git_dir: a snapshot). Raises GitError when git fails on the history."""
    if unborn(git_dir):
        return None
    stamp = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    line = git_output(git_dir, "log", "-1", f"--before={stamp}", "--format=%H %cI", "HEAD", "--")
    if not line.strip():
        return None
    commit, time = line.decode().split()
    return Commit(commit, time)


def unborn(git_dir: Path) -> bool:
    """Does HEAD name a branch that does not exist yet: a repository that never had a commit (git_dir: a snapshot,
    whose HEAD git_snapshot checked is a branch or a commit)? Such a HEAD is not a git failure; a branch that exists
    but points at a missing object is, and git log says so."""
    head = (git_dir / "HEAD").read_bytes().strip()
    if not head.startswith(b"ref: "):
        return False  # a commit's hash: a detached HEAD
    branch = head.removeprefix(b"ref: ")
    return branch not in git_output(git_dir, "for-each-ref", "--format=%(refname)", branch.decode()).split()


def copy_stage_files(git_dir: Path, commit: str, folder: Path) -> None:
    """Copy the stage-named entries of commit into folder, laid out as in the commit.

    Only names the intake looks for (stage modules, notebooks and stage folders, at most MAX_DEPTH deep) are
    copied. A file over MAX_FILE_BYTES, or past MAX_TOTAL_BYTES in all, is written sparse at its size without
    reading it, so the folder reader refuses it with its usual sentence; a link becomes a link to nowhere.
    """
    listing = git_output(git_dir, "ls-tree", "-r", "-t", "-z", "--long", commit, limit=MAX_LISTING_BYTES)
    copied = written = 0
    wanted: list[tuple[Path, str, int]] = []  # files to read out of git, all at once
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, blob, size = meta.split()
        parts = raw_path.decode("utf-8", errors="surrogateescape").split("/")
        if len(parts) > MAX_DEPTH or any(part in ("", ".", "..") for part in parts):
            continue
        name = parts[-1]
        if not ((kind == b"blob" and name in FLAT_NAMES) or (kind == b"tree" and name in STAGE_FOLDERS)):
            continue
        copied += 1
        if copied > MAX_COPIED:
            raise GitError(f"commit {commit[:12]} holds over {MAX_COPIED} files named like stage files")
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == b"tree":
            target.mkdir(exist_ok=True)
        elif mode == b"120000":
            os.symlink("(not followed)", target)
        else:
            length = int(size)
            with open(target, "wb") as handle:
                if length > MAX_FILE_BYTES or written + length > MAX_TOTAL_BYTES:
                    handle.truncate(length)  # refused by its size; never read out of git
                else:
                    wanted.append((target, blob.decode(), length))
                    written += length
    for (target, _blob, _length), raw in zip(wanted, read_blobs(git_dir, wanted, written), strict=True):
        target.write_bytes(raw)


def read_blobs(git_dir: Path, wanted: list[tuple[Path, str, int]], total: int) -> list[bytes]:
    """The bytes of each blob of wanted (target, id, size), in order, read by one `git cat-file --batch`."""
    if not wanted:
        return []
    request = "".join(f"{blob}\n" for _target, blob, _length in wanted).encode()
    output = git_output(git_dir, "cat-file", "--batch", stdin=request, limit=total + 100 * len(wanted))
    blobs, at = [], 0
    for _target, blob, length in wanted:
        end = output.find(b"\n", at)
        header = output[at:end].split()
        if end < 0 or header != [blob.encode(), b"blob", str(length).encode()]:
            raise GitError(f"git cat-file: blob {blob[:12]} could not be read")
        blobs.append(output[end + 1 : end + 1 + length])
        at = end + 1 + length + 1  # the content, then a newline
    return blobs


def read_at(name: str, path: Path, moment: datetime) -> tuple[Submission, Commit | None]:
    """A student's stage sources as their repository held them at moment, and the commit they came from.

    Never raises for anything the repository holds. No commit at or before moment means nothing was handed in by
    then: every stage is not submitted, with that reason. A git failure means the repository could not be read:
    every stage is unreadable, with git's reason. Either way every stage gets zero.
    """
    try:
        with snapshot(path) as git_dir:
            commit = commit_at(git_dir, moment)
            if commit is None:
                return _nothing(name, f"no commit before {moment.isoformat()}", not_submitted=True), None
            with tempfile.TemporaryDirectory(prefix="autograde-at-") as scratch:
                folder = Path(scratch) / path.name
                folder.mkdir()
                copy_stage_files(git_dir, commit.hash, folder)
                return read_student(name, folder), commit
    except (GitError, OSError, ValueError) as error:
        return _nothing(name, f"{path.name} could not be read as a git repository: {error}"), None


def _nothing(name: str, reason: str, not_submitted: bool = False) -> Submission:
    """A submission with no stage to grade, every stage for reason: not submitted, or else unreadable."""
    reason = note(reason)
    problems = {stage.id: reason for stage in STAGES}
    digest = hashlib.sha256(reason.encode()).hexdigest()
    absent = set(problems) if not_submitted else set()
    return Submission(student=name, problems=problems, not_submitted=absent, notes=[reason], files_hash=digest)
