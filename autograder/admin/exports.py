"""`autograde export OUT FILE --format canvas|moodle|csv --roster ROSTER`: the grades as an LMS imports them.

It reads the final grades stored with the gradebook's latest finished run (OUT/gradebook.db unless --gradebook),
the graded students' and the roster's absent ones, and nothing else: no grade is recomputed here. One total
(final.points out of final.possible), or one column per assigned stage (--columns stages: StageGrade.points,
after the late penalty and the instructor's changes) and, with the bonus rule "extra", a bonus column of extra
credit (final.bonus, the capped amount), so that the columns add up to the total. --scores raw writes the raw
points the final grades keep beside them (final.raw, StageGrade.raw) instead.

Rows follow the roster and carry its ids; a graded folder the roster does not name is left out and said on
stderr. A cell is blank when there is no grade to give: a student the grader could not grade, or with no result
in the run, is blank and named on stderr; an excused stage is Canvas's "EX" (blank in Moodle and csv), and so is
a student whose every stage is excused; a roster student with no submission gets zeros or blanks
(--not-submitted).

docs/exports.md says which roster column goes into which LMS field, how each format was checked against its
LMS's documentation, and how the LMS's total and ours agree.
"""

import argparse
import csv
import io
import sqlite3
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from autograder.admin.final_grade import cents
from autograder.admin.roster import CANVAS_POINTS_ROW, Roster, RosterError, Student, load_roster
from autograder.outputs import clean_line, write_atomically
from autograder.outputs.command_line import OneLineParser, fail
from autograder.outputs.folders import GRADEBOOK
from autograder.outputs.gradebook import Gradebook, GradebookError
from autograder.outputs.gradesheet import inert, points
from autograder.record import FinalGrade

FORMATS = ("canvas", "moodle", "csv")
DEFAULT_ASSIGNMENT = "Tic-tac-toe minimax"
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_EXCUSED = "EX"  # what Canvas's gradebook export writes for an excused submission, and its import reads
MOODLE_IDENTITY = ["ID number", "Email address", "Full name"]
MOODLE_MAX = 100  # what Moodle's import accepts at most unless the site allows grades above 100 %
CSV_IDENTITY = ["folder", "id", "name", "email", "section"]
BONUS = "bonus"  # Column.stage of the bonus column
ASSIGNED = ("core", "excused")  # StageGrade.counted of an assigned stage


class ExportError(Exception):
    """Nothing could be exported (why, in one line)."""


@dataclass(frozen=True)
class Column:
    header: str
    possible: float  # the Points Possible row (0 for extra credit)
    stage: str | None  # a stage id, BONUS, or None for the total
    percent: bool = False  # written as a percent of possible (Moodle's new grade items are out of 100)


@dataclass(frozen=True)
class Layout:
    """What every final grade of the run shares: the points possible, the assigned stages, the bonus rule."""

    possible: int
    stages: dict[str, int]  # the assigned core stages, in course order -> their points
    bonus_rule: str


def layout(finals: list[FinalGrade]) -> Layout:
    """The run's layout, read from its final grades; ExportError when none was graded or they disagree."""
    found = {
        (final.possible, tuple((s.stage, s.possible) for s in final.stages.values() if s.counted in ASSIGNED),
         final.bonus_rule)
        for final in finals
        if final.stages  # an ungraded student's final grade has no stages
    }  # fmt: skip
    if not found:
        raise ExportError("no student of the latest run has a final grade: grade the class again with this version")
    if len(found) > 1:
        raise ExportError("the latest run's final grades disagree on the assigned stages or the bonus rule")
    possible, stages, bonus_rule = found.pop()
    return Layout(possible, dict(stages), bonus_rule)


