"""What grading shows in the terminal: a progress bar while it runs and a students x stages table after.

Names and messages come from submissions: they are shown as plain text (rich markup such as "[bold]" in a
name is printed as it is, never interpreted), cleaned of control characters first.
"""

import contextlib
import sys

from autograder.course.stages import BONUS_POINTS, BONUS_STAGES, CORE_STAGES, STAGES, TOTAL_POINTS
from autograder.outputs import clean_line, name_order
from autograder.outputs.gradesheet import points
from autograder.record import UNCOUNTED, FinalGrade, StageKind, SubmissionResult

ORDINARY = (StageKind.FULL, StageKind.WRONG)  # the score says it; every other kind is named in the table
# rich, imported only by a console that prints: a --quiet run never loads it (a sixth of `grade`'s imports)
RICH_MODULES = ("rich.console", "rich.markup", "rich.progress", "rich.table")


class Console:
    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.rich = None
        if not quiet:
            from rich.console import Console as RichConsole

            # A pipe or a log file has no width of its own: 120 columns keep the table of ten stages readable there.
            self.rich = RichConsole(stderr=False, highlight=False, width=None if sys.stdout.isatty() else 120)

    def say(self, text: str) -> None:
        """One message, printed as it is (no markup)."""
        if not self.quiet:
            self.rich.print(clean_line(text, 2000), markup=False, soft_wrap=True)

    @contextlib.contextmanager
    def progress(self, total: int):
        """Yields advance(student): one step of a bar over the submissions being graded."""
        if self.quiet or total == 0:
            yield lambda student: None
            return
        from rich.markup import escape
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
        )
        with Progress(*columns, console=self.rich, transient=not sys.stdout.isatty()) as bar:
            task = bar.add_task("", total=total)
            yield lambda student: bar.update(task, advance=1, description=escape(clean_line(student)))

    @staticmethod
    def _cell(result: SubmissionResult, stage) -> str:
        from rich.markup import escape

        entry = result.stages[stage.id]
        counted = result.final.stages[stage.id].counted if result.final and stage.id in result.final.stages else ""
        if counted in UNCOUNTED or counted == "excused":  # no part of the grade: never a red zero
            return f"[dim]{points(entry.score)} {'e' if counted == 'excused' else '·'}[/]"
        colour = "green" if entry.score == entry.max_score else "red" if entry.score == 0 else "yellow"
        kind = entry.status.kind
        mark = "" if kind in ORDINARY else f" {kind.icon}"  # its word is in the caption: cells stay narrow
        return f"[{colour}]{points(entry.score)}{escape(mark)}[/]"

    @staticmethod
    def _grade(result: SubmissionResult | None, final: FinalGrade | None) -> str:
        """The final grade (record.FinalGrade), coloured as a score; a word where there is no grade."""
        if result is not None and result.ungraded is not None:
            return "[red]not graded[/]"
        if final is None:  # a record made without a course (by hand, an older grader): its raw total
            return points(result.total) if result is not None else "–"
        if final.status != "graded":
            return final.status  # "not submitted", "excused"
        colour = "green" if final.points >= final.possible else "red" if final.points <= 0 else "yellow"
        return f"[{colour}]{points(final.points)}[/]"

    def summary(self, results: dict[str, SubmissionResult], absent: dict[str, FinalGrade] | None = None) -> None:
        """The students x stages table; the last column is each student's final grade, the one every output shows.

        absent: the roster's students with no submission (their final grades), listed as not submitted."""
        if self.quiet:
            return
        from rich.markup import escape
        from rich.table import Table

        absent = {name: final for name, final in (absent or {}).items() if name not in results}
        finals = [result.final for result in results.values() if result.final] + list(absent.values())
        possible = finals[0].possible if finals else TOTAL_POINTS
        caption = "  ".join(f"{stage.id[:2]} {stage.module}" for stage in STAGES)
        kinds = {entry.status.kind for result in results.values() for entry in result.stages.values()} - set(ORDINARY)
        if kinds:
            caption += "\n" + "  ".join(f"{kind.icon} {kind.label}" for kind in StageKind if kind in kinds)
        caption += "\nraw: the points as graded; grade: after the course policy, the bonus rule and the overrides"
        if any(_dimmed(final) for final in finals):
            caption += "  (· not counted, e excused)"
        table = Table(title="Points per stage", caption=caption, show_lines=False)
        longest = max((len(clean_line(name)) for name in [*results, *absent]), default=7)
        table.add_column("student", overflow="fold", min_width=min(longest, 16))
        for stage in CORE_STAGES:
            table.add_column(f"{stage.id[:2]}\n/{stage.points}", justify="right")
        table.add_column(f"raw\n/{TOTAL_POINTS}", justify="right")
        for stage in BONUS_STAGES:  # after the total, as in grades.csv
            table.add_column(f"{stage.id[:2]}\n/{stage.points}", justify="right")
        if BONUS_STAGES:
            table.add_column(f"bonus\n/{BONUS_POINTS}", justify="right")
        table.add_column(f"grade\n/{possible}", justify="right", style="bold")
        for student in sorted([*results, *absent], key=name_order):
            result = results.get(student)
            if result is None:  # in the roster, no submission
                dashes = ["–"] * (len(CORE_STAGES) + 1 + len(BONUS_STAGES) + bool(BONUS_STAGES))
                table.add_row(escape(clean_line(student)), *dashes, self._grade(None, absent[student]))
                continue
            core = [self._cell(result, stage) for stage in CORE_STAGES]
            bonus = [self._cell(result, stage) for stage in BONUS_STAGES]
            bonus_total = [points(result.bonus)] if BONUS_STAGES else []
            grade = self._grade(result, result.final)
            table.add_row(escape(clean_line(student)), *core, points(result.total), *bonus, *bonus_total, grade)
        self.rich.print(table)
        ungraded = sum(result.ungraded is not None for result in results.values())
        if ungraded:
            self.say(f"{ungraded} of {len(results)} submissions could not be graded (their zeros are not grades).")


def _dimmed(final: FinalGrade) -> bool:
    """Whether some stage of the grade is shown dimmed: not assigned, a bonus turned off, or excused."""
    return any(grade.counted in (*UNCOUNTED, "excused") for grade in final.stages.values())
