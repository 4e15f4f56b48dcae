"""Git on a student's repository: its data copied into a repository of the grader's own before git reads it.

A repository handed in is the student's input, and git obeys what a repository holds: its `config` (programs to
run for signatures, pagers, filters, fsmonitor, hooks paths, `include` of other files), `info/grafts` and
`refs/replace/` (history rewritten), `objects/info/alternates` and `commondir` (objects and refs of another
folder, e.g. a classmate's), and a `.git` that is a file (`gitdir: ../classmate/.git`). Overriding dangerous keys
one by one with `-c` can never be complete, so git never sees the student's repository at all: `snapshot` checks
that `.git` is a real folder inside the student's, refuses indirections to anywhere else, and copies only the
data git needs to read history (HEAD, refs, packed-refs, shallow and objects, no links, capped in size) into a
fresh temporary folder; git runs there with no configuration but its defaults, no replace objects, no hooks and
no environment of ours. What is read out is data (hashes, dates, file bytes), never an instruction.

Git itself still parses the student's objects, and a few kilobytes of them can ask for gigabytes (a commit whose
zlib stream inflates to 3 GiB made `git log` take 25 s and 3 GiB of memory; a tree that names one subtree 16
times, 8 deep, lists 4 billion paths), so every git command runs under prlimit: its memory, CPU and output
capped by the kernel, not after the fact.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from autograder.grading.sandbox.host import tool

GIT_TIMEOUT = 60  # seconds for one git command on one repository
MAX_REPOSITORY_BYTES = 256 << 20  # a course repository is kilobytes; more is refused before anything is copied
MAX_REPOSITORY_FILES = 50_000
MAX_DEPTH = 32  # folders inside refs/ or objects/ (git's own are two or three deep)
# What of a .git folder is copied: enough to read commits, trees and blobs. Never config, hooks, info/ (grafts,
# attributes, excludes), logs, worktrees, modules, objects/info (alternates), refs/replace.
COPIED_FILES = ("HEAD", "packed-refs", "shallow")
COPIED_FOLDERS = ("refs", "objects")
SKIPPED = {("objects", "info"), ("refs", "replace")}
# Files whose presence means "look elsewhere": refused, since elsewhere is not the student's.
INDIRECTIONS = ("commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates")
GIT_MEMORY = 1 << 30  # RLIMIT_AS of one git command: a course repository needs a few MiB
HEAD_LINE = re.compile(rb"(ref: refs/[A-Za-z0-9._/-]{1,200}|[0-9a-f]{40})\n?")

GIT = (
    "git",
    "--no-pager",
    "--no-replace-objects",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "log.showSignature=false",
)
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ATTR_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "LC_ALL": "C",
}


class GitError(Exception):
    """A repository cannot be read, or a git command failed on it; the message says why, for the student."""


def has_git(folder: Path) -> bool:
    """Does folder hold a `.git` of any kind (folder, file or link)? Whether it is usable is snapshot's to say."""
    return os.path.lexists(folder / ".git")


def git_dir_problem(folder: Path) -> str | None:
    """Why folder's .git is not a repository the grader reads, or None when it is a real folder of its own."""
    git_dir = folder / ".git"
    try:
        info = os.lstat(git_dir)
    except OSError:
        return "it holds no .git folder"
    if stat.S_ISLNK(info.st_mode):
        return ".git is a link; hand in the repository itself"
    if stat.S_ISREG(info.st_mode):
        return ".git is a file that points to another repository (a worktree or submodule); hand in the repository"
    if not stat.S_ISDIR(info.st_mode):
        return ".git is not a folder"
    for name in INDIRECTIONS:
        if os.path.lexists(git_dir / name):
            return f".git/{name} points git at another folder's data; hand in a repository that holds its own"
    return None


@contextlib.contextmanager
def snapshot(folder: Path) -> Iterator[Path]:
    """A temporary git folder of the grader's own holding the history data of folder's .git, for `git_output`."""
    problem = git_dir_problem(folder)
    if problem:
        raise GitError(problem)
    source = folder / ".git"
    with tempfile.TemporaryDirectory(prefix="autograde-git-") as scratch:
        target = Path(scratch) / "repository.git"
        target.mkdir()
        budget = _Budget()
        for name in COPIED_FILES:
            _copy_file(source / name, target / name, budget, missing_ok=name != "HEAD")
        head = (target / "HEAD").read_bytes()
        if not HEAD_LINE.fullmatch(head):
            raise GitError(".git/HEAD is not a branch or a commit")
        for name in COPIED_FOLDERS:
            _copy_tree(source / name, target / name, (name,), budget)
        yield target


