"""Read a class: SUBMISSIONS/<student>/ folders and <student>.zip files -> each student's stage sources.

Nothing here runs student code. Files are read as bytes with size caps, zips are read in memory
(never extracted, so no path in them can escape), and notebooks are reduced to their code cells.
"""

import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.course import STAGES, Stage

MAX_FILE_BYTES = 1 << 20  # a stage module is a few KB; anything over 1 MiB is not a real answer
MAX_ZIP_MEMBERS = 2000


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


def candidates(stage: Stage) -> list[str]:
    """Where a stage's answer may be, most specific first: nested or flat, module or notebook."""
    names = []
    for folder in (f"{stage.id}/", ""):
        names += [f"{folder}{stage.module}.py", f"{folder}{stage.module}.ipynb", f"{folder}{stage.id}.ipynb"]
    return names


def find_class(folder: Path) -> list[tuple[str, Path]]:
    """The students of a SUBMISSIONS folder: (name, path to their folder or zip), sorted by name."""
    if not folder.exists():
        raise ClassError(f"{folder} does not exist")
    if not folder.is_dir():
        raise ClassError(f"{folder} is not a folder of submissions")
    students: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir() and not entry.is_symlink():
            name = entry.name
        elif entry.is_file() and entry.suffix.lower() == ".zip":
            name = entry.stem
        else:
            continue
        # A folder and a zip with the same name: the folder wins; the zip is most likely its upload.
        students.setdefault(name, entry)
    if not students:
        raise ClassError(f"{folder} holds no submissions (expected one folder or .zip per student)")
    return sorted(students.items())


def read_student(name: str, path: Path) -> Submission:
    """Every stage source of one student, with a clear message for each stage that cannot be graded."""
    submission = Submission(student=name)
    try:
        files = _zip_files(path) if path.is_file() else _folder_files(path)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        message = f"{path.name} could not be read: {error}"
        submission.notes.append(message)
        submission.problems = {stage.id: message for stage in STAGES}
        submission.files_hash = hashlib.sha256(message.encode()).hexdigest()
        return submission
    files = _drop_wrapper_folder(files)
    digest = hashlib.sha256()
    for stage in STAGES:
        found = next((n for n in candidates(stage) if n in files), None)
        if found is None:
            submission.problems[stage.id] = f"{stage.filename} was not submitted"
            continue
        raw = files[found]
        digest.update(f"{stage.id}\0{found}\0".encode() + raw + b"\0")
        try:
            submission.sources[stage.id] = _source(found, raw)
        except ValueError as error:
            submission.problems[stage.id] = str(error)
    submission.files_hash = digest.hexdigest()
    return submission


def _source(name: str, raw: bytes) -> Source:
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{name} is {len(raw):,} bytes; a stage module must be under {MAX_FILE_BYTES:,}")
    if name.endswith(".ipynb"):
        from autograder.notebooks import extract_code

        text, notes = extract_code(raw, PurePosixPath(name).name)
        return Source(name, text, notes)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") from None
    if "\0" in text:
        raise ValueError(f"{name} contains NUL bytes; it is not a Python source file")
    return Source(name, text)


def _folder_files(folder: Path) -> dict[str, bytes]:
    """Files a stage could be in (two levels deep at most), keyed by their path inside the folder."""
    files = {}
    for path in [*folder.glob("*"), *folder.glob("*/*"), *folder.glob("*/*/*")]:
        if path.is_file() and not path.is_symlink() and path.suffix in (".py", ".ipynb"):
            if path.stat().st_size > MAX_FILE_BYTES:
                files[path.relative_to(folder).as_posix()] = b"\0" * (MAX_FILE_BYTES + 1)
            else:
                files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _zip_files(path: Path) -> dict[str, bytes]:
    files = {}
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise ValueError(f"it holds {len(members):,} files; a submission has at most {MAX_ZIP_MEMBERS:,}")
        for member in members:
            name = PurePosixPath(member.filename)
            if member.is_dir() or "__MACOSX" in name.parts or name.suffix not in (".py", ".ipynb"):
                continue
            if member.file_size > MAX_FILE_BYTES:
                files[name.as_posix()] = b"\0" * (MAX_FILE_BYTES + 1)  # reported as too large, never inflated
                continue
            with archive.open(member) as handle:
                files[name.as_posix()] = handle.read(MAX_FILE_BYTES + 1)
    return files


def _drop_wrapper_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """A zip or folder that wraps everything in one folder (alice/rules.py) reads as if it did not."""
    while files:
        tops = {name.split("/", 1)[0] for name in files}
        if len(tops) != 1 or any("/" not in name for name in files):
            return files
        top = tops.pop()
        if any(top == stage.id for stage in STAGES):
            return files
        files = {name.split("/", 1)[1]: raw for name, raw in files.items()}
    return files
