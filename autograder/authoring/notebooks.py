"""nbgrader source notebooks, made from the same single source as the .py stages.

`autograde build` writes one nbgrader *source notebook* per stage into the course folder nbgrader/,
plus its nbgrader_config.py (a copy of nbgrader_files/nbgrader_config.py). The JSON is written with the
standard library in exactly the layout nbformat writes (sorted keys, indent 1, sources as lists of lines,
fixed cell ids, no timestamps), so `autograde build --check` can compare byte for byte and the build does
not need Jupyter installed. The test cells come from the grader's checks (notebook_tests); the notebook a
student submits is read by the grader with autograder.grading.intake.notebook.
"""

import json
import re
from pathlib import Path

from autograder.authoring.notebook_tests import cell_id, helpers_source, test_cells
from autograder.course import stages as course
from autograder.course.checks import stage_checks
from autograder.course.stages import STAGES, Stage

SCHEMA_VERSION = 3  # nbgrader's cell metadata schema
CONFIG = Path(__file__).parent / "nbgrader_files" / "nbgrader_config.py"


def nbgrader_root():
    """The course folder an instructor runs nbgrader in (looked up late: tests move course.ROOT)."""
    return course.ROOT / "nbgrader"


def notebook_path(stage: Stage):
    return nbgrader_root() / "source" / stage.id / f"{stage.id}.ipynb"


# Sections of a stage README that describe the .py workflow; the notebook says it its own way (_how_to).
PY_ONLY_SECTIONS = ("check your work", "what the hidden tests check")


def _instructions(stage: Stage) -> str:
    """The stage README adapted to a notebook when it exists, else the manifest's title and hints."""
    if not stage.readme_path.exists():
        hints = "\n".join(f"- {hint}" for hint in stage.hints)
        return f"# {stage.title}\n\nWrite {', '.join(f'`{f}`' for f in stage.functions)}.\n\n## Hints\n\n{hints}"
    kept, skipping = [], False
    for line in stage.readme_path.read_text().splitlines():
        if line.startswith("## "):
            skipping = line[3:].strip().lower() in PY_ONLY_SECTIONS
        if not skipping and "`autograde hint" not in line:  # a command of the .py workflow
            kept.append(line)
    text = "\n".join(kept).strip()
    where = "You write your code in this notebook, in the answer cell below."
    return re.sub(r"You edit one file: `[^`]+`(, in this folder)?\.", where, text)


def _how_to(stage: Stage) -> str:
    return (
        "## Working in this notebook\n\n"
        "1. Write your code in the next cell, where it says `# YOUR CODE HERE`, in place of "
        "`raise NotImplementedError()`. Keep the function names and parameters.\n"
        "2. Run every cell from the top (*Run > Run All Cells*). The read-only cells after yours are the tests: "
        "each prints `... all checks passed` when your code passes it, and otherwise shows what went wrong.\n"
        "3. Before you submit, restart the kernel and run all cells again (or use the *Validate* button, or "
        f"`nbgrader validate {stage.id}.ipynb` in a terminal).\n\n"
        f"The tests are worth {stage.points} points in all. More checks run when your notebook is graded, "
        "on other boards than the ones shown here, so make your code right for every board, not just these."
    )


def _cell(cell_type: str, name: str, source: str, nbgrader: dict | None = None) -> dict:
    cell: dict = {"cell_type": cell_type, "id": name, "metadata": {}, "source": source}
    if nbgrader is not None:
        cell["metadata"]["nbgrader"] = {"grade_id": name, "schema_version": SCHEMA_VERSION, **nbgrader}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


READ_ONLY = {"grade": False, "locked": True, "solution": False}


def course_cells(stage: Stage) -> dict[str, bool]:
    """The grade_id of each nbgrader cell of the stage's notebook -> whether it is locked (nbgrader's autograde
    puts the course's copy of a locked cell in place of the student's; the answer cell stays the student's)."""
    locked = ["instructions", "how-to", "helpers", *(cell_id(check) for check in stage_checks(stage.id))]
    return {"answer": False, **dict.fromkeys(locked, True)}


