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
import io
import os
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.stages import STAGES, Stage
from autograder.grading.intake.folders import MAX_ENTRIES, FolderTree
from autograder.grading.intake.layout import candidates, locate, near_misses
from autograder.grading.intake.notebook import extract_code
from autograder.grading.intake.skipping import stage_entries, why_skipped
from autograder.grading.intake.text import MAX_NOTE, MAX_NOTES, capped, note, printable
from autograder.grading.intake.tree import MAX_FILE_BYTES, Overflow, Tree, Unreadable, kind_of
from autograder.grading.intake.zips import MAX_ZIP_MEMBERS, ZipTree
from autograder.outputs import name_order

__all__ = [  # what callers use; the caps live where they are enforced
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_NOTE",
    "MAX_NOTES",
    "MAX_ZIP_MEMBERS",
    "ClassError",
    "ClassFolder",
    "Source",
    "Submission",
    "find_class",
    "printable",
    "read_student",
]


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
    # Of those, the stages of which nothing was handed in (not submitted, as against handed in but unreadable).
    not_submitted: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # about the submission as a whole
    files_hash: str = ""
    renamed: dict[str, tuple[str, str]] = field(default_factory=dict)  # stage id -> (name found, name it should have)
    # stage id -> the path inside the submission (wrapper folders included) of the file graded: its submission time
    # is read for exactly that file (admin/submitted.py)
    files: dict[str, str] = field(default_factory=dict)


class ClassError(Exception):
    """The SUBMISSIONS folder itself is unusable (missing, empty, not a folder)."""


