"""A submission zip, read in memory through one descriptor: refused before parsing when its directory is too
big, members inflated only with bounded methods, nothing extracted."""

import os
import stat
import struct
import zipfile
from pathlib import Path

from autograder.grading.intake.layout import is_near, is_relevant
from autograder.grading.intake.text import printable
from autograder.grading.intake.tree import MAX_FILE_BYTES, OPEN_FILE, Tree, Unreadable, kind_of, os_reason

MAX_ZIP_BYTES = 64 << 20  # a zip is seeked in, never read whole, so this can be generous
MAX_ZIP_MEMBERS = 2000
MAX_ZIP_DIRECTORY = 2 << 20  # bytes of a zip's central directory, parsed into objects before anything else

# Zip members are inflated only with methods that can be read with a bound on the output of each step;
# Python's bzip2 and LZMA readers inflate a whole chunk at once, so a small member could take gigabytes.
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}


def zip_directory(handle, size: int) -> tuple[int, int]:
    """(members, bytes) of a zip's central directory, found as zipfile finds it, before zipfile parses any of it.

    zipfile reads the whole directory into objects first, so a small zip claiming millions of members
    (or a zip64 record claiming a huge directory) must be refused before it is opened.
    """
    tail = min(size, 22 + 0xFFFF + 76)  # the end record, its comment, and a zip64 locator and record before it
    handle.seek(size - tail)
    data = handle.read(tail)
    if len(data) >= 22 and data[-22:-18] == b"PK\x05\x06" and data[-2:] == b"\0\0":
        at = len(data) - 22  # no comment: where zipfile looks first
    else:
        at = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 0xFFFF))
    if at < 0 or len(data) < at + 22:
        raise zipfile.BadZipFile("File is not a zip file")
    members, directory = struct.unpack("<HI", data[at + 10 : at + 16])
    if at >= 20 and data[at - 20 : at - 16] == b"PK\x06\x07":  # zip64: zipfile then uses the zip64 record
        if at < 76 or data[at - 76 : at - 72] != b"PK\x06\x06":
            raise zipfile.BadZipFile("its zip64 end record cannot be found")
        members, directory = struct.unpack("<QQ", data[at - 76 + 32 : at - 76 + 48])
    return members, directory


