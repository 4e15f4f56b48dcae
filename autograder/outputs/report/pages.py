"""The two pages, rendered from the view models by the Jinja2 templates in templates/, and written to OUT.

Autoescaping is on for every template, so a student's name or message is text wherever it lands; only the
stylesheet (a file of this package) and the rendered Markdown (escaped by markdown_render) are marked safe.
StrictUndefined makes a misspelt field an error here, not an empty space on a page.
"""

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from markupsafe import Markup

from autograder.course.cache import trusted_folder
from autograder.course.stages import BONUS_POINTS, BONUS_STAGES, CORE_STAGES, STAGES, TOTAL_POINTS, Stage
from autograder.outputs import write_atomically
from autograder.outputs.folders import FEEDBACK, REPORT, output_folders
from autograder.outputs.gradesheet import points
from autograder.outputs.report import plots, views
from autograder.outputs.report.markdown_render import markdown, markdown_inline
from autograder.outputs.stats import number
from autograder.record import FinalGrade, SubmissionResult


def fill(score: views.Score) -> str:
    """The colour class of a score: full marks, some, none."""
    return "full" if score.full else "zero" if score.score <= 0 else "part"


def cell_class(cell: views.Cell) -> str:
    """A stage cell's class: neutral when it is no part of the grade (not assigned, a bonus turned off, excused),
    its kind's when it is not a plain score (not submitted, starter, broken...)."""
    if cell.neutral:
        return "kind neutral"
    return fill(cell) if cell.kind in views.ORDINARY_KINDS else f"kind {cell.kind.css}"


def heat(score: views.Score) -> str:
    """A background from red (none) through amber to green (full marks): the table reads as a heat map."""
    if isinstance(score, views.Cell) and (score.kind not in views.ORDINARY_KINDS or score.neutral):
        return ""  # its kind's own colour and word, or the neutral one of a stage outside the grade (report.css)
    share = max(0.0, min(score.score / score.max_score, 1.0)) if score.max_score else 0.0
    return f"background: hsl({share * 135:.0f}, 65%, {88 - 6 * (share == 1):.0f}%)"


# The course's bonus rule (FinalGrade.bonus_rule) in words, for the pages.
BONUS_WORDS = {
    "apart": "reported apart, not in the grade",
    "extra": "extra credit, added to the grade",
    "off": "not counted",
}


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader(__package__, "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # the templates are files of this package: read once per run
        # Compiled once for all runs, in the instructor's cache folder (course/cache.py): Jinja2 recompiles a
        # template whose source changed.
        bytecode_cache=FileSystemBytecodeCache(str(folder), "jinja2-%s.cache")
        if (folder := trusted_folder())
        else None,
    )
    env.filters.update(points=points, number=number, markdown=markdown, markdown_inline=markdown_inline)
    env.globals.update(
        fill=fill,
        cell_class=cell_class,
        squares=lambda board: list(board.ljust(9)[:9]),
        heat=heat,
        stages=STAGES,
        core_stages=CORE_STAGES,
        bonus_stages=BONUS_STAGES,
        total_points=TOTAL_POINTS,
        bonus_points=BONUS_POINTS,
        hidden_note=views.HIDDEN_NOTE,
        section_html=section_html,
        bonus_words=BONUS_WORDS,
        # Inlined so that a page stays one file; it is this package's own stylesheet, not data.
        css=Markup(files(__package__).joinpath("report.css").read_text(encoding="utf-8").strip()),
    )
    return env


@dataclass(frozen=True)
class DrawnRow:
    """A student's row of the class report up to its late-work cell, drawn once, cell by cell: (key, html), the key a
    stage's id for its cell, "bonus-total" for the bonus, "" for the others."""

    cells: tuple[tuple[str, Markup], ...]

    def without(self, left_out: frozenset[str] | set[str]) -> Markup:
        """The row's HTML without the cells of the keys left out."""
        return Markup("\n").join(html for key, html in self.cells if key not in left_out)


@lru_cache(maxsize=1024)
def stage_cell(cell: views.Cell, stage: Stage) -> Markup:
    """A stage's cell in a student's row of the class report, drawn once per distinct cell (most repeat)."""
    return environment().get_template("student_row.html.j2").module.stage_cell(cell, stage)


