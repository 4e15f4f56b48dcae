"""`autograde export OUT --format canvas|moodle|csv --roster ROSTER FILE`: the grades as an LMS imports them.

The grades are those of the gradebook's latest finished run (OUT/gradebook.db unless --gradebook), raw or
after the course policy the run was graded with (--scores), one total or one column per stage (--columns).
Rows follow the roster and carry its ids; a roster student with no graded submission gets zeros; a graded
folder the roster does not name is left out and said on stderr.

The formats, as their documentation describes them:
- Canvas, Gradebook CSV import (Instructor Guide, "How do I import grades in the Gradebook?",
  https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807, and
  https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades):
  the identity columns Student ("Last, First"), ID (Canvas's own, may stay empty), SIS User ID, SIS Login ID and
  Section, then one column per assignment; a header naming no existing assignment creates one ("Name (1234)"
  names an existing one by its Canvas id); a second row "Points Possible" gives each assignment's points.
- Moodle, Grade import from CSV (https://docs.moodle.org/en/Grade_import): any header row; on import the
  instructor maps one column to a user field ("Map from" ID number to "useridnumber", or Email address to
  "useremail") and each grade column to a grade item.
- csv: folder, id, name, email, section, then the scores: for spreadsheets and other tools.
"""

import argparse
import csv
import io
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.admin.roster import Roster, RosterError, Student, load_roster
from autograder.course.stages import STAGES, TOTAL_POINTS
from autograder.grading.record import SubmissionResult
from autograder.outputs import clean_line, write_atomically
from autograder.outputs.gradebook import Gradebook, GradebookError
from autograder.outputs.gradesheet import inert, points

FORMATS = ("canvas", "moodle", "csv")
DEFAULT_ASSIGNMENT = "Tic-tac-toe minimax"
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_ROW = "Points Possible"
MOODLE_IDENTITY = ["ID number", "Email address", "Full name"]
CSV_IDENTITY = ["folder", "id", "name", "email", "section"]


class ExportError(Exception):
    """Nothing could be exported (why, in one line)."""


@dataclass(frozen=True)
class Column:
    header: str
    possible: int
    stage: str | None  # None: the total


def columns(assignment: str, per_stage: bool, plain_names: bool) -> list[Column]:
    """The score columns: one total, or one per stage (named by stage id in csv, after the assignment else)."""
    if not per_stage:
        return [Column("total" if plain_names else assignment, TOTAL_POINTS, None)]
    return [Column(stage.id if plain_names else f"{assignment} {stage.id}", stage.points, stage.id) for stage in STAGES]


def score(result: SubmissionResult | None, column: Column, final: bool) -> float:
    """A student's points in a column: raw, or after the course policy (the raw points when there was none)."""
    if result is None:
        return 0
    if final and result.final is not None:
        if column.stage is None:
            return result.final.points
        return result.final.stages[column.stage].points
    if column.stage is None:
        return result.total
    return result.stages[column.stage].score


def export_rows(
    format: str, roster: Roster, results: dict[str, SubmissionResult], cols: list[Column], final: bool
) -> list[list[str]]:
    """The file's rows, header first, one per roster student in the roster's order."""

    def identity(student: Student) -> list[str]:
        if format == "canvas":
            return [student.name, "", student.id, student.login or student.email, student.section]
        if format == "moodle":
            return [student.id, student.email, student.name]
        return [student.folder, student.id, student.name, student.email, student.section]

    header = {"canvas": CANVAS_IDENTITY, "moodle": MOODLE_IDENTITY, "csv": CSV_IDENTITY}[format]
    rows = [[*header, *(column.header for column in cols)]]
    if format == "canvas":
        rows.append([CANVAS_POINTS_ROW, *[""] * (len(header) - 1), *(str(column.possible) for column in cols)])
    for folder, student in roster.students.items():
        result = results.get(folder)
        cells = [points(score(result, column, final)) for column in cols]
        rows.append([*(inert(clean_line(cell)) for cell in identity(student)), *cells])
    return rows


def csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def latest_results(gradebook: Path) -> dict[str, SubmissionResult]:
    if not gradebook.is_file():
        raise ExportError(f"no gradebook at {gradebook}: run `autograde grade` first (or give --gradebook)")
    try:
        book = Gradebook(gradebook)
    except (GradebookError, sqlite3.Error, OSError) as error:
        raise ExportError(str(error)) from error
    try:
        run = book.last_run_id()
        if run is None:
            raise ExportError(f"the gradebook {gradebook} holds no finished run of `autograde grade`")
        return book.run_results(run)
    finally:
        book.close()


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="autograde export",
        description="Write the latest graded run's scores as a gradebook import file for an LMS.",
        epilog="Exit status: 0 when the file was written; 2 for a wrong option, roster or gradebook (nothing written).",
    )
    parser.add_argument("out", type=Path, help="the OUT folder of `autograde grade`")
    parser.add_argument("file", type=Path, help="the import file to write")
    parser.add_argument("--format", required=True, choices=FORMATS, help="canvas, moodle or csv")
    parser.add_argument("--roster", required=True, type=Path, help="the class roster (CSV: folder,id,name,...)")
    parser.add_argument("--gradebook", type=Path, help="the gradebook to read (default: OUT/gradebook.db)")
    parser.add_argument(
        "--columns", choices=("total", "stages"), default="total", help="one total (default) or one per stage"
    )
    parser.add_argument(
        "--scores",
        choices=("final", "raw"),
        default="final",
        help="after the course policy the run was graded with (default; the raw points without one), or raw",
    )
    parser.add_argument(
        "--assignment", default=DEFAULT_ASSIGNMENT, help=f"the LMS's column name (default: {DEFAULT_ASSIGNMENT!r})"
    )
    return parser


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        roster = load_roster(args.roster)
        results = latest_results(args.gradebook or args.out / "gradebook.db")
        cols = columns(clean_line(args.assignment), args.columns == "stages", args.format == "csv")
        text = csv_text(export_rows(args.format, roster, results, cols, args.scores == "final"))
        write_atomically(args.file, text)
    except (RosterError, ExportError, OSError) as error:
        reason = f"{error.strerror}: {error.filename}" if isinstance(error, OSError) and error.strerror else error
        print(f"autograde export: {clean_line(str(reason))}", file=sys.stderr)
        return 2
    missing, unknown = roster.compare(set(results))
    if unknown:
        print(f"autograde export: left out, not in the roster: {', '.join(map(clean_line, unknown))}", file=sys.stderr)
    if missing:
        print(f"autograde export: zeros, no graded submission: {', '.join(map(clean_line, missing))}", file=sys.stderr)
    print(f"Wrote {args.file}: {len(roster.students)} students, {args.format} format.")
    return 0