def columns(
    format: str, assignment: str, run: Layout, per_stage: bool, raw: bool, moodle_items: str = "new"
) -> list[Column]:
    """The score columns: one total, or one per assigned stage and the bonus (extra credit) when it counts."""
    plain = format == "csv"
    percent = format == "moodle" and moodle_items == "new"

    def named(what: str, possible: float, stage: str | None) -> Column:
        header = what if plain else f"{assignment} {what}".strip()
        if percent:
            header = f"{header} (% of {possible} points)"
        return Column(header, possible, stage, percent)

    if not per_stage:
        return [named("total" if plain else "", run.possible, None)]
    cols = [named(stage_id, possible, stage_id) for stage_id, possible in run.stages.items()]
    if run.bonus_rule == "extra" and not raw:  # "apart" and "off": the bonus is not part of the grade
        header = BONUS if plain else f"{assignment} {BONUS}"
        cols.append(Column(f"{header} (extra credit points)" if format == "moodle" else header, 0, BONUS))
    return cols


def cells(final: FinalGrade | None, cols: list[Column], format: str, raw: bool, not_submitted: str) -> list[str]:
    """A student's score cells, read from their final grade; blank where there is no grade to give."""
    if final is None or final.status == "ungraded" or (final.status == "not submitted" and not_submitted == "blank"):
        return [""] * len(cols)
    return [cell(final, column, format, raw) for column in cols]


def cell(final: FinalGrade, column: Column, format: str, raw: bool) -> str:
    if column.stage == BONUS:
        return "" if final.status == "excused" else points(final.bonus)
    if column.stage is None:
        excused, value = final.status == "excused", final.raw if raw else final.points
    else:
        grade = final.stages[column.stage]
        excused, value = grade.counted == "excused", grade.raw if raw else grade.points
    if excused and not raw:  # Canvas leaves an excused cell out of its total; Moodle and csv have no such mark
        return CANVAS_EXCUSED if format == "canvas" else ""
    if column.percent:
        value = cents(Decimal(str(value)) * 100 / Decimal(str(column.possible)))
    return points(value)


def identity(format: str, student: Student) -> list[str]:
    if format == "canvas":
        return [student.name, student.canvas_id, student.sis_user_id, student.login, student.section]
    if format == "moodle":
        return [student.sis_user_id, student.email, student.name]
    return [student.folder, student.sis_user_id, student.name, student.email, student.section]


def export_rows(
    format: str, roster: Roster, finals: dict[str, FinalGrade], cols: list[Column], raw: bool, not_submitted: str
) -> list[list[str]]:
    """The file's rows, header first, one per roster student in the roster's order."""
    header = {"canvas": CANVAS_IDENTITY, "moodle": MOODLE_IDENTITY, "csv": CSV_IDENTITY}[format]
    rows = [[*header, *(column.header for column in cols)]]
    if format == "canvas":
        rows.append([CANVAS_POINTS_ROW, *[""] * (len(header) - 1), *(points(column.possible) for column in cols)])
    for folder, student in roster.students.items():
        scores = cells(finals.get(folder), cols, format, raw, not_submitted)
        rows.append([*(inert(clean_line(cell)) for cell in identity(format, student)), *scores])
    return rows


def csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def latest_finals(gradebook: Path) -> tuple[dict[str, FinalGrade], set[str]]:
    """The latest finished run's final grades by student (its absent roster students' included), and the
    students it graded whose result has no final grade (a gradebook written before final grades were kept)."""
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
        results = book.run_results(run)
        finals = {student: result.final for student, result in results.items() if result.final is not None}
        return {**book.run_absent(run), **finals}, {name for name, result in results.items() if result.final is None}
    finally:
        book.close()


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograde export",
        description="Write the latest graded run's final grades as a gradebook import file for an LMS.",
        epilog="Exit status: 0 when the file was written; 2 for a wrong option, roster or gradebook (nothing written)."
        " docs/exports.md: the roster's columns, each format, and what to do in the LMS.",
    )
    parser.add_argument("out", type=Path, help="the OUT folder of `autograde grade`")
    parser.add_argument("file", type=Path, help="the import file to write")
    parser.add_argument("--format", required=True, choices=FORMATS, help="canvas, moodle or csv")
    parser.add_argument(
        "--roster",
        required=True,
        type=Path,
        help="the class roster (folder,id,login,...), or a Canvas gradebook export",
    )
    parser.add_argument(
        "--folder-column",
        metavar="NAME",
        help="the roster column holding the submission folder names (default: folder; in a Canvas gradebook export,"
        " SIS Login ID)",
    )
    parser.add_argument("--gradebook", type=Path, help="the gradebook to read (default: OUT/gradebook.db)")
    for option, choices, description in (  # each option's first choice is its default
        ("--columns", ("total", "stages"),
         "one total (default), or one column per assigned stage (and the bonus, when it is extra credit)"),
        ("--not-submitted", ("zero", "blank"), "a roster student with no submission: zeros (default) or blank cells"),
        ("--moodle-items", ("new", "existing"),
         "moodle: imported as new grade items, which Moodle makes out of 100, so each column is a percent of its"
         " points (default); or into existing items you made with each column's maximum: points"),
        ("--scores", ("final", "raw"),
         "the final grades (default), or the raw points before the policy and the instructor's changes"),
    ):  # fmt: skip
        parser.add_argument(option, choices=choices, default=choices[0], help=description)
    parser.add_argument(
        "--assignment", default=DEFAULT_ASSIGNMENT, help=f"the LMS's column name (default: {DEFAULT_ASSIGNMENT!r})"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    raw = args.scores == "raw"
    try:
        roster = load_roster(args.roster, args.folder_column)
        finals, unfinished = latest_finals(args.gradebook or args.out / GRADEBOOK)
        run = layout(list(finals.values()))
        assignment = clean_line(args.assignment)
        cols = columns(args.format, assignment, run, args.columns == "stages", raw, args.moodle_items)
        rows = export_rows(args.format, roster, finals, cols, raw, args.not_submitted)
        write_atomically(args.file, csv_text(rows))
    except (RosterError, ExportError, OSError) as error:
        reason = f"{error.strerror}: {error.filename}" if isinstance(error, OSError) and error.strerror else error
        return fail("autograde export", str(reason))
    for line in notes(args.format, roster, finals, unfinished, rows, raw, args.not_submitted):
        print(f"autograde export: {line}", file=sys.stderr)
    print(f"Wrote {args.file}: {len(roster.students)} students, {args.format} format.")
    return 0


def notes(
    format: str,
    roster: Roster,
    finals: dict[str, FinalGrade],
    unfinished: set[str],
    rows: list[list[str]],
    raw: bool,
    not_submitted: str,
) -> list[str]:
    """One line each, for stderr: who was left out, who is blank and why, who got zeros for no submission."""
    status = {folder: finals[folder].status if folder in finals else None for folder in roster.students}

    def having(*statuses) -> list[str]:
        return [folder for folder, found in status.items() if found in statuses]

    excused = "EX" if format == "canvas" else "blank"
    groups = [
        ("left out, not in the roster", sorted((set(finals) | unfinished) - set(roster.students))),
        ("blank, could not be graded", having("ungraded")),
        ("blank, no grade in the latest run (not graded, or not in its roster)", having(None)),
        (f"{'blank' if not_submitted == 'blank' else 'zeros'}, not submitted", having("not submitted")),
        (f"{excused}, every stage excused", [] if raw else having("excused")),
    ]
    lines = [f"{what}: {', '.join(map(clean_line, names))}" for what, names in groups if names]
    students = roster.students.values()
    if format == "canvas" and any(not (s.canvas_id or s.sis_user_id or s.login) for s in students):
        lines.append("some students have no ID, SIS User ID or SIS Login ID: Canvas can match them by name only")
    if format == "moodle":
        if any(_number(cell) > MOODLE_MAX for row in rows[1:] for cell in row[len(MOODLE_IDENTITY) :]):
            lines.append(f"some grades are above {MOODLE_MAX}: Moodle refuses them unless the site allows more")
        if any(not student.sis_user_id for student in students):
            lines.append("some students have no ID number: map Email address to useremail in Moodle's import")
    return lines


def _number(cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        return 0.0
