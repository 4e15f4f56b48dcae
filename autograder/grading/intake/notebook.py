"""The code of a submitted notebook, as Python source, read without running anything.

Used by `autograde grade`: standard library only, since the grader and the Gradescope bundle do not install
Jupyter, and student code must only ever run inside the grader's sandbox.
"""

import ast
import json
import re

from autograder.grading.intake.text import printable

# `x = !ls` and `x = %time f()`: IPython's assignment forms of shell escapes and magics. Each pattern
# is linear in the line's length: no two neighbouring repeats can match the same characters (a
# `\s*` before a class holding `\s` made a line of a million spaces backtrack for hours).
_MAGIC_ASSIGNMENT = re.compile(r"[\w.,\s\[\]()*]+=\s*[!%]")
_COMPARISON = re.compile(r"\s*[\w.]+\s*[!=]=")
MAX_CODE_CHARS = 4 << 20  # the code taken from one notebook (a dropped line grows to `pass  # ... dropped`)
MAX_LINE_NOTES = 20  # notes about dropped lines per notebook; the rest are counted


def _ipython_only(line: str) -> str | None:
    """What kind of IPython-only syntax line is, or None for a plain Python line."""
    text = line.strip()
    if text.startswith("%"):
        return "IPython magic"
    if text.startswith("!"):
        return "shell escape"
    if _MAGIC_ASSIGNMENT.match(line) and not _COMPARISON.match(line):
        return "IPython magic" if text.split("=", 1)[1].strip().startswith("%") else "shell escape"
    if text.startswith("?") or (text.endswith("?") and not text.startswith("#")):
        return "IPython help request"
    if "get_ipython(" in line and not text.startswith("#"):
        return "get_ipython() call"
    return None


def _source(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise ValueError(f"{where}: its source is neither text nor a list of lines")


def _is_course_cell(cell: dict) -> bool:
    """nbgrader test cells and read-only cells come from the course, not the student: the grader runs its own."""
    meta = cell.get("metadata", {})
    nbgrader = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    if not isinstance(nbgrader, dict) or nbgrader.get("solution"):
        return False
    return bool(nbgrader.get("grade") or nbgrader.get("locked"))


def _shorten(text: str, width: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 3] + "..."


def extract_code(raw: bytes, name: str) -> tuple[str, list[str]]:
    """The student's code cells of notebook `name` joined into Python source, and notes for the feedback.

    Nothing is executed. Markdown and raw cells are skipped, and so are the course's own test and
    read-only cells (nbgrader metadata), since the grader runs its own tests. IPython-only lines
    (magics, shell escapes, get_ipython(), help requests) become `pass` at the same indentation, so
    the code around them still parses and line numbers keep their place; a cell magic drops its
    cell. Each cell starts with a `# %% cell N` line so a line in a traceback can be found in the
    notebook. Raises ValueError, in one line naming the file, when raw is not a notebook.
    """
    try:
        notebook = json.loads(raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw)
    except UnicodeDecodeError as error:
        raise ValueError(f"{name} is not a notebook: it is not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise ValueError(f"{name} is not a notebook: it is not valid JSON ({error.msg} at {where})") from None
    except RecursionError:  # the decoder recurses per level: a notebook is a few levels deep
        raise ValueError(f"{name} is not a notebook: its JSON is nested too deeply to be a notebook") from None
    if not isinstance(notebook, dict) or "nbformat" not in notebook:
        raise ValueError(f"{name} is not a notebook: valid JSON, but without the nbformat field of a Jupyter notebook")
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        sheets = [sheet.get("cells") for sheet in notebook["worksheets"] if isinstance(sheet, dict)]
        cells = [cell for sheet in sheets if isinstance(sheet, list) for cell in sheet]
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        raise ValueError(f"{name} is not a notebook: it has no list of cells")

    parts: list[str] = []
    notes: list[str] = []
    skipped = size = 0
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        if _is_course_cell(cell):
            skipped += 1
            continue
        source = _source(cell.get("source", cell.get("input", "")), f"{name} is not a notebook: cell {number}")
        lines = source.splitlines()
        if lines and lines[0].lstrip().startswith("%%"):
            notes.append(
                f"cell {number}: dropped the whole cell, which starts with the cell magic "
                f"`{_printable(_shorten(lines[0]))}`"
            )
            lines = ["pass  # cell magic dropped"] + [""] * (len(lines) - 1)
        elif not _parses(source) or "get_ipython(" in source:
            inside_strings = _string_interiors(source)
            for index, line in enumerate(lines):
                kind = None if index in inside_strings else _ipython_only(line)
                if kind:
                    notes.append(f"cell {number}: dropped the {kind} `{_printable(_shorten(line))}`")
                    indent = line[: len(line) - len(line.lstrip())]
                    lines[index] = f"{indent}pass  # {kind} dropped"
        parts.append("\n".join([f"# %% cell {number}", *lines]) + "\n")
        size += len(parts[-1]) + 1
        if size > MAX_CODE_CHARS:
            raise ValueError(f"{name}: its code cells are over {MAX_CODE_CHARS:,} characters; it is not a stage answer")
    if len(notes) > MAX_LINE_NOTES:
        notes[MAX_LINE_NOTES - 1 :] = [f"... and {len(notes) - MAX_LINE_NOTES + 1:,} more IPython-only lines dropped"]
    if skipped:
        notes.append(f"skipped the notebook's {skipped} test and read-only cell(s): the grader runs its own tests")
    if not parts:
        notes.append(f"{name} has no code cells of yours")
    code = "\n".join(parts)
    _check_text(code, name)
    return code, notes


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


_QUOTE_OR_COMMENT = re.compile(r"[#'\"]")
# Inside a string: an escaped character (a backslash-newline too), the closing quotes, or (for one quote) a newline.
_STRING_STEP = {
    quote: re.compile(r"\\.|" + re.escape(quote) + ("" if len(quote) == 3 else r"|\n"), re.DOTALL)
    for quote in ("'", '"', "'" * 3, '"' * 3)
}


def _string_interiors(source: str) -> set[int]:
    """Indexes of the lines that lie inside a multi-line string (a docstring line may start with `%`).

    One pass over quotes, comments and backslashes, linear in the source's length (the tokenize module
    takes minutes on one line of a few thousand spaces before a `!`). A string left open at the end
    gives no lines: the lines after its quote are judged one by one.
    """
    inside: set[int] = set()
    pos = counted = line = 0
    while match := _QUOTE_OR_COMMENT.search(source, pos):
        line += source.count("\n", counted, match.start())
        counted = pos = match.end()
        if match.group() == "#":
            pos = source.find("\n", pos)
            if pos < 0:
                break
            continue
        quote = match.group() * 3 if source.startswith(match.group() * 2, pos) else match.group()
        pos += len(quote) - 1
        step, first = _STRING_STEP[quote], line
        while (found := step.search(source, pos)) is not None and found.group()[0] == "\\":
            pos = found.end()
        if found is None:
            break
        pos = found.end()
        if found.group() == "\n":  # a one-quote string ends with its line (unfinished): nothing inside
            pos -= 1
            continue
        line += source.count("\n", counted, pos)
        counted = pos
        inside.update(range(first + 1, line + 1))
    return inside


def _parses(source: str) -> bool:
    """Plain Python needs no rewriting (a `%` or `!` inside a string must stay as it is)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deep nesting: the parser gives up
        return False
    return True