def _listed(names: list[str], most: int = 8) -> str:
    shown = ", ".join(printable(name, 40) for name in names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


# --------------------------------------------------------------------------------------------------
# The class
# --------------------------------------------------------------------------------------------------


@dataclass
class ClassFolder:
    """What find_class read: the students, the entries skipped as not students, and notes about both."""

    students: list[tuple[str, Path]]  # (name as shown, the real path of their folder or zip), in name_order
    notes: list[str]  # one line each, for the console and the report
    skipped: list[tuple[str, str]]  # (entry as shown, why it is not a student), in name_order


def find_class(folder: Path, out: Path | None = None) -> ClassFolder:
    """The students of a SUBMISSIONS folder, and what was skipped as not a student, with one note each.

    Names are printable (see printable()); the path is the real one. Entries that are symbolic links are
    listed as students (read_student says they are not followed). Skipped: OUT itself when it lies inside
    SUBMISSIONS, what tools leave (__MACOSX, Thumbs, .git, .ipynb_checkpoints, ...), names starting with "." or
    "_", folders holding an earlier run's output, and files that are not zips. A SUBMISSIONS that is one
    student's own folder (it holds stage folders or modules) is a ClassError that says what to run instead.
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
        entries = sorted(os.listdir(folder), key=lambda entry: (name_order(printable(entry)), os.fsencode(entry)))
    except OSError as error:
        raise ClassError(f"{folder} cannot be read: {error.strerror or error}") from None
    _refuse_one_student(folder, entries)

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
    skipped: list[tuple[str, str]] = []
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
            skipped.append((printable(entry), "it is the output folder (--out), not a submission"))
            continue
        why = why_skipped(str(folder), entry, entry_stat)
        if why:
            skipped.append((printable(entry), why))
            continue
        is_zip = entry.lower().endswith(".zip") and len(entry) > 4
        if stat.S_ISDIR(entry_stat.st_mode):
            name, preference = entry, 0
        elif stat.S_ISREG(entry_stat.st_mode) and is_zip:
            name, preference = entry[:-4], 1
        elif stat.S_ISLNK(entry_stat.st_mode):
            name, preference = (entry[:-4] if is_zip else entry), 2
        else:
            skipped.append((printable(entry), "neither a folder nor a .zip file"))
            continue
        if name in chosen:
            kept, dropped = sorted([chosen[name], (preference, entry, path)])
            notes.append(f"skipped {printable(dropped[1])}: {printable(kept[1])} is graded instead")
            chosen[name] = kept
        else:
            chosen[name] = (preference, entry, path)
    notes += [f"skipped {entry}: {why}" for entry, why in skipped]

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
    students.sort(key=lambda student: name_order(student[0]))
    return ClassFolder(students, capped([note(n) for n in notes]), skipped)


def _refuse_one_student(folder: Path, entries: list[str]) -> None:
    """SUBMISSIONS is one student's folder when it holds stage folders or modules: say what to run instead."""
    stages = stage_entries(entries)
    if not stages:
        return
    whole = folder.resolve()
    raise ClassError(
        f"{folder} is one student's folder, not a class (it holds {_listed(stages, 3)}); grade it with its class: "
        f"autograde grade {whole.parent} --out OUT --student {printable(whole.name)}"
    )


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
    tree: Tree | None = None
    try:
        tree = _open(path, entry)
        root = locate(tree)
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
    submission.notes = capped([note(n) for n in [*tree.notes, *submission.notes]])
    submission.files_hash = digest.hexdigest()
    return submission


def _unreadable(submission: Submission, reason: str) -> Submission:
    reason = note(reason)
    submission.sources = {}
    submission.notes = [reason]
    submission.problems = {stage.id: reason for stage in STAGES}
    submission.not_submitted = set()
    submission.files_hash = hashlib.sha256(reason.encode()).hexdigest()
    return submission


def _read_stage(submission: Submission, tree: Tree, root: tuple[str, ...], stage: Stage, digest) -> None:
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
            submission.files[stage.id] = "/".join(parts)
            digest.update(f"{stage.id}\0{candidate}\0".encode() + raw + b"\0")
            submission.sources[stage.id] = _source(candidate, raw, stage)
        except Overflow:
            raise
        except Unreadable as error:
            submission.problems[stage.id] = note(str(error))
            digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
        except ValueError as error:
            submission.problems[stage.id] = note(str(error))
        return
    if reasons:
        submission.problems[stage.id] = note(f"{stage.filename} could not be read: {reasons[0]}")
        digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
        return
    try:
        found = near_misses(tree, root, stage)
    except Overflow:
        raise
    except Unreadable as error:
        found, submission.problems[stage.id] = [], note(f"{stage.filename} could not be read: {error}")
    if len(found) > 1:
        names = " and ".join(printable(shown, 60) for shown, _should in found[:4])
        more = f" (and {len(found) - 4} more)" if len(found) > 4 else ""
        submission.problems[stage.id] = note(
            f"found {names}{more} for {stage.filename}: hand in one file named {found[0][1]}"
        )
        digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
    elif found:
        _read_near_miss(submission, tree, root, stage, digest, *found[0])
    elif stage.id not in submission.problems:
        submission.problems[stage.id] = f"{stage.filename} was not submitted"
        submission.not_submitted.add(stage.id)


def _read_near_miss(submission: Submission, tree: Tree, root: tuple, stage: Stage, digest, shown: str, should: str):
    """A stage file found under a near-miss name: graded as the name it should have, with a note saying so."""
    try:
        raw = tree.read(root + tuple(shown.split("/")), shown)
        submission.files[stage.id] = "/".join(root + tuple(shown.split("/")))
        digest.update(f"{stage.id}\0{shown}\0".encode() + raw + b"\0")
        source = _source(shown, raw, stage)
    except Overflow:
        raise
    except (Unreadable, ValueError) as error:
        submission.problems[stage.id] = note(str(error))
        digest.update(f"{stage.id}\0!{submission.problems[stage.id]}\0".encode())
        return
    renamed = note(f"found {printable(shown)}, graded it as {printable(should)}: name it {printable(should)} next time")
    source.notes.insert(0, renamed)
    submission.sources[stage.id] = source
    submission.renamed[stage.id] = (printable(shown), printable(should))


def _source(name: str, raw: bytes, stage: Stage) -> Source:
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{name} is over {MAX_FILE_BYTES:,} bytes; a stage module must be under {MAX_FILE_BYTES:,}")
    if name.endswith(".ipynb"):
        from autograder.authoring.notebooks import course_cells  # the course's cells, by grade_id

        try:
            text, notes = extract_code(raw, name.rsplit("/", 1)[-1], course_cells(stage))
        except ValueError:
            raise
        except Exception as error:  # noqa: BLE001 -- a notebook is untrusted JSON: whatever trips the reader
            raise ValueError(f"{name} could not be read as a notebook ({type(error).__name__})") from None
        return Source(name, text, [note(n) for n in notes])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not UTF-8 text (byte {error.start} cannot be read); save it as UTF-8") from None
    if "\0" in text:
        raise ValueError(f"{name} contains NUL bytes; it is not a Python source file")
    _refuse_other_encoding(name, raw)
    return Source(name, text)


def _refuse_other_encoding(name: str, raw: bytes) -> None:
    """Python reads a module in the encoding its first two lines declare: `# coding: utf-7` makes `+AAo-` a line
    break inside what every other reader (the similarity check, a TA's editor) sees as a comment. So a module
    is UTF-8, as the grader reads it, or refused."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:  # a declaration Python does not know: importing the module fails the same way
        return
    if encoding not in ("utf-8", "utf-8-sig"):
        raise ValueError(f"{name} declares the encoding {encoding} in a coding line; save it as UTF-8, without it")


def _open(path: Path, entry: str) -> Tree:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise Unreadable(f"{entry} could not be read: it does not exist") from None
    except OSError as error:
        raise Unreadable(f"{entry} could not be read: {error.strerror or error}") from None
    if stat.S_ISLNK(info.st_mode):
        raise Unreadable(f"{entry} is a symbolic link; links are not followed")
    if stat.S_ISDIR(info.st_mode):
        return FolderTree(path, entry)
    if stat.S_ISREG(info.st_mode):
        return ZipTree(path, entry)
    raise Unreadable(f"{entry} is not a folder or a zip file: it is {kind_of(info.st_mode)}")
