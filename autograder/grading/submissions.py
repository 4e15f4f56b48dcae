"""Read a class: SUBMISSIONS/<student>/ folders and <student>.zip files -> each student's stage sources.

Nothing here runs student code, and nothing a submission holds can make it raise, hang or grow: folders
are walked through file descriptors without following any symbolic link (so nothing outside the
submission's own folder is ever read), only the files at the stage paths are opened (regular files only,
never a named pipe or a device), and every size is capped where it enters: entries looked at, folder
depth, each file's size, the bytes read per student, a zip's size, its members and the bytes inflated.
Zips are read in memory, never extracted, and notebooks are reduced to their code cells. Every problem
becomes a clear sentence on the stage it spoils (or a note), never an exception.
"""

import hashlib
import os
import stat
import struct
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.stages import STAGES, Stage

MAX_FILE_BYTES = 1 << 20  # a stage module is a few KB; anything over 1 MiB is not a real answer
MAX_TOTAL_BYTES = 8 << 20  # read per student, all stages together
MAX_ENTRIES = 1000  # folder entries looked at per student
MAX_WRAPPERS = 3  # folders around the stage files that are looked through (alice/alice/01_rules/...)
MAX_WRAPPER_CHOICES = 10  # when a level holds several folders, how many are looked into for the stage files
MAX_ZIP_BYTES = 64 << 20  # a zip is seeked in, never read whole, so this can be generous
MAX_ZIP_MEMBERS = 2000
MAX_ZIP_DIRECTORY = 2 << 20  # bytes of a zip's central directory, parsed into objects before anything else
MAX_NAME = 100  # characters of a student's name as shown and stored
MAX_NOTE = 300  # characters of one note
MAX_NOTES = 30  # notes per submission (and per class); the rest are counted

# Zip members are inflated only with methods that can be read with a bound on the output of each step;
# Python's bzip2 and LZMA readers inflate a whole chunk at once, so a small member could take gigabytes.
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# What run outputs are named in OUT; a student's folder there must never be one of them.
OUTPUT_NAMES = {"grades.csv", "report.html", "gradebook.db", "gradebook.db-wal", "gradebook.db-shm"}
OUTPUT_NAMES |= {"gradebook.db-journal"}


@dataclass
class Source:
    name: str  # the file it came from, as the student named it, e.g. "01_rules/rules.py"
    text: str
    notes: list[str] = field(default_factory=list)  # things the student should know (dropped magics, ...)


@dataclass
class Submission:
    student: str
    sources: dict[str, Source] = field(default_factory=dict)  # stage id -> its source
    problems: dict[str, str] = field(default_factory=dict)  # stage id -> why it cannot be graded
    notes: list[str] = field(default_factory=list)  # about the submission as a whole
    files_hash: str = ""


class ClassError(Exception):
    """The SUBMISSIONS folder itself is unusable (missing, empty, not a folder)."""


class Unreadable(Exception):
    """One file or folder of a submission cannot be read; the message says why, for the student."""


class Overflow(Unreadable):
    """The submission is over one of the caps where the grader looks; none of it is read."""


def candidates(stage: Stage) -> list[str]:
    """Where a stage's answer may be, most specific first: nested or flat, module or notebook."""
    names = []
    for folder in (f"{stage.id}/", ""):
        names += [f"{folder}{stage.module}.py", f"{folder}{stage.module}.ipynb", f"{folder}{stage.id}.ipynb"]
    return names


FLAT_NAMES = {name for stage in STAGES for name in candidates(stage) if "/" not in name}
STAGE_FOLDERS = {stage.id for stage in STAGES}


# --------------------------------------------------------------------------------------------------
# Names: printable, bounded text
# --------------------------------------------------------------------------------------------------


