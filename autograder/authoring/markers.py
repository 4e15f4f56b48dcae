"""The solution markers of solutions/: one format, read here only.

A reference solution marks each part a student writes with `### BEGIN SOLUTION` and `### END SOLUTION`
lines (nbgrader's markers, so the same files feed the .py starters and the nbgrader notebooks).
"""

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
# The same replacement nbgrader puts in a released notebook, so .py and notebook starters read alike.
PROMPT = ("# YOUR CODE HERE", "raise NotImplementedError()")


class MarkerError(ValueError):
    """A solution file whose solution markers are missing, nested or unbalanced."""


def strip_solutions(source: str, where: str) -> str:
    """Replace every solution region of source by nbgrader's prompt, keeping its indentation."""
    out: list[str] = []
    begin_line = None
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        text = line.strip()
        if text == BEGIN:
            if begin_line is not None:
                raise MarkerError(f"{where}:{number}: {BEGIN} inside the region opened at line {begin_line}")
            begin_line = number
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(f"{indent}{prompt}\n" for prompt in PROMPT)
        elif text == END:
            if begin_line is None:
                raise MarkerError(f"{where}:{number}: {END} without a {BEGIN} before it")
            begin_line = None
        elif BEGIN in line or END in line:
            raise MarkerError(f"{where}:{number}: a solution marker must stand alone on its line")
        elif begin_line is None:
            out.append(line)
    if begin_line is not None:
        raise MarkerError(f"{where}:{begin_line}: {BEGIN} is never closed by {END}")
    if not any(line.strip() == BEGIN for line in source.splitlines()):
        raise MarkerError(f"{where}: no {BEGIN} region; a starter would give the whole answer away")
    return "".join(out)


def solution_code(source: str) -> str:
    """The complete module of a reference solution, with the marker lines removed."""
    return "".join(line for line in source.splitlines(keepends=True) if line.strip() not in (BEGIN, END))


def solution_body(source: str) -> list[tuple[int, str]]:
    """(line number, line) of every line inside a solution region: what a student has to write."""
    inside, body = False, []
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
        elif inside:
            body.append((number, line))
    return body
