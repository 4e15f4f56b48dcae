"""The test cells of a stage's nbgrader notebook, rendered from the grader's own checks (stage_checks).

One autograded cell per Check, named after its id and worth its points, asking its boards and accepting
exactly its Case.accept with the grader's type rules (nbgrader_files/helpers.py, embedded as the helpers
cell, does the calling and comparing). So `nbgrader autograde` and `autograde grade` give the same notebook
the same points, check by check. A check asks a notebook only a sample of its boards where it says so
(Check.notebook_cases): nbgrader times each cell as a whole.
"""

from pathlib import Path

from autograder.course import error_hints
from autograder.course.checks import Case, Check, stage_checks
from autograder.course.checks.visible import examples
from autograder.course.oracle import oracle
from autograder.course.stages import Stage
from autograder.grading.judging import MEMO_CALLS_LIMIT, MEMO_CPU_THRESHOLD, PRUNE_CPU_THRESHOLD
from autograder.grading.plan import AGAIN_EMPTY, AGAIN_SECONDS

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
HELPERS = Path(__file__).parent / "nbgrader_files" / "helpers.py"
TABLE_WIDTH = 100  # characters of a line of a hidden test's table


def helpers_source() -> str:
    """The helpers cell, with the grader's error hints embedded (a notebook cannot import the course)."""
    hints = Path(error_hints.__file__).read_text()
    return HELPERS.read_text().replace('_ERROR_HINTS_SOURCE = ""', f"_ERROR_HINTS_SOURCE = {hints!r}", 1).rstrip("\n")


def cell_id(check: Check) -> str:
    """The notebook cell (and nbgrader grade_id) of a check: nbformat allows letters, digits, - and _ only."""
    return "test-" + check.id.replace("/", "-")


def literal(value: object) -> str:
    """Python source for a value students read; sets are sorted so the notebook text is deterministic."""
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(literal(v) for v in sorted(value, key=repr)) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def _compact(value: object) -> str:
    """A value as a table writes it: a Python literal without spaces (a one-item tuple keeps its comma: "(5,)"; a
    space inside a string, as in a board, is the escape \\x20, which the helpers' literal_eval reads back)."""
    if isinstance(value, tuple):
        return "(" + ",".join(map(_compact, value)) + ("," if len(value) == 1 else "") + ")"
    return repr(value).replace(" ", "\\x20") if isinstance(value, str) else repr(value)


def _token(one: Case) -> str:
    call = "".join(one.args[0]).replace(" ", ".") + "".join("," + _compact(arg) for arg in one.args[1:])
    return call + "=" + "|".join(sorted(map(_compact, one.accept)))


def table(cases: list[Case]) -> str:
    """The cases as a raw triple-quoted table (the format is described in the helpers cell)."""
    lines, line = [], ""
    for token in map(_token, cases):
        if line and len(line) + 1 + len(token) > TABLE_WIDTH:
            lines.append(line)
            line = ""
        line = f"{line} {token}" if line else token
    return 'r"""\n' + "\n".join([*lines, line]) + '\n"""'  # raw: the helpers read the escapes (\\x20) themselves


def _points(check: Check) -> str:
    if not check.points:
        return "advisory, no points"
    return f"{check.points} point{'s' if check.points != 1 else ''}"


def _header(check: Check, note: str = "") -> list[str]:
    lines = [f"# {check.id} ({_points(check)}): {check.title}{note}."]
    if not check.visible:
        lines.append("# A hidden test: it runs when your notebook is graded.")
        if check.hint:
            lines.append(f"# If it fails, try this: {check.hint}")
    return lines


def _hidden(check: Check, *lines: str) -> list[str]:
    return [BEGIN_HIDDEN, *lines, f"passed({check.id!r})", END_HIDDEN]


def _shown(answers: frozenset) -> object:
    """The expected answer of a visible example as students read it: the answer, or the set of right ones."""
    if len(answers) > 1:
        return set(answers)
    (answer,) = answers
    return (
        [_shown({item}) if isinstance(item, tuple) else item for item in answer]
        if isinstance(answer, tuple)
        else answer
    )


