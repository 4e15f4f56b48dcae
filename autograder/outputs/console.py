"""What grading shows in the terminal: a progress bar while it runs and a students x stages table after.

Names and messages come from submissions: they are shown as plain text (rich markup such as "[bold]" in a
name is printed as it is, never interpreted), cleaned of control characters first.
"""

import contextlib
import sys

from rich.console import Console as RichConsole
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autograder.course.stages import BONUS_POINTS, BONUS_STAGES, CORE_STAGES, STAGES, TOTAL_POINTS
from autograder.grading.record import StageKind, SubmissionResult
from autograder.outputs import clean_line, name_order
from autograder.outputs.gradesheet import points

ORDINARY = (StageKind.FULL, StageKind.WRONG)  # the score says it; every other kind is named in the table


class Console:
    def __init__(self, quiet: bool = False):
        self.quiet = quiet
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
        entry = result.stages[stage.id]
        colour = "green" if entry.score == entry.max_score else "red" if entry.score == 0 else "yellow"
        kind = entry.status.kind
        mark = "" if kind in ORDINARY else f" {kind.icon}"  # its word is in the caption: cells stay narrow
        return f"[{colour}]{points(entry.score)}{escape(mark)}[/]"

    def summary(self, results: dict[str, SubmissionResult]) -> None:
        if self.quiet:
            return
        caption = "  ".join(f"{stage.id[:2]} {stage.module}" for stage in STAGES)
        kinds = {entry.status.kind for result in results.values() for entry in result.stages.values()} - set(ORDINARY)
        if kinds:
            caption += "\n" + "  ".join(f"{kind.icon} {kind.label}" for kind in StageKind if kind in kinds)
        table = Table(title="Points per stage", caption=caption, show_lines=False)
        longest = max((len(clean_line(name)) for name in results), default=7)
        table.add_column("student", overflow="fold", min_width=min(longest, 16))
        for stage in CORE_STAGES:
            table.add_column(f"{stage.id[:2]}\n/{stage.points}", justify="right")
        table.add_column(f"total\n/{TOTAL_POINTS}", justify="right", style="bold")
        for stage in BONUS_STAGES:  # after the total, as in grades.csv
            table.add_column(f"{stage.id[:2]}\n/{stage.points}", justify="right")
        if BONUS_STAGES:
            table.add_column(f"bonus\n/{BONUS_POINTS}", justify="right", style="bold")
        for student in sorted(results, key=name_order):
            result = results[student]
            core = [self._cell(result, stage) for stage in CORE_STAGES]
            bonus = [self._cell(result, stage) for stage in BONUS_STAGES]
            bonus_total = [points(result.bonus)] if BONUS_STAGES else []
            table.add_row(escape(clean_line(student)), *core, points(result.total), *bonus, *bonus_total)
        self.rich.print(table)
        ungraded = sum(result.ungraded is not None for result in results.values())
        if ungraded:
            self.say(f"{ungraded} of {len(results)} submissions could not be graded (their zeros are not grades).")