def drawn_row(row: views.StudentRow) -> DrawnRow:
    macros = environment().get_template("student_row.html.j2").module
    cells = [("", macros.name_cell(row))]
    cells += [(stage.id, stage_cell(cell, stage)) for cell, stage in zip(row.cells, CORE_STAGES, strict=True)]
    cells.append(("", macros.grade_cell(row)))
    bonus = zip(row.bonus_cells, BONUS_STAGES, strict=True)
    cells += [(stage.id, stage_cell(cell, stage)) for cell, stage in bonus]
    if row.bonus:
        cells.append(("bonus-total", macros.bonus_cell(row)))
    return DrawnRow(tuple((key, Markup(html)) for key, html in cells))


def report_html(
    results: dict[str, SubmissionResult],
    notes: list[str] | tuple = (),
    similar: bool = False,
    tournament: bool = False,
    folders: dict[str, str] | None = None,
    absent: dict[str, FinalGrade] | None = None,
    rows: dict[str, DrawnRow] | None = None,
) -> str:
    """notes: about the run as a whole (entries that are not submissions, why some were regraded), one line each;
    similar: link OUT/similar.html (`autograde similar`); tournament: OUT/tournament.html (`autograde tournament`);
    folders: each student's folder (outputs/folders.py), by default that of the students in results;
    absent: the roster's students with no submission, with their final grades;
    rows: students' rows already drawn by row_html from these same results, used as they are."""
    report = views.class_report(results, notes, folders, absent or {})
    rows = rows or {}
    # A stage left out of the report has no cells in the students table, nor the bonus when no bonus stage is shown.
    left_out = set(report.left_out) | ({"bonus-total"} if {s.id for s in BONUS_STAGES} <= report.left_out else set())
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            report=report,
            grades_plot=plots.grades_histogram(report.grades, report.possible),
            stage_plots=[(entry, plots.stage_histogram(entry.scores, entry.stage.points)) for entry in report.stages],
            pass_plot=plots.pass_rate_bars(report.pass_rates),
            similar=similar,
            tournament=tournament,
            rows={row.name: (rows.get(row.name) or drawn_row(row)).without(left_out) for row in report.students},
        )
    )


def row_html(name: str, result: SubmissionResult, folders: dict[str, str]) -> DrawnRow:
    """The student's row of the class report, drawn once as they are graded and reused by report_html.

    Their view of a class of one is built first: a result the class report could not read fails here, for this
    student alone, and not when the whole class's page is written.
    """
    (row,) = views.class_report({name: result}, folders=folders).students
    return drawn_row(row)


@lru_cache(maxsize=512)
def section_html(stage: views.StageSection) -> Markup:
    """A stage's section of a feedback page, drawn once per distinct section: a class hands in the same stage
    results again and again (a stage not handed in yet, a stage with full marks)."""
    return environment().get_template("stage_section.html.j2").module.stage_section(stage)


def feedback_html(result: SubmissionResult, show_hidden: bool = False) -> str:
    """One student's page; show_hidden: the outputs of hidden tests too (after the grades are published)."""
    return environment().get_template("feedback.html.j2").render(page=views.feedback_page(result, show_hidden))


def write_report(
    out: Path,
    results: dict[str, SubmissionResult],
    notes: list[str] | tuple = (),
    folders: dict[str, str] | None = None,
    absent: dict[str, FinalGrade] | None = None,
    rows: dict[str, DrawnRow] | None = None,
) -> Path:
    """OUT/report.html, linking the similarity and tournament pages when they are there; returns its path.

    rows: students' rows drawn by row_html as they were graded (the others are drawn here)."""
    report = out / REPORT
    write_atomically(
        report,
        report_html(
            results,
            notes,
            similar=(out / "similar.html").is_file(),
            tournament=(out / "tournament.html").is_file(),
            folders=folders,
            absent=absent,
            rows=rows,
        ),
    )
    return report


def write_pages(
    out: Path,
    results: dict[str, SubmissionResult],
    show_hidden: bool = False,
    notes: list[str] | tuple = (),
    folders: dict[str, str] | None = None,
    absent: dict[str, FinalGrade] | None = None,
) -> Path:
    """OUT/report.html and OUT/<folder>/feedback.html for every student; returns the report's path."""
    folders = folders or output_folders(results)
    for student, result in results.items():
        write_atomically(out / folders[student] / FEEDBACK, feedback_html(result, show_hidden))
    return write_report(out, results, notes, folders, absent)