class ZipTree(Tree):
    """A zip, read in memory through a descriptor opened without following links; nothing is extracted."""

    def __init__(self, path: Path, entry: str):
        super().__init__(entry)
        self.handle = None
        self.archive = None
        self.files: dict[tuple[str, ...], zipfile.ZipInfo] = {}
        try:
            fd = os.open(path, OPEN_FILE)
        except OSError as error:
            raise Unreadable(f"{entry} could not be read: {os_reason(error)}") from None
        self.handle = os.fdopen(fd, "rb")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unreadable(f"{entry} is not a folder or a zip file: it is {kind_of(info.st_mode)}")
            if info.st_size > MAX_ZIP_BYTES:
                raise Unreadable(f"{entry} is {info.st_size:,} bytes; a submission zip must be under {MAX_ZIP_BYTES:,}")
            members, directory = zip_directory(self.handle, info.st_size)
            if members > MAX_ZIP_MEMBERS or directory > MAX_ZIP_DIRECTORY:
                raise Unreadable(
                    f"{entry} holds {members:,} files ({directory:,} bytes of file list); "
                    f"a submission has at most {MAX_ZIP_MEMBERS:,}"
                )
            self.handle.seek(0)
            self.archive = zipfile.ZipFile(self.handle)
            infos = self.archive.infolist()
        except Unreadable:
            self.close()
            raise
        except Exception as error:  # noqa: BLE001 -- any failure of zipfile on these bytes means an unreadable zip
            self.close()
            raise Unreadable(f"{entry} could not be read: {error_text(error)}") from None
        if len(infos) > MAX_ZIP_MEMBERS:
            self.close()
            raise Unreadable(f"{entry} holds {len(infos):,} files; a submission has at most {MAX_ZIP_MEMBERS:,}")
        self.folders: dict[tuple[str, ...], dict[str, str]] = {(): {}}
        for member in infos:
            self._add(member)

    def _add(self, member: zipfile.ZipInfo) -> None:
        raw = member.filename
        parts = tuple(part for part in raw.split("/") if part not in ("", "."))
        if not parts:
            return
        if raw.startswith("/") or ".." in parts or "\\" in raw and ".." in raw.split("\\"):
            self.notes.append(f"{self.entry}: ignored {printable(raw, 60)}, whose path leaves the zip's folder")
            return
        mode = member.external_attr >> 16
        if member.is_dir():
            kind = "dir"
        elif stat.S_ISLNK(mode):
            kind = kind_of(mode)
            if is_relevant(parts[-1]) or len(parts) == 1:
                self.notes.append(f"{'/'.join(parts)} in {self.entry} is a symbolic link; links are not followed")
        else:
            kind = "file"
        for depth in range(len(parts) - 1):  # the folders on the way exist, even without entries of their own
            folder = self.folders.setdefault(parts[:depth], {})
            if folder.get(parts[depth]) != "dir":
                folder[parts[depth]] = "dir"
                self.folders.setdefault(parts[: depth + 1], {})
        listing = self.folders.setdefault(parts[:-1], {})
        if listing.get(parts[-1]) == "dir" and kind != "dir":
            return  # a folder of that name already holds files
        listing[parts[-1]] = kind
        if kind == "dir":
            self.folders.setdefault(parts, {})
        elif kind == "file":
            self.files[parts] = member  # a name given twice: the last one, as unzip and zipfile do

    def _list(self, parts: tuple[str, ...]) -> dict[str, str]:
        return self.folders.get(parts, {})

    def holds_stage_files(self, parts: tuple[str, ...]) -> bool:
        return any(map(is_near, self.folders.get(parts, {})))

    def read(self, parts: tuple[str, ...], name: str) -> bytes:
        member = self.files[parts]
        where = f"{name} in {self.entry}"
        if member.flag_bits & 0x1:
            raise Unreadable(f"{where} is encrypted (password-protected); zip it again without a password")
        if member.compress_type not in ZIP_METHODS:
            raise Unreadable(
                f"{where} is compressed with a method the grader does not read (zip method {member.compress_type}); "
                "zip it again with the usual (deflate) compression"
            )
        if member.file_size > MAX_FILE_BYTES:  # said by the zip: not inflated at all
            raise self.too_large(where, member.file_size)
        self.charge(member.file_size)
        try:
            chunks, size = [], 0
            with self.archive.open(member) as handle:
                while size <= MAX_FILE_BYTES:  # deflate inflates at most what is asked: bounded whatever it says
                    chunk = handle.read(min(1 << 16, MAX_FILE_BYTES + 1 - size))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
        except Exception as error:  # noqa: BLE001 -- zipfile and zlib raise many kinds on bad member bytes
            raise Unreadable(f"{where} could not be read: {error_text(error)}") from None
        if size > MAX_FILE_BYTES:
            raise self.too_large(where, size)
        self.charge(max(0, size - member.file_size))
        return b"".join(chunks)

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()
            self.archive = None
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def error_text(error: Exception) -> str:
    """A library's error as a short sentence (its message may quote member names: made printable)."""
    if isinstance(error, RuntimeError) and "encrypted" in str(error):
        return "it is encrypted (password-protected); zip it again without a password"
    if isinstance(error, NotImplementedError):
        return "it uses a zip feature the grader does not read; zip it again with the usual settings"
    message = str(error) or type(error).__name__
    if isinstance(error, zipfile.BadZipFile) and "not a zip file" in message.lower():
        return "it is not a zip file"
    return printable(f"{message} ({type(error).__name__})", 200)