def git_output(git_dir: Path, *arguments: str, limit: int = 1 << 20, stdin: bytes | None = None) -> bytes:
    """git's output on a snapshot, at most limit bytes (more is an error); no prompt, hook or configuration.

    The kernel holds git to GIT_MEMORY, GIT_TIMEOUT s of CPU and limit bytes of output (RLIMIT_FSIZE on the
    files its stdout and stderr go to: past it git is stopped by SIGXFSZ, so nothing larger is ever written).
    """
    prlimit, git = tool("prlimit"), tool("git")
    if prlimit is None or git is None:
        raise GitError("git and prlimit (util-linux) are needed to read a repository")
    limits = [f"--as={GIT_MEMORY}", f"--cpu={GIT_TIMEOUT}", f"--fsize={limit + 1}", "--core=0"]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **GIT_ENV}
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        try:
            done = subprocess.run(
                [prlimit, *limits, "--", git, *GIT[1:], f"--git-dir={git_dir}", *arguments],
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                stdout=output,
                stderr=errors,
                env=environment,
                cwd=git_dir,
                timeout=GIT_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise GitError(f"git {arguments[0]} took over {GIT_TIMEOUT} s") from None
        except OSError as error:
            raise GitError(f"git could not be run: {error.strerror or error}") from None
        if output.tell() > limit or done.returncode == -signal.SIGXFSZ:
            raise GitError(f"git {arguments[0]} wrote over {limit:,} bytes")
        if done.returncode != 0:
            errors.seek(max(0, errors.tell() - 4096))  # its last words: the reason comes last
            text = errors.read().decode(errors="replace").strip()
            if done.returncode < 0:
                text = f"stopped by signal {-done.returncode} (past a limit: memory or CPU)"
            elif "out of memory" in text.lower() or "cannot allocate" in text.lower():
                text = f"needed over {GIT_MEMORY >> 20} MiB of memory"
            last = (text.splitlines() or ["failed"])[-1]
            raise GitError(f"git {arguments[0]}: {last[:300]}")
        output.seek(0)
        return output.read()


class _Budget:
    def __init__(self):
        self.bytes = self.files = 0

    def take(self, size: int) -> None:
        self.bytes += size
        self.files += 1
        if self.bytes > MAX_REPOSITORY_BYTES:
            raise GitError(f".git holds over {MAX_REPOSITORY_BYTES >> 20} MiB; a course repository is far smaller")
        if self.files > MAX_REPOSITORY_FILES:
            raise GitError(f".git holds over {MAX_REPOSITORY_FILES:,} files; a course repository has far fewer")


def _copy_file(source: Path, target: Path, budget: _Budget, missing_ok: bool) -> None:
    """Copy one regular file, never through a link, never from a FIFO or device (not even opened: opening a
    device can do something), and no more than its size when it was looked at."""
    try:
        if not stat.S_ISREG(os.lstat(source).st_mode):
            raise GitError(f".git/{source.name} is not a plain file")
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        if missing_ok:
            return
        raise GitError(f".git/{source.name} is missing") from None
    except OSError as error:
        raise GitError(f".git/{source.name} cannot be read ({error.strerror or 'a link'})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise GitError(f".git/{source.name} is not a plain file")
        budget.take(info.st_size)
        left = info.st_size
        with open(target, "wb") as out:
            while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
                out.write(chunk)
                left -= len(chunk)


def _copy_tree(source: Path, target: Path, parts: tuple[str, ...], budget: _Budget) -> None:
    """Copy a folder of plain files and folders; a link anywhere in it refuses the repository."""
    try:
        info = os.lstat(source)
    except FileNotFoundError:
        target.mkdir()
        return
    if not stat.S_ISDIR(info.st_mode):
        raise GitError(f".git/{'/'.join(parts)} is not a folder")
    if len(parts) > MAX_DEPTH:
        raise GitError(f".git/{parts[0]} is nested over {MAX_DEPTH} folders deep")
    target.mkdir()
    with os.scandir(source) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            where = (*parts, entry.name)
            if where in SKIPPED:
                continue
            if entry.is_symlink():
                raise GitError(f".git/{'/'.join(where)} is a link; a repository's data holds none")
            if entry.is_dir(follow_symlinks=False):
                _copy_tree(Path(entry.path), target / entry.name, where, budget)
            else:
                _copy_file(Path(entry.path), target / entry.name, budget, missing_ok=False)