def _frozen(answer: object) -> object:
    """An EXAMPLES answer as the checks hold it: lists as tuples, a board written as 9 characters as its squares."""
    if isinstance(answer, list):
        return tuple(tuple(item) if isinstance(item, str) and len(item) == 9 else _frozen(item) for item in answer)
    return answer


def _examples_cell(stage: Stage, check: Check) -> list[str]:
    """The visible check: the stage's EXAMPLES rows of its function, judged by the check's own accept sets."""
    rows = [row for row in examples(stage) if row[0] == check.function]
    if len(rows) != len(check.cases):
        raise ValueError(f"{stage.test_path}: {len(rows)} EXAMPLES rows of {check.function}, {len(check.cases)} cases")
    lines = [*_header(check), f"check_examples({check.function}, ["]
    for (_, args, expected, why), one in zip(rows, check.cases, strict=True):
        said = expected if isinstance(expected, set) else [expected]
        if not {_frozen(answer) for answer in said} <= one.accept:
            raise ValueError(f"{stage.test_path}: EXAMPLES says {check.function}{args!r} is {expected!r}; it is not")
        lines.append(f"    ({literal(tuple(args))}, {literal(_shown(one.accept))}, {why!r}),")
    return [*lines, "])", f"passed({check.id!r})"]


def _calls_cell(check: Check) -> list[str]:
    cases = check.notebook_cases()
    note = f"; a notebook asks a fixed sample of {len(cases)} of them" if len(cases) < len(check.cases) else ""
    return [*_header(check, note), *_hidden(check, f"check_hidden({check.function}, {table(cases)})")]


def _memo_cell(stage: Stage, check: Check) -> list[str]:
    """The memo experiment, with the grader's own numbers and the scores of every reachable board."""
    contents = check.memo_contents or {"".join(board): oracle().score(board) for board in oracle().positions}
    scores = table([Case(args=(tuple(board),), accept=frozenset({score})) for board, score in contents.items()])
    (one,) = check.cases
    experiment = f"{check.function!r}, {stage.memo!r}, {_token(one)!r}, {scores}"
    experiment += f", again={AGAIN_EMPTY}, again_seconds={AGAIN_SECONDS}"
    if check.kind == "memo-size":
        exact = ", exact=True" if check.memo_contents is not None else ""  # the keys are prescribed (10_symmetry)
        call = f"check_memo_size(globals(), {experiment}{exact})"
    else:
        limits = f"calls_limit={MEMO_CALLS_LIMIT}, cpu_seconds={MEMO_CPU_THRESHOLD}"
        call = f"check_memo_speed(globals(), {experiment}, {limits})"
    return [*_header(check), *_hidden(check, call)]


def _prune_cell(check: Check) -> list[str]:
    """The prune experiment: the empty board and the nine openings, within the grader's CPU threshold."""
    (one,) = check.cases
    boards = [one.args[0], *oracle().children(one.args[0]).values()]
    cases = table([Case(args=(board,), accept=frozenset({oracle().score(board)})) for board in boards])
    call = f"check_prunes({check.function}, {cases}, cpu_seconds={PRUNE_CPU_THRESHOLD})"
    return [*_header(check), *_hidden(check, call)]


def test_cells(stage: Stage) -> list[tuple[Check, str]]:
    """(check, the source of its cell) for every check of the stage, in the grader's order."""
    cells = []
    for check in stage_checks(stage.id):
        if check.visible:
            lines = _examples_cell(stage, check)
        elif check.kind == "calls":
            lines = _calls_cell(check)
        elif check.kind in ("memo-size", "memo-speed"):
            lines = _memo_cell(stage, check)
        elif check.kind == "prune":
            lines = _prune_cell(check)
        elif check.kind == "unchanged":
            note = " (every call of the cells above)"
            lines = [*_header(check, note), *_hidden(check, "check_unchanged()")]
        else:
            raise ValueError(f"{stage.id}: check {check.id} is of a kind notebooks do not know: {check.kind}")
        cells.append((check, "\n".join(lines)))
    ids = [cell_id(check) for check, _ in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{stage.id}: two checks share a notebook cell id: {ids}")
    return cells
