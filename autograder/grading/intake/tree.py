"""A submission's files looked at by path parts, whether a folder on disk or a zip in memory: kinds, the caps on
the bytes read, and the errors that become a sentence for the student."""

import os
import stat

MAX_FILE_BYTES = 1 << 20  # a stage module is a few KB; anything over 1 MiB is not a real answer
MAX_TOTAL_BYTES = 8 << 20  # read per student, all stages together
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Unreadable(Exception):
    """One file or folder of a submission cannot be read; the message says why, for the student."""


class Overflow(Unreadable):
    """The submission is over one of the caps where the grader looks; none of it is read."""


class Tree:
    """A submission's files, looked at by path parts: a folder on disk or a zip in memory."""

    def __init__(self, entry: str):
        self.entry = entry  # the submission's own name (alice, alice.zip), for messages
        self.notes: list[str] = []
        self.bytes_read = 0
        self._listings: dict[tuple[str, ...], dict[str, str]] = {}

    def listing(self, parts: tuple[str, ...]) -> dict[str, str]:
        """name -> kind ("dir", "file" or a phrase such as "a symbolic link") of a folder's entries."""
        if parts not in self._listings:
            self._listings[parts] = self._list(parts)
        return self._listings[parts]

    def kind(self, parts: tuple[str, ...]) -> str | None:
        """What the entry at parts is, or None when nothing is there; a link on the way is not followed."""
        for depth in range(1, len(parts)):
            kind = self.listing(parts[: depth - 1]).get(parts[depth - 1])
            if kind is None:
                return None
            if kind != "dir":
                raise Unreadable(f"{'/'.join(parts[:depth])} is {'a file, not a folder' if kind == 'file' else kind}")
        return self.listing(parts[:-1]).get(parts[-1])

    def charge(self, size: int) -> None:
        if self.bytes_read + size > MAX_TOTAL_BYTES:
            raise Overflow(
                f"{self.entry}: its stage files come to over {MAX_TOTAL_BYTES:,} bytes together; "
                f"each stage module must be under {MAX_FILE_BYTES:,}"
            )
        self.bytes_read += size

    def too_large(self, name: str, size: int) -> Unreadable:
        return Unreadable(f"{name} is {size:,} bytes; a stage module must be under {MAX_FILE_BYTES:,}")

    def holds_stage_files(self, parts: tuple[str, ...]) -> bool:
        """A look into a folder beside others, to find the one wrapping the stage files; never fails."""
        raise NotImplementedError

    def _list(self, parts: tuple[str, ...]) -> dict[str, str]:
        raise NotImplementedError

    def read(self, parts: tuple[str, ...], name: str) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        pass


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "a symbolic link (links are not followed)"
    if stat.S_ISFIFO(mode):
        return "a named pipe, not a file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file"
    return "not a regular file"


def os_reason(error: OSError) -> str:
    return error.strerror or type(error).__name__
