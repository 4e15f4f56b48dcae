"""The code of a submitted notebook, as the Python source the Jupyter kernel would run, read without running anything.

Used by `autograde grade`: standard library only, since the grader and the Gradescope bundle do not install
Jupyter, and student code must only ever run inside the grader's sandbox. The notebook is read as nbformat
reads it (strict UTF-8 JSON, no byte-order mark, a source that is a string or a list of strings joined as
they are), the cells that run are the ones nbgrader runs (code cells; a cell carrying the grade_id of one of
the course's read-only cells is the course's, since nbgrader puts the course's own copy in its place), and
each cell becomes what IPython hands Python (cells.py); whatever the grader cannot reproduce is refused.
"""

import json

from autograder.grading.intake.cells import Refused, kernel_code
from autograder.grading.intake.text import printable

MAX_CODE_CHARS = 4 << 20  # the code taken from one notebook
MAX_LINE_NOTES = 20  # notes about IPython syntax per notebook; the rest are counted
# The module's first line: Python reads a coding declaration on line 1 or 2 of a file, but the kernel gets
# text, never bytes, so a student's `# coding: utf-7` must not change how the grader's copy is read.
FIRST_LINE = "# -*- coding: utf-8 -*- (the notebook's code cells, each after its # %% line)\n"


def _source(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)  # nbformat's rejoin_lines: the parts as they are, no separator added
    raise ValueError(f"{where}: its source is neither text nor a list of lines")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all different: Jupyter keeps the last of two, other readers the first."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


class _Duplicate(Exception):
    pass


def _is_course_cell(cell: dict, number: int, course_cells: dict[str, bool], seen: set, name: str) -> bool:
    """Whether the cell is one nbgrader replaces by the course's own copy (a locked cell, by its grade_id).

    Only the id counts, as in nbgrader's OverwriteCells: the student's own flags change nothing. nbgrader
    refuses a notebook with an nbgrader cell under an id the course does not have, or one id twice, so the
    grader refuses it too: running or skipping such a cell would each be a guess.
    """
    meta = cell.get("metadata", {})
    nbgrader = meta.get("nbgrader") if isinstance(meta, dict) else None
    if nbgrader is None:
        return False
    if not isinstance(nbgrader, dict):
        raise ValueError(f"{name}: cell {number} has nbgrader metadata that is not a table; nbgrader refuses it")
    grade_id = nbgrader.get("grade_id")
    if not any(nbgrader.get(flag) for flag in ("grade", "solution", "locked", "task")):
        return False
    if not isinstance(grade_id, str) or grade_id not in course_cells:
        shown = printable(repr(grade_id), 40)
        raise ValueError(
            f"{name}: cell {number} is marked as an nbgrader cell under the id {shown}, which is not one of the "
            "course's cells, so nbgrader refuses the notebook; copy your code into the released notebook"
        )
    if grade_id in seen:
        raise ValueError(f"{name}: two cells have the nbgrader id {printable(grade_id, 40)!r}; nbgrader refuses that")
    seen.add(grade_id)
    return course_cells[grade_id]


def read_notebook(raw: bytes, name: str) -> list[dict]:
    """The cells of notebook `name`, read as nbformat reads it; ValueError in one line naming the file if not."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ValueError(f"{name} is not a notebook Jupyter can open: it starts with a byte-order mark; save it again")
    try:
        notebook = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not a notebook: it is not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise ValueError(f"{name} is not a notebook: it is not valid JSON ({error.msg} at {where})") from None
    except _Duplicate as error:
        raise ValueError(
            f"{name} names the key {printable(str(error), 40)!r} twice in one object, which readers take "
            "differently; save the notebook again from Jupyter"
        ) from None
    except RecursionError:  # the decoder recurses per level: a notebook is a few levels deep
        raise ValueError(f"{name} is not a notebook: its JSON is nested too deeply to be a notebook") from None
    if not isinstance(notebook, dict) or "nbformat" not in notebook:
        raise ValueError(f"{name} is not a notebook: valid JSON, but without the nbformat field of a Jupyter notebook")
    version = notebook["nbformat"]
    if type(version) is not int or version not in (3, 4):
        raise ValueError(f"{name} is not a notebook Jupyter can open: nbformat {printable(repr(version), 20)}")
    cells = notebook.get("cells")
    if version == 3 and isinstance(notebook.get("worksheets"), list):
        sheets = [sheet.get("cells") for sheet in notebook["worksheets"] if isinstance(sheet, dict)]
        cells = [cell for sheet in sheets if isinstance(sheet, list) for cell in sheet]
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise ValueError(f"{name} is not a notebook: it has no list of cells")
    return cells


def extract_code(raw: bytes, name: str, course_cells: dict[str, bool] | None = None) -> tuple[str, list[str]]:
    """The code the kernel runs for the student's code cells of notebook `name`, and notes for the feedback.

    Nothing is executed. Markdown and raw cells never run, and a cell whose grade_id course_cells (grade_id ->
    locked) marks locked is the course's (read-only or test cell), since the grader runs its own tests. Each
    cell starts with a `# %% cell N` line so a line in a traceback can be found in the notebook. Raises
    ValueError, in one line naming the file, when raw is not a notebook or a cell is refused (cells.py).
    """
    cells = read_notebook(raw, name)
    parts: list[str] = []
    notes: list[str] = []
    skipped = size = 0
    seen: set[str] = set()
    for number, cell in enumerate(cells, start=1):
        if _is_course_cell(cell, number, course_cells or {}, seen, name) or cell.get("cell_type") != "code":
            skipped += cell.get("cell_type") == "code"
            continue
        source = _source(cell.get("source", cell.get("input", "")), f"{name} is not a notebook: cell {number}")
        size += len(source) + 20
        if size > MAX_CODE_CHARS:  # before any work on it: a cell is bounded where it enters
            raise ValueError(f"{name}: its code cells are over {MAX_CODE_CHARS:,} characters; it is not a stage answer")
        try:
            code, cell_notes = kernel_code(source, f"cell {number}")
        except Refused as error:
            raise ValueError(f"{name}: {error}") from None
        notes += cell_notes
        parts.append(f"# %% cell {number}\n{code}" + ("" if code.endswith("\n") else "\n"))
    if len(notes) > MAX_LINE_NOTES:
        notes[MAX_LINE_NOTES - 1 :] = [f"... and {len(notes) - MAX_LINE_NOTES + 1:,} more IPython-only lines left out"]
    if skipped:
        notes.append(f"skipped the notebook's {skipped} test and read-only cell(s): the grader runs its own tests")
    if not parts:
        notes.append(f"{name} has no code cells of yours")
    code = FIRST_LINE + "\n".join(parts)
    _check_text(code, name)
    return code, [printable(note, 300) for note in notes]


def _check_text(code: str, name: str) -> None:
    """Code Python can compile and a file can hold (JSON escapes can give NUL and lone surrogates)."""
    if "\0" in code:
        raise ValueError(f"{name} contains NUL characters in its code cells; it is not Python source")
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as error:
        line = code.count("\n", 0, error.start) + 1
        raise ValueError(
            f"{name} holds a character that is not valid Unicode (a lone surrogate, {code[error.start]!a}) "
            f"at line {line} of its code; remove it"
        ) from None


def _printable(text: str) -> str:
    """A line quoted in a note, without control characters or lone surrogates (notes end up in HTML and CSV)."""
    return printable(text, 80)
