"""The class roster: a CSV naming each student's submission folder and who they are in the LMS.

Columns (a header row, in any order): `folder` (the name of the student's folder or .zip in SUBMISSIONS,
without .zip), `id` (the student's id in the LMS: Canvas's SIS User ID, Moodle's ID number), and optionally
`name`, `email`, `section` and `login` (Canvas's SIS Login ID; the email when absent). Other columns are
ignored, so an LMS's own export with a `folder` column added will do.

Students in the roster with no submission are listed (and get rows of zeros in the exports); submissions
whose folder is not in the roster are flagged, and are left out of the exports, which use the roster's ids.
"""

import csv
import io
from dataclasses import dataclass
from pathlib import Path

REQUIRED = ("folder", "id")
OPTIONAL = ("name", "email", "section", "login")
MAX_ROSTER_BYTES = 10_000_000


class RosterError(Exception):
    """The roster cannot be used (why, in one line)."""


@dataclass(frozen=True)
class Student:
    folder: str
    id: str
    name: str = ""
    email: str = ""
    section: str = ""
    login: str = ""


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


def load_roster(path: Path) -> Roster:
    """The roster in the CSV file at path; RosterError (one line) when it cannot be used."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise RosterError(f"cannot read the roster {path}: {error.strerror or error}") from error
    if len(raw) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster {path} is larger than {MAX_ROSTER_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8-sig")  # spreadsheets save UTF-8 with a byte-order mark
    except UnicodeDecodeError as error:
        raise RosterError(f"the roster {path} is not UTF-8 text (save it as CSV UTF-8)") from error
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise RosterError(f"the roster {path} is not a CSV file: {error}") from error
    if not rows:
        raise RosterError(f"the roster {path} is empty (it needs a header: folder,id,name,email,section)")
    header = [cell.strip().lower() for cell in rows[0]]
    for column in REQUIRED:
        if column not in header:
            raise RosterError(f"the roster {path} has no {column!r} column (its header: {','.join(rows[0])})")
    index = {column: header.index(column) for column in (*REQUIRED, *OPTIONAL) if column in header}
    students: dict[str, Student] = {}
    ids: dict[str, str] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            row = row + [""] * (len(header) - len(row))
        values = {column: row[at].strip() for column, at in index.items()}
        folder, student_id = values["folder"], values["id"]
        if not folder or not student_id:
            raise RosterError(f"the roster {path} line {line}: every student needs a folder and an id")
        if folder in students:
            raise RosterError(f"the roster {path} line {line}: the folder {folder!r} is listed twice")
        if student_id in ids:
            raise RosterError(f"the roster {path} line {line}: the id {student_id!r} is also {ids[student_id]!r}'s")
        ids[student_id] = folder
        students[folder] = Student(**values)
    return Roster(str(path), students)