def printable(text: str, limit: int = MAX_NAME) -> str:
    """text safe to show and store: no control or format characters, no lone surrogates, at most limit long.

    A byte that was not UTF-8 (os.listdir gives it as a surrogate escape) and every control character
    become a visible backslash escape (\\xe9, \\x1b, \\u202e), so the name still says what it was.
    Text that is already printable comes back unchanged.
    """
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte code - 0xDC00 was not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
        if len(out) > limit:
            break
    shown = "".join(out)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _note(text: str) -> str:
    return printable(text, MAX_NOTE)


def _capped(notes: list[str]) -> list[str]:
    """Distinct notes, in order, at most MAX_NOTES of them."""
    unique = list(dict.fromkeys(notes))
    if len(unique) <= MAX_NOTES:
        return unique
    return unique[: MAX_NOTES - 1] + [f"... and {len(unique) - MAX_NOTES + 1:,} more notes like these"]


def _count(entries: list) -> str:
    return "1 entry" if len(entries) == 1 else f"{len(entries):,} entries"


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(printable(name, 40) for name in names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


def output_folder(student: str) -> str:
    """The folder under OUT for a student's results.json and feedback.html.

    The student's name itself, unless it would collide with an output of the run (grades.csv,
    report.html, the gradebook and its -wal/-shm/-journal files, compared without case for
    filesystems that ignore it) or start with a dot; then "_" + the name. find_class never lists a
    name that starts with "_", so the result is distinct from every other student's folder.
    """
    if student.startswith(".") or student.casefold() in OUTPUT_NAMES or not student:
        return "_" + student
    return student


# --------------------------------------------------------------------------------------------------
# The class
# --------------------------------------------------------------------------------------------------


def find_class(folder: Path, out: Path | None = None) -> tuple[list[tuple[str, Path]], list[str]]:
    """The students of a SUBMISSIONS folder and notes about what was skipped.

    Returns ([(name, path to their folder or zip)] sorted by name, notes). Names are printable (see
    printable()); the path is the real one. Entries that are symbolic links are listed as students
    (read_student says they are not followed); OUT itself when it lies inside SUBMISSIONS, names
    starting with "." or "_" (.git, __MACOSX, .DS_Store) and files that are not zips are skipped.
    """
    try:
        info = os.stat(folder)  # the instructor's own path: a link to it is fine
    except FileNotFoundError:
        raise ClassError(f"{folder} does not exist") from None
    except OSError as error:
        raise ClassError(f"{folder} cannot be read: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ClassError(f"{folder} is not a folder of submissions")
    try:
        entries = sorted(os.listdir(folder), key=os.fsencode)  # byte order: the same on every machine
    except OSError as error:
        raise ClassError(f"{folder} cannot be read: {error.strerror or error}") from None

    out_real, out_id = None, None
    if out is not None:
        out_real = os.path.realpath(out)
        try:
            out_stat = os.stat(out)
            out_id = (out_stat.st_dev, out_stat.st_ino)
        except OSError:
            pass
    folder_real = os.path.realpath(folder)

    notes: list[str] = []
    hidden: list[str] = []
    others: list[str] = []
    chosen: dict[str, tuple[int, str, Path]] = {}  # real name -> (preference, entry, path)
    for entry in entries:
        path = folder / entry
        try:
            entry_stat = os.lstat(path)
        except OSError:
            continue  # gone since it was listed
        if out_real is not None and (
            os.path.join(folder_real, entry) == out_real
            or (out_id == (entry_stat.st_dev, entry_stat.st_ino) and not stat.S_ISLNK(entry_stat.st_mode))
        ):
            notes.append(f"skipped {printable(entry)}: it is the output folder (--out), not a submission")
            continue
        if entry.startswith((".", "_")):
            hidden.append(entry)
            continue
        is_zip = entry.lower().endswith(".zip") and len(entry) > 4
        if stat.S_ISDIR(entry_stat.st_mode):
            name, preference = entry, 0
        elif stat.S_ISREG(entry_stat.st_mode) and is_zip:
            name, preference = entry[:-4], 1
        elif stat.S_ISLNK(entry_stat.st_mode):
            name, preference = (entry[:-4] if is_zip else entry), 2
        else:
            others.append(entry)
            continue
        if name in chosen:
            kept, dropped = sorted([chosen[name], (preference, entry, path)])
            notes.append(f"skipped {printable(dropped[1])}: {printable(kept[1])} is graded instead")
            chosen[name] = kept
        else:
            chosen[name] = (preference, entry, path)
    if hidden:
        whose = "whose name starts" if len(hidden) == 1 else "whose names start"
        notes.append(f"skipped {_count(hidden)} {whose} with '.' or '_': {_listed(hidden)}")
    if others:
        notes.append(f"skipped {_count(others)}, neither a folder nor a .zip file: {_listed(others)}")

    students: list[tuple[str, Path]] = []
    taken: set[str] = set()
    for name, (_preference, entry, path) in sorted(chosen.items(), key=lambda item: os.fsencode(item[0])):
        base = shown = printable(name)
        number = 2
        while shown in taken:
            shown = f"{base}~{number}"
            number += 1
        if base != name:
            notes.append(
                f"{shown}: the name is not plain UTF-8 text (or holds control characters); "
                "it is shown with backslash escapes"
            )
        if shown != base:
            notes.append(f"{printable(entry)} is graded as {shown}: another entry is already shown as {base}")
        taken.add(shown)
        students.append((shown, path))
    if not students:
        raise ClassError(f"{folder} holds no submissions (expected one folder or .zip per student)")
    return sorted(students, key=lambda student: student[0]), _capped([_note(n) for n in notes])


# --------------------------------------------------------------------------------------------------
# One student
# --------------------------------------------------------------------------------------------------


def read_student(name: str, path: Path) -> Submission:
    """Every stage source of one student, with a clear message for each stage that cannot be graded.

    Never raises for anything the submission holds. files_hash depends only on the files read (their
    paths inside the submission and their bytes) and on the reasons files could not be read.
    """
    submission = Submission(student=printable(name))
    entry = printable(path.name)
    tree: _Tree | None = None
    try:
        tree = _open(path, entry)
        root = _locate(tree)
    except Unreadable as error:
        if tree is not None:
            tree.close()
        return _unreadable(submission, str(error))
    digest = hashlib.sha256()
    try:
        for stage in STAGES:
            _read_stage(submission, tree, root, stage, digest)
    except Overflow as error:  # a cap that holds for the whole submission
        tree.close()
        return _unreadable(submission, str(error))
    tree.close()
    submission.notes = _capped([_note(n) for n in [*tree.notes, *submission.notes]])
    submission.files_hash = digest.hexdigest()
    return submission


def _unreadable(submission: Submission, reason: str) -> Submission:
    reason = _note(reason)
    submission.sources = {}
    submission.notes = [reason]
    submission.problems = {stage.id: reason for stage in STAGES}
    submission.files_hash = hashlib.sha256(reason.encode()).hexdigest()
    return submission


def _read_stage(submission: Submission, tree: "_Tree", root: tuple[str, ...], stage: Stage, digest) -> None:
    reasons: list[str] = []
    for candidate in candidates(stage):
        parts = root + tuple(candidate.split("/"))
        try:
            kind = tree.kind(parts)
        except Overflow:
            raise
        except Unreadable as error:
            reasons.append(str(error))
            continue
        if kind is None:
            continue
        if kind != "file":
            reasons.append(f"{candidate} is {'a folder, not a file' if kind == 'dir' else kind}")
            continue
        try:
            raw = tree.read(parts, candidate)
            digest.update(f"{stage.id}\0{candidate}\0".encode() + raw + b"\0")
            submission.sources[stage.id] = _source(candidate, raw)
        except Overflow:
            raise
        except Unreadable as error:
            submission.problems[stage.id] = _note(str(error))
            digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
        except ValueError as error:
            submission.problems[stage.id] = _note(str(error))
        return
    if reasons:
        submission.problems[stage.id] = _note(f"{stage.filename} could not be read: {reasons[0]}")
        digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
    else:
        submission.problems[stage.id] = f"{stage.filename} was not submitted"


def _source(name: str, raw: bytes) -> Source:
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{name} is over {MAX_FILE_BYTES:,} bytes; a stage module must be under {MAX_FILE_BYTES:,}")
    if name.endswith(".ipynb"):
        from autograder.grading.notebook_code import extract_code

        try:
            text, notes = extract_code(raw, name.rsplit("/", 1)[-1])
        except ValueError:
            raise
        except Exception as error:  # noqa: BLE001 -- a notebook is untrusted JSON: whatever trips the reader
            raise ValueError(f"{name} could not be read as a notebook ({type(error).__name__})") from None
        return Source(name, text, [_note(n) for n in notes])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") from None
    if "\0" in text:
        raise ValueError(f"{name} contains NUL bytes; it is not a Python source file")
    return Source(name, text)


def _is_relevant(name: str) -> bool:
    """Does an entry's name say the stage files are at this level (whatever the entry turns out to be)?"""
    return name in FLAT_NAMES or name in STAGE_FOLDERS


def _locate(tree: "_Tree") -> tuple[str, ...]:
    """The folder inside the submission that holds the stage files, looking through wrapper folders.

    The stage files are where a stage module, notebook or folder is named. A level without one, holding
    a single folder (names starting with "." or "_", like __MACOSX, do not count) or several of which
    exactly one has stage files, wraps them (alice.zip holding alice/rules.py): look inside.
    """
    root: tuple[str, ...] = ()
    for _ in range(MAX_WRAPPERS):
        listing = tree.listing(root)
        if any(_is_relevant(name) for name in listing):
            return root
        folders = sorted(n for n, kind in listing.items() if kind == "dir" and not n.startswith((".", "_")))
        if len(folders) > 1:
            folders = [f for f in folders[:MAX_WRAPPER_CHOICES] if tree.holds_stage_files(root + (f,))]
        if len(folders) != 1:
            return root
        root += (folders[0],)
    return root


class _Tree:
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


def _kind_of(mode: int) -> str:
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


def _open(path: Path, entry: str) -> _Tree:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Unreadable(f"{entry} could not be read: it does not exist") from None
    except OSError as error:
        raise Unreadable(f"{entry} could not be read: {error.strerror or error}") from None
    if stat.S_ISLNK(info.st_mode):
        raise Unreadable(f"{entry} is a symbolic link; links are not followed")
    if stat.S_ISDIR(info.st_mode):
        return _FolderTree(path, entry)
    if stat.S_ISREG(info.st_mode):
        return _ZipTree(path, entry)
    raise Unreadable(f"{entry} is not a folder or a zip file: it is {_kind_of(info.st_mode)}")


def _os_reason(error: OSError) -> str:
    return error.strerror or type(error).__name__


class _FolderTree(_Tree):
    """A folder, walked with descriptors: every folder and file is opened without following a link."""

    def __init__(self, path: Path, entry: str):
        super().__init__(entry)
        self.entries = 0
        try:
            self.root = os.open(path, OPEN_DIR)
        except OSError as error:
            raise Unreadable(f"{entry} could not be read: {_os_reason(error)}") from None

    def close(self) -> None:
        if self.root is not None:
            os.close(self.root)
            self.root = None

    def _descend(self, parts: tuple[str, ...]) -> int:
        """A new descriptor for the folder at parts, each step opened with O_NOFOLLOW."""
        try:
            fd = os.dup(self.root)
        except OSError as error:
            raise Unreadable(f"{self.entry} could not be read: {_os_reason(error)}") from None
        for depth, part in enumerate(parts, start=1):
            try:
                child = os.open(part, OPEN_DIR, dir_fd=fd)
            except OSError as error:
                raise Unreadable(f"{'/'.join(parts[:depth])} could not be read: {_os_reason(error)}") from None
            finally:
                os.close(fd)
            fd = child
        return fd

    def holds_stage_files(self, parts: tuple[str, ...]) -> bool:
        # Not charged to the student's entries (a big folder beside the wrapper must not spoil the
        # submission), but a folder over the cap never counts, whatever order its entries come in.
        try:
            return any(map(_is_relevant, self._scan(parts, charged=False)))
        except Unreadable:
            return False

    def _list(self, parts: tuple[str, ...]) -> dict[str, str]:
        found = self._scan(parts, charged=True)
        for name in sorted(found):  # sorted: the order of a folder's entries differs between machines
            if found[name].startswith("a symbolic link") and (_is_relevant(name) or not parts):
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
                        found[item.name] = _kind_of(stat.S_IFLNK)
                    elif item.is_dir(follow_symlinks=False):
                        found[item.name] = "dir"
                    elif item.is_file(follow_symlinks=False):
                        found[item.name] = "file"
                    else:
                        try:
                            found[item.name] = _kind_of(item.stat(follow_symlinks=False).st_mode)
                        except OSError:
                            found[item.name] = "not a regular file"
        except OSError as error:
            where = "/".join(parts) or self.entry
            raise Unreadable(f"{where} could not be read: {_os_reason(error)}") from None
        finally:
            os.close(fd)
        return found

    def read(self, parts: tuple[str, ...], name: str) -> bytes:
        folder = self._descend(parts[:-1])
        try:
            fd = os.open(parts[-1], OPEN_FILE, dir_fd=folder)
        except OSError as error:
            raise Unreadable(f"{name} could not be read: {_os_reason(error)}") from None
        finally:
            os.close(folder)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # changed since it was listed
                raise Unreadable(f"{name} could not be read: it is {_kind_of(info.st_mode)}")
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
            raise Unreadable(f"{name} could not be read: {_os_reason(error)}") from None
        finally:
            os.close(fd)
        if size > MAX_FILE_BYTES:
            raise self.too_large(name, info.st_size)
        self.charge(max(0, size - info.st_size))
        return b"".join(chunks)


def _zip_directory(handle, size: int) -> tuple[int, int]:
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


class _ZipTree(_Tree):
    """A zip, read in memory through a descriptor opened without following links; nothing is extracted."""

    def __init__(self, path: Path, entry: str):
        super().__init__(entry)
        self.handle = None
        self.archive = None
        self.files: dict[tuple[str, ...], zipfile.ZipInfo] = {}
        try:
            fd = os.open(path, OPEN_FILE)
        except OSError as error:
            raise Unreadable(f"{entry} could not be read: {_os_reason(error)}") from None
        self.handle = os.fdopen(fd, "rb")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unreadable(f"{entry} is not a folder or a zip file: it is {_kind_of(info.st_mode)}")
            if info.st_size > MAX_ZIP_BYTES:
                raise Unreadable(f"{entry} is {info.st_size:,} bytes; a submission zip must be under {MAX_ZIP_BYTES:,}")
            members, directory = _zip_directory(self.handle, info.st_size)
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
            raise Unreadable(f"{entry} could not be read: {_error_text(error)}") from None
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
            kind = _kind_of(mode)
            if _is_relevant(parts[-1]) or len(parts) == 1:
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
        return any(map(_is_relevant, self.folders.get(parts, {})))

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
            raise Unreadable(f"{where} could not be read: {_error_text(error)}") from None
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


def _error_text(error: Exception) -> str:
    """A library's error as a short sentence (its message may quote member names: made printable)."""
    if isinstance(error, RuntimeError) and "encrypted" in str(error):
        return "it is encrypted (password-protected); zip it again without a password"
    if isinstance(error, NotImplementedError):
        return "it uses a zip feature the grader does not read; zip it again with the usual settings"
    message = str(error) or type(error).__name__
    if isinstance(error, zipfile.BadZipFile) and "not a zip file" in message.lower():
        return "it is not a zip file"
    return printable(f"{message} ({type(error).__name__})", 200)
