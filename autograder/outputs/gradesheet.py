"""grades.csv: one row per student, raw points per stage in the header instructors' scripts rely on, then the
final grade."""

import csv
import io
from pathlib import Path

from autograder.course.stages import BONUS_STAGES_ON, CORE_STAGES, STAGES
from autograder.outputs import clean_line, name_order, write_atomically
from autograder.record import FinalGrade, SubmissionResult

BONUS = [stage for stage in STAGES if stage.bonus]
# The first nine columns never change: bonus stages (when the course has them on) come after total, then bonus.
HEADER = ["student", *(stage.id for stage in CORE_STAGES), "total"]
if BONUS_STAGES_ON and BONUS:
    HEADER += [*(stage.id for stage in BONUS), "bonus"]
# Last: the final grade (admin/final_grade.py) after the policy, the bonus rule and the instructor's changes,
# out of the assigned stages' points; empty for a submission the grader could not grade.
HEADER += ["final"]
# A cell starting with one of these is evaluated by Excel, LibreOffice and Google Sheets (=HYPERLINK(...)).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def points(value: float) -> str:
    """Whole points print as integers (10, not 10.0)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def inert(cell: str) -> str:
    """A cell a spreadsheet shows as text: the usual leading ' when it would start a formula."""
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def final_cell(final: FinalGrade | None) -> str:
    """The final grade's cell: its points; empty when there is none to give (ungraded, every stage excused)."""
    return points(final.points) if final is not None and final.status in ("graded", "not submitted") else ""


def write_grades(path: Path, results: dict[str, SubmissionResult]) -> None:
    """results: student -> their record (a submission that could not be graded has zeros)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for student in sorted(results, key=name_order):
        stages = results[student].stages
        row = [stages[stage.id].score for stage in CORE_STAGES]
        cells = [inert(clean_line(student)), *map(points, row), points(sum(row))]
        if BONUS_STAGES_ON and BONUS:
            extra = [stages[stage.id].score for stage in BONUS]
            cells += [*map(points, extra), points(sum(extra))]
        cells.append(final_cell(results[student].final))
        writer.writerow(cells)
    write_atomically(path, buffer.getvalue())