def source_notebook(stage: Stage) -> dict:
    """The stage's nbgrader source notebook as a JSON-ready dict (nbformat 4.5, nbgrader schema 3)."""
    cells = [
        _cell("markdown", "instructions", _instructions(stage), READ_ONLY),
        _cell("markdown", "how-to", _how_to(stage), READ_ONLY),
        _cell(
            "code",
            "answer",
            stage.solution_path.read_text().rstrip("\n"),
            {"grade": False, "locked": False, "solution": True},
        ),
        _cell("code", "helpers", helpers_source(), READ_ONLY),
    ]
    for check, source in test_cells(stage):
        # An advisory check is a graded cell of 0 points: nbgrader reports it when it fails, and counts nothing.
        test = {"grade": True, "locked": True, "points": check.points, "solution": False}
        cells.append(_cell("code", cell_id(check), source, test))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dumps(notebook: dict) -> str:
    """Notebook JSON exactly as nbformat.writes lays it out (so saving it in Jupyter changes nothing)."""

    def split(cell: dict) -> dict:
        return {**cell, "source": cell["source"].splitlines(keepends=True)}

    data = {**notebook, "cells": [split(cell) for cell in notebook["cells"]]}
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False, separators=(",", ": "))


def render_notebook(stage: Stage) -> str:
    return dumps(source_notebook(stage))


def render_config(_stage: Stage) -> str:
    return CONFIG.read_text()


def readme_path(stage: Stage):
    return nbgrader_root() / "source" / stage.id / "README.md"


def render_readme(stage: Stage) -> str:
    """The student's README of a notebook stage: nbgrader's generate_assignment copies it beside the released
    notebook, so each assignment a student fetches says what is in it, how to check it and how it is graded."""
    from autograder.course.checks import stage_outline

    outline = stage_outline(stage.id)
    shown = sum(check.points for check in outline if check.visible)
    kind = "a bonus stage" if stage.bonus else f"stage {int(stage.id[:2])} of the course"
    return (
        f"# {stage.id}: {stage.title}\n\n"
        f"This is {kind}. Your work is the notebook `{stage.id}.ipynb` in this folder: open it in Jupyter and "
        "follow it from the top.\n\n"
        "1. Write your code in the cell that says `# YOUR CODE HERE`, in place of `raise NotImplementedError()`. "
        "Keep the function names and parameters.\n"
        "2. Run every cell (*Run > Run All Cells*). Each test cell after yours prints `... all checks passed`, or "
        "the board, what your function returned, what was expected and what to try.\n"
        f"3. Validate before you hand in: the *Validate* button of the Assignments tab, or `nbgrader validate "
        f"{stage.id}.ipynb` in a terminal in this folder, restarts the notebook, runs it all and says whether "
        "its tests pass.\n"
        "4. Hand it in with the *Submit* button of the Assignments tab (or as your course says), before its due "
        "date.\n\n"
        f"## How it is graded\n\nThe stage is worth {stage.points} points, and each test cell earns its own "
        f"points, so part of them can be earned. {shown:g} come from the tests you see; the other "
        f"{stage.points - shown:g} come from hidden tests, which call the same functions on many more boards when "
        "your notebook is graded. A hidden test cell in your copy holds only a comment, so it passes when you "
        "validate: make your code right for every board, not only the examples.\n"
    )


# Appended to autograder.authoring.build.GENERATORS: one notebook and its README per stage, and the course folder's
# config.
GENERATORS = [
    (lambda: list(STAGES), notebook_path, render_notebook),
    (lambda: list(STAGES), readme_path, render_readme),
    (lambda: [STAGES[0]], lambda _stage: nbgrader_root() / "nbgrader_config.py", render_config),
]
