"""The class roster: a CSV naming each student's submission folder and who they are in the LMS.

Two kinds of file are read (docs/exports.md says which column goes into which LMS field):

- A roster of your own, a header row with columns in any order: `folder` (the name of the student's folder or
  .zip in SUBMISSIONS, without .zip), then the student's ids, at least one of them per student: `id` (or
  `sis_user_id`: Canvas's SIS User ID, Moodle's ID number), `canvas_id` (Canvas's own numeric user id, its
  gradebook's ID column), `login` (Canvas's SIS Login ID) and `email`; and optionally `name` and `section`.
  Other columns are ignored.
- Canvas's own gradebook export (Grades > Export), as it is: its header Student, ID, SIS User ID, SIS Login ID,
  Section, assignments...; its "Points Possible" row, a row of posting notes and the Test Student are skipped.
  The folder name is taken from one of its columns (SIS Login ID unless told otherwise), and every id is
  Canvas's own, so the export writes them back exactly.

Students in the roster with no submission are listed ("not submitted"); submissions whose folder is not in the
roster are flagged, and are left out of the exports, which use the roster's ids.
"""

import csv
import io
from dataclasses import dataclass
from pathlib import Path

FOLDER = "folder"
# A roster of your own: its column -> the Student field it fills (`id` is the older name of sis_user_id).
COLUMNS = {
    "id": "sis_user_id",
    "sis_user_id": "sis_user_id",
    "canvas_id": "canvas_id",
    "login": "login",
    "email": "email",
    "name": "name",
    "section": "section",
}
ID_FIELDS = ("sis_user_id", "canvas_id", "login", "email")  # each names one student at most
# Canvas's gradebook export: its column -> the Student field; the folder comes from CANVAS_FOLDER by default.
CANVAS_COLUMNS = {
    "Student": "name",
    "ID": "canvas_id",
    "SIS User ID": "sis_user_id",
    "SIS Login ID": "login",
    "Section": "section",
}
CANVAS_FOLDER = "SIS Login ID"
CANVAS_TEST_STUDENT = {"Student, Test", "Test Student"}  # Canvas's Student View user, last in its export
CANVAS_POINTS_ROW = "Points Possible"
MAX_ROSTER_BYTES = 10_000_000


class RosterError(Exception):
    """The roster cannot be used (why, in one line)."""


@dataclass(frozen=True)
class Student:
    folder: str
    sis_user_id: str = ""  # Canvas's SIS User ID, Moodle's ID number (the roster's `id`)
    canvas_id: str = ""  # Canvas's own user id (its gradebook's ID column)
    login: str = ""  # Canvas's SIS Login ID
    email: str = ""
    name: str = ""
    section: str = ""


@dataclass(frozen=True)
class Roster:
    path: str
    students: dict[str, Student]  # folder -> the student, in the roster's order

    def compare(self, folders: list[str] | set[str]) -> tuple[list[str], list[str]]:
        """(roster folders with no submission, submission folders not in the roster), each sorted."""
        folders = set(folders)
        missing = sorted(set(self.students) - folders)
        unknown = sorted(folders - set(self.students))
        return missing, unknown


def load_roster(path: Path, folder_column: str | None = None) -> Roster:
    """The roster in the CSV file at path; RosterError (one line) when it cannot be used.

    folder_column: the column holding each student's submission folder name (default: `folder`, or SIS Login
    ID in Canvas's gradebook export)."""
    rows = _rows(path)
    header = [cell.strip() for cell in rows[0]]
    if header[:2] == ["Student", "ID"]:  # how Canvas's own import recognises its export
        return _canvas_roster(path, header, rows[1:], folder_column or CANVAS_FOLDER)
    folder = (folder_column or FOLDER).strip().lower()
    lowered = [cell.lower() for cell in header]
    if folder not in lowered:
        raise RosterError(f"the roster {path} has no {folder!r} column (its header: {','.join(rows[0])})")
    if "id" in lowered and "sis_user_id" in lowered:
        raise RosterError(f"the roster {path} has both 'id' and 'sis_user_id' (the same field): keep one")
    index = {COLUMNS[column]: at for at, column in enumerate(lowered) if column in COLUMNS}
    if not any(field in index for field in ID_FIELDS):
        raise RosterError(
            f"the roster {path} has no id column: give id (SIS User ID), canvas_id, login or email "
            f"(its header: {','.join(rows[0])})"
        )
    students = list(enumerate(rows[1:], start=2))
    return _students(path, "the roster", students, (folder, lowered.index(folder)), index)


def _rows(path: Path) -> list[list[str]]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise RosterError(f"cannot read the roster {path}: {error.strerror or error}") from error
    if len(raw) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster {path} is larger than {MAX_ROSTER_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")  # spreadsheets (and Canvas) save UTF-8 with a byte-order mark
    except UnicodeDecodeError as error:
        raise RosterError(f"the roster {path} is not UTF-8 text (save it as CSV UTF-8)") from error
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise RosterError(f"the roster {path} is not a CSV file: {error}") from error
    if not rows:
        raise RosterError(f"the roster {path} is empty (it needs a header: folder,id,name,email,section)")
    return rows


def _canvas_roster(path: Path, header: list[str], rows: list[list[str]], folder: str) -> Roster:
    if folder not in header:
        identity = ", ".join(column for column in header if column in CANVAS_COLUMNS)
        raise RosterError(
            f"the Canvas gradebook {path} has no {folder!r} column for the folder names "
            f"(give --folder-column; its identity columns: {identity})"
        )
    index = {field: header.index(column) for column, field in CANVAS_COLUMNS.items() if column in header}
    students = [
        (line, row)
        for line, row in enumerate(rows, start=2)
        if _cell(row, 0) not in (CANVAS_POINTS_ROW, *CANVAS_TEST_STUDENT)
        and (_cell(row, 0) or _cell(row, index["canvas_id"]))  # a row of posting notes names no one
    ]
    return _students(path, "the Canvas gradebook", students, (folder, header.index(folder)), index)


def _cell(row: list[str], at: int) -> str:
    return row[at].strip() if at < len(row) else ""


def _students(path, where, rows, folder_column: tuple[str, int], index: dict[str, int]) -> Roster:
    """The students of rows ((line, cells) pairs): each with a folder and an id, no folder or id twice."""
    column, folder_at = folder_column
    students: dict[str, Student] = {}
    seen: dict[tuple[str, str], str] = {}  # (id field, value) -> the folder that has it
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        values = {field: _cell(row, at) for field, at in index.items()}
        folder = _cell(row, folder_at)
        if not folder:
            raise RosterError(f"{where} {path} line {line}: no folder name in {column!r}: every student needs one")
        if not any(values.get(field) for field in ID_FIELDS):
            raise RosterError(
                f"{where} {path} line {line}: {folder!r} has no id (id, canvas_id, login or email), "
                "so no LMS could tell who it is"
            )
        if folder in students:
            raise RosterError(f"{where} {path} line {line}: the folder {folder!r} is listed twice")
        for field in ID_FIELDS:
            value = values.get(field)
            if value and (field, value) in seen:
                label = {"sis_user_id": "id", "canvas_id": "Canvas id"}.get(field, field)
                raise RosterError(f"{where} {path} line {line}: the {label} {value!r} is also {seen[field, value]!r}'s")
            if value:
                seen[field, value] = folder
        students[folder] = Student(folder, **values)
    return Roster(str(path), students)
