"""A submission folder, walked through file descriptors without following any symbolic link."""

import os
import stat
from pathlib import Path

from autograder.grading.intake.layout import is_near, is_relevant
from autograder.grading.intake.tree import (
    MAX_FILE_BYTES,
    OPEN_DIR,
    OPEN_FILE,
    Overflow,
    Tree,
    Unreadable,
    kind_of,
    os_reason,
)

MAX_ENTRIES = 1000  # folder entries looked at per student


class FolderTree(Tree):
    """A folder, walked with descriptors: every folder and file is opened without following a link."""

    def __init__(self, path: Path, entry: str):
        super().__init__(entry)
        self.entries = 0
        try:
            self.root = os.open(path, OPEN_DIR)
        except OSError as error:
            raise Unreadable(f"{entry} could not be read: {os_reason(error)}") from None

    def close(self) -> None:
        if self.root is not None:
            os.close(self.root)
            self.root = None

    def _descend(self, parts: tuple[str, ...]) -> int:
        """A new descriptor for the folder at parts, each step opened with O_NOFOLLOW."""
        try:
            fd = os.dup(self.root)
        except OSError as error:
            raise Unreadable(f"{self.entry} could not be read: {os_reason(error)}") from None
        for depth, part in enumerate(parts, start=1):
            try:
                child = os.open(part, OPEN_DIR, dir_fd=fd)
            except OSError as error:
                raise Unreadable(f"{'/'.join(parts[:depth])} could not be read: {os_reason(error)}") from None
            finally:
                os.close(fd)
            fd = child
        return fd

    def holds_stage_files(self, parts: tuple[str, ...]) -> bool:
        # Not charged to the student's entries (a big folder beside the wrapper must not spoil the
        # submission), but a folder over the cap never counts, whatever order its entries come in.
        try:
            return any(map(is_near, self._scan(parts, charged=False)))
        except Unreadable:
            return False

    def _list(self, parts: tuple[str, ...]) -> dict[str, str]:
        found = self._scan(parts, charged=True)
        for name in sorted(found):  # sorted: the order of a folder's entries differs between machines
            if found[name].startswith("a symbolic link") and (is_relevant(name) or not parts):
                self.notes.append(f"{'/'.join((*parts, name))} is a symbolic link; links are not followed")
        return found

    def _scan(self, parts: tuple[str, ...], charged: bool) -> dict[str, str]:
        fd = self._descend(parts)
        found: dict[str, str] = {}
        seen = 0
        try:
            with os.scandir(fd) as scan:
                for item in scan:
                    seen += 1
                    self.entries += 1 if charged else 0
                    if self.entries > MAX_ENTRIES or seen > MAX_ENTRIES:
                        raise Overflow(
                            f"{self.entry} holds over {MAX_ENTRIES:,} files and folders where the grader looks "
                            "for the stage files; hand in only the stage folders or modules"
                        )
                    if item.is_symlink():
                        found[item.name] = kind_of(stat.S_IFLNK)
                    elif item.is_dir(follow_symlinks=False):
                        found[item.name] = "dir"
                    elif item.is_file(follow_symlinks=False):
                        found[item.name] = "file"
                    else:
                        try:
                            found[item.name] = kind_of(item.stat(follow_symlinks=False).st_mode)
                        except OSError:
                            found[item.name] = "not a regular file"
        except OSError as error:
            where = "/".join(parts) or self.entry
            raise Unreadable(f"{where} could not be read: {os_reason(error)}") from None
        finally:
            os.close(fd)
        return found

    def read(self, parts: tuple[str, ...], name: str) -> bytes:
        folder = self._descend(parts[:-1])
        try:
            fd = os.open(parts[-1], OPEN_FILE, dir_fd=folder)
        except OSError as error:
            raise Unreadable(f"{name} could not be read: {os_reason(error)}") from None
        finally:
            os.close(folder)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # changed since it was listed
                raise Unreadable(f"{name} could not be read: it is {kind_of(info.st_mode)}")
            if info.st_size > MAX_FILE_BYTES:  # a sparse file may claim terabytes: never read
                raise self.too_large(name, info.st_size)
            self.charge(info.st_size)
            chunks, size = [], 0
            while size <= MAX_FILE_BYTES:  # at most the cap + 1 bytes, whatever the file says or becomes
                chunk = os.read(fd, min(1 << 16, MAX_FILE_BYTES + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError as error:
            raise Unreadable(f"{name} could not be read: {os_reason(error)}") from None
        finally:
            os.close(fd)
        if size > MAX_FILE_BYTES:
            raise self.too_large(name, info.st_size)
        self.charge(max(0, size - info.st_size))
        return b"".join(chunks)
