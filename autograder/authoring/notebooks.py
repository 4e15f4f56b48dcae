"""Jupyter notebooks for nbgrader courses, made from the same single source as the .py stages.

Two halves, with different dependencies:

- Generation (used by `autograde build`): one nbgrader *source notebook* per stage, in the course
  folder nbgrader/, plus its nbgrader_config.py. The JSON is written with the standard library in
  exactly the layout nbformat writes (sorted keys, indent 1, sources as lists of lines, fixed cell
  ids, no timestamps), so `autograde build --check` can compare byte for byte and the build does not
  need Jupyter installed. Expected answers of the hidden tests are computed here, from the reference
  solutions, and embedded as literals.
- `extract_code` (used by `autograde grade`): the student's code cells of a submitted notebook as
  Python source. Standard library only and it runs nothing: the grader and the Gradescope bundle do
  not install Jupyter, and student code must only ever run inside the grader's sandbox.
"""

import ast
import json
import random
import re
import types
from collections.abc import Callable

from autograder.course import stages as course
from autograder.course.stages import STAGES, Stage

SCHEMA_VERSION = 3  # nbgrader's cell metadata schema
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
COURSE_ID = "tictactoe-minimax"
EMPTY = " " * 9
REACHABLE_POSITIONS = 5478  # a fact of the course (COURSE.md); checked against the enumeration below


def nbgrader_root():
    """The course folder an instructor runs nbgrader in (looked up late: tests move course.ROOT)."""
    return course.ROOT / "nbgrader"


def notebook_path(stage: Stage):
    return nbgrader_root() / "source" / stage.id / f"{stage.id}.ipynb"


# --------------------------------------------------------------------------------------------------
# Reference answers
# --------------------------------------------------------------------------------------------------


def _reference(stage: Stage) -> types.ModuleType:
    """A fresh module holding the stage's reference solution (trusted code from solutions/)."""
    from autograder.authoring.build import solution_code  # late: build.py imports this module

    module = types.ModuleType(f"reference_{stage.module}")
    exec(compile(solution_code(stage.solution_path.read_text()), str(stage.solution_path), "exec"), module.__dict__)
    return module


def _cache(module: types.ModuleType, name: str) -> None:
    """Make module.name remember its answers per board.

    The reference recursions look their own name up at every call, so caching the module-level
    name makes whole-game searches instant while every answer still comes from the reference code.
    """
    plain = getattr(module, name)
    known: dict[str, object] = {}

    def cached(board):
        key = "".join(board)
        if key not in known:
            known[key] = plain(board)
        result = known[key]
        return list(result) if isinstance(result, list) else result

    setattr(module, name, cached)


def _reachable(winner: Callable) -> list[str]:
    """Every position that can occur in a real game, the empty board and finished boards included."""
    seen: set[str] = set()

    def visit(board: list[str]) -> None:
        key = "".join(board)
        if key in seen:
            return
        seen.add(key)
        if winner(board) is not None or " " not in board:
            return
        mark = "X" if board.count("X") == board.count("O") else "O"
        for square in range(9):
            if board[square] == " ":
                board[square] = mark
                visit(board)
                board[square] = " "

    visit(list(EMPTY))
    return sorted(seen)


def _best_squares(board: str, score: Callable) -> set[int]:
    """The empty squares whose score is best for the player to move (any of them is a right answer)."""
    squares = [i for i, square in enumerate(board) if square == " "]
    mover = "X" if board.count("X") == board.count("O") else "O"
    scores = {i: score(list(board[:i] + mover + board[i + 1 :])) for i in squares}
    best = max(scores.values()) if mover == "X" else min(scores.values())
    return {i for i in squares if scores[i] == best}


def _sample(rng: random.Random, pool: list[str], count: int) -> list[str]:
    return sorted(rng.sample(pool, min(count, len(pool))))


def _search_sample(rng: random.Random, pool: list[str], shown: set[str]) -> list[str]:
    """Boards for checks whose cost grows with the factorial of the empty squares (plain searches).

    The empty board once (unless a visible example already checks it), a few deep boards and many
    shallow ones: about a second in reference code, so a straightforward student solution stays
    well inside nbgrader's per-cell timeout.
    """
    deep = [b for b in pool if b.count(" ") == 7]
    shallow = [b for b in pool if b.count(" ") <= 6]
    boards = [EMPTY] if EMPTY in pool and EMPTY not in shown else []
    return boards + _sample(rng, deep, 5) + _sample(rng, shallow, 40)


def _hidden_cases(
    stage: Stage, examples: list[tuple[str, tuple, object, str]]
) -> dict[str, list[tuple[tuple, object]]]:
    """Per function: hidden (args, expected) pairs, expected computed from the reference.

    Boards of costly searches already among the visible examples are not searched again.
    """
    shown = {args[0] for _name, args, _expected, _why in examples}
    ref = _reference(stage)
    positions = _reachable(ref.winner)
    assert len(positions) == REACHABLE_POSITIONS, f"{len(positions)} reachable positions, expected 5,478"
    unfinished = [b for b in positions if ref.winner(list(b)) is None and " " in b]
    rng = random.Random(f"hidden tests of {stage.id}")  # str seeds are stable across runs and Pythons
    cases: dict[str, list[tuple[tuple, object]]] = {}
    if stage.id == "01_rules":
        cases["winner"] = [((b,), ref.winner(list(b))) for b in _sample(rng, positions, 160)]
        cases["to_move"] = [((b,), ref.to_move(list(b))) for b in _sample(rng, positions, 160)]
    elif stage.id == "02_count_games":
        _cache(ref, "count_games")
        cases["count_games"] = [((b,), ref.count_games(list(b))) for b in _search_sample(rng, positions, shown)]
    elif stage.id in ("03_minimax", "04_memoization"):
        _cache(ref, "score")
        if stage.id == "03_minimax":
            scored, moves = _search_sample(rng, positions, shown), _search_sample(rng, unfinished, shown)
        else:  # memoized: cheap, so many more boards
            others = [b for b in unfinished if b != EMPTY]
            scored, moves = _sample(rng, positions, 300), [EMPTY] + _sample(rng, others, 120)
        cases["score"] = [((b,), ref.score(list(b))) for b in scored]
        cases["choose_move"] = [((b,), _best_squares(b, ref.score)) for b in moves]
    elif stage.id == "05_winning_square":
        boards = _sample(rng, unfinished, 120)
        cases["winning_square"] = [((b, mark), _completing(ref, b, mark)) for b in boards for mark in "XO"]
    elif stage.id == "06_count_results":
        _cache(ref, "count_results")
        cases["count_results"] = [((b,), ref.count_results(list(b))) for b in _search_sample(rng, positions, shown)]
    elif stage.id == "07_quickest_move":
        _cache(ref, "quick_score")
        forced = [b for b in unfinished if _mover_wins(ref.quick_score, b)]
        deep = [b for b in forced if b.count(" ") >= 7]
        shallow = [b for b in forced if b.count(" ") < 7]
        boards = _sample(rng, deep, 6) + _sample(rng, shallow, 40)
        cases["quickest_move"] = [((b,), _best_squares(b, ref.quick_score)) for b in boards]
    else:
        raise KeyError(f"no hidden tests are defined for stage {stage.id}")
    return cases


def _completing(ref: types.ModuleType, board: str, mark: str) -> set[int] | int:
    """Every square where mark completes a line at once, or -1; checked against the reference."""
    squares = {i for i in range(9) if board[i] == " " and ref.winner(list(board[:i] + mark + board[i + 1 :])) == mark}
    answer = ref.winning_square(list(board), mark)
    assert answer in (squares or {-1}), f"reference winning_square({board!r}, {mark!r}) gave {answer}"
    return squares or -1


def _mover_wins(quick_score: Callable, board: str) -> bool:
    value = quick_score(list(board))
    return value > 0 if board.count("X") == board.count("O") else value < 0


# --------------------------------------------------------------------------------------------------
# Visible examples
# --------------------------------------------------------------------------------------------------

# Used only while a stage's visible test file has no EXAMPLES table yet; facts from COURSE.md.
FALLBACK_EXAMPLES: dict[str, list[tuple[str, tuple, object, str]]] = {
    "01_rules": [
        ("winner", ("XXXOO    ",), "X", "X has the top row"),
        ("winner", ("OOOXX X  ",), "O", "O has the top row"),
        ("winner", (EMPTY,), None, "nobody has won on the empty board"),
        ("to_move", (EMPTY,), "X", "X moves first"),
        ("to_move", ("X        ",), "O", "O answers X's first mark"),
    ],
    "02_count_games": [
        ("count_games", (EMPTY,), 255168, "every game of tic-tac-toe"),
        ("count_games", ("X        ",), 27732, "X took a corner"),
        ("count_games", ("XXXOO    ",), 1, "a finished board is one game"),
    ],
    "03_minimax": [
        ("score", (EMPTY,), 0, "perfect play draws"),
        ("score", ("XXOO     ",), 1, "X on 0 and 1, O on 2 and 3: X can force a win"),
        ("choose_move", ("XXOO     ",), 4, "the only winning move"),
        ("choose_move", ("OO  X  X ",), 2, "only square 2 avoids losing"),
        ("choose_move", ("XOXXOO   ",), 6, "X completes the left column"),
    ],
    "05_winning_square": [
        ("winning_square", ("XX OO    ", "X"), 2, "X completes the top row"),
        ("winning_square", ("XX OO    ", "O"), 5, "O completes the middle row"),
        ("winning_square", (EMPTY, "X"), -1, "no line can be completed yet"),
    ],
    "06_count_results": [
        ("count_results", (EMPTY,), [131184, 77904, 46080], "all games: X wins, O wins, draws"),
        ("count_results", ("XXXOO    ",), [1, 0, 0], "a finished board is one game, won by X"),
    ],
    "07_quickest_move": [
        ("quickest_move", ("O    OXX ",), 8, "X wins at once on square 8"),
    ],
}
FALLBACK_EXAMPLES["04_memoization"] = FALLBACK_EXAMPLES["03_minimax"]


def visible_examples(stage: Stage) -> list[tuple[str, tuple, object, str]]:
    """The stage's EXAMPLES table from its visible test file (literal tuples), else the fallback above."""
    path = stage.test_path
    if path.exists():
        for node in ast.parse(path.read_text()).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            target = node.target if isinstance(node, ast.AnnAssign) else target
            if isinstance(target, ast.Name) and target.id == "EXAMPLES" and node.value is not None:
                return [tuple(row) for row in ast.literal_eval(node.value)]
    return FALLBACK_EXAMPLES[stage.id]


def _helpers() -> dict:
    """The notebook's own check helpers, so generation judges examples by exactly the notebook's rule."""
    namespace: dict = {}
    exec(HELPERS, namespace)
    return namespace


def _verified_examples(stage: Stage) -> list[tuple[str, tuple, object, str]]:
    """Visible examples, each confirmed against the reference: a wrong example must break the build."""
    ref = _reference(stage)
    for name in ("count_games", "score", "count_results", "quick_score"):
        if hasattr(ref, name):
            _cache(ref, name)
    examples = visible_examples(stage)
    for name, args, expected, _why in examples:
        function = getattr(ref, name, None)
        if callable(function):
            got = function(list(args[0]), *args[1:])
            if not _helpers()["_accepts"](expected, got):
                raise ValueError(
                    f"{stage.test_path}: EXAMPLES says {name}{args!r} is {expected!r}; the reference says {got!r}"
                )
    return examples


# --------------------------------------------------------------------------------------------------
# Notebook cells
# --------------------------------------------------------------------------------------------------

HELPERS = '''\
# Helpers for the test cells below (read-only). Run this cell once before the tests.


def show(board):
    """The board drawn as three rows, for messages."""
    rows = [" " + " | ".join(board[row * 3 : row * 3 + 3]) for row in range(3)]
    return "\\n" + "\\n---+---+---\\n".join(rows) + "\\n"


def _call(function, args):
    """Call function on a fresh list made from the board string; say if it changed the board."""
    text = f"{function.__name__}({', '.join(repr(arg) for arg in args)})"
    board = list(args[0])
    got = function(board, *args[1:])
    if board != list(args[0]):
        raise AssertionError(f"{text} changed the board it was given to {''.join(board)!r}; undo every mark you try")
    if isinstance(got, tuple):
        got = list(got)
    return text, got


def _accepts(expected, got):
    """A set lists every acceptable answer. Types count: True is not 1, 1.0 is not 1, "X " is not "X"."""
    if isinstance(expected, (set, frozenset)):
        return any(_accepts(answer, got) for answer in expected)
    if isinstance(expected, list):
        return type(got) is list and len(got) == len(expected) and all(map(_accepts, expected, got))
    return type(got) is type(expected) and got == expected


def check(function, args, expected, why=""):
    """A visible check: function(list(args[0]), *args[1:]) must return expected (or one of a set)."""
    text, got = _call(function, args)
    if not _accepts(expected, got):
        wanted = "one of " + ", ".join(map(repr, sorted(expected))) if isinstance(expected, set) else repr(expected)
        raise AssertionError(f"{text} returned {got!r}; expected {wanted} ({why}){show(args[0])}")


def check_hidden(function, cases):
    """A hidden check: the message shows the board and the answer given, never the expected one."""
    for args, expected in cases:
        text, got = _call(function, args)
        if not _accepts(expected, got):
            raise AssertionError(f"{text} returned {got!r}, which is not right for this board{show(args[0])}")'''


def _literal(value: object) -> str:
    """Python source for a table value; sets are sorted so the notebook text is deterministic."""
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(_literal(v) for v in sorted(value, key=repr)) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def _hidden_block(function: str, cases: list[tuple[tuple, object]]) -> list[str]:
    rows = [f"    ({_literal(args)}, {_literal(expected)})," for args, expected in cases]
    return [BEGIN_HIDDEN, f"check_hidden({function}, [", *rows, "])", END_HIDDEN]


def _memo_checks(points: int) -> str:
    """Stage 4's memo cell: scoring the empty board fills memo with every reachable board, once each."""
    lines = [
        f"# memo ({points} points): score must write every board it scores into memo, finished ones included.",
        "memo.clear()",
        'check(score, (" " * 9,), 0, "the empty board: perfect play draws")',
        f"assert len(memo) == {REACHABLE_POSITIONS}, (",
        '    f"after memo.clear() and score of the empty board, memo holds {len(memo):,} boards; it should hold "',
        f'    "{REACHABLE_POSITIONS:,}: every board reachable from the empty board, finished ones included, once each"',
        ")",
        "# With memo full, scoring the empty board again must look it up instead of searching: count the searches.",
        "_winner, _calls = winner, [0]",
        "",
        "",
        "def winner(board):",
        "    _calls[0] += 1",
        "    return _winner(board)",
        "",
        "",
        "try:",
        '    check(score, (" " * 9,), 0, "the empty board again")',
        "finally:",
        "    winner = _winner",
        'assert _calls[0] < 10, f"score searched again ({_calls[0]} calls to winner) though memo held the board"',
        BEGIN_HIDDEN,
        'assert set(memo.values()) <= {-1, 0, 1}, "memo should map boards to their scores 1, 0 or -1"',
        f'assert len(memo) == {REACHABLE_POSITIONS}, "scoring a board already in memo changed the size of memo"',
        END_HIDDEN,
        'print("memo: all checks passed")',
    ]
    return "\n".join(lines)


def _split_points(total: int, parts: int) -> list[int]:
    """total split into parts that differ by at most one, larger first, adding up exactly."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


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
        if not skipping:
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


def _cell(cell_type: str, cell_id: str, source: str, nbgrader: dict | None = None) -> dict:
    cell: dict = {"cell_type": cell_type, "id": cell_id, "metadata": {}, "source": source}
    if nbgrader is not None:
        cell["metadata"]["nbgrader"] = {"grade_id": cell_id, "schema_version": SCHEMA_VERSION, **nbgrader}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


READ_ONLY = {"grade": False, "locked": True, "solution": False}


def source_notebook(stage: Stage) -> dict:
    """The stage's nbgrader source notebook as a JSON-ready dict (nbformat 4.5, nbgrader schema 3)."""
    examples = _verified_examples(stage)
    hidden = _hidden_cases(stage, examples)
    tests = list(stage.functions) + (["memo"] if stage.id == "04_memoization" else [])
    points = dict(zip(tests, _split_points(stage.points, len(tests)), strict=True))
    cells = [
        _cell("markdown", "instructions", _instructions(stage), READ_ONLY),
        _cell("markdown", "how-to", _how_to(stage), READ_ONLY),
        _cell(
            "code",
            "answer",
            stage.solution_path.read_text().rstrip("\n"),
            {"grade": False, "locked": False, "solution": True},
        ),
        _cell("code", "helpers", HELPERS, READ_ONLY),
    ]
    for name in tests:
        if name == "memo":
            source = _memo_checks(points[name])
        else:
            lines = [f"# {name} ({points[name]} points). Run your code cell and the helpers cell first."]
            lines += [
                f"check({name}, {_literal(args)}, {_literal(expected)}, {why!r})"
                for function, args, expected, why in examples
                if function == name
            ]
            lines += _hidden_block(name, hidden[name])
            lines.append(f'print("{name}: all checks passed")')
            source = "\n".join(lines)
        test = {"grade": True, "locked": True, "points": points[name], "solution": False}
        cells.append(_cell("code", f"test-{name.replace('_', '-')}", source, test))
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


CONFIG = f'''\
"""nbgrader configuration of the tic-tac-toe course. Run nbgrader commands from this folder.

Generated by `autograde build` from autograder/authoring/notebooks.py: edit it there, not here.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades
from traitlets import List

c = get_config()  # noqa: F821 (traitlets defines it when it loads this file)

HERE = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "{COURSE_ID}"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")

# Each test cell runs in well under a second with reference code; 30 s per cell leaves room for slow
# but correct student code and bounds an endless loop (it costs 30 s for every cell that calls it).
c.Execute.timeout = 30


class ClearHiddenTestsAndTracebacks(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, after cutting the error tracebacks of those cells to their last line.

    A traceback quotes the lines around the failing one, which would show hidden test code; the
    last line keeps the assertion message, written to name the board but never the expected answer.
    """

    # Declared configurable only to silence a spurious "not recognized" warning from the HTML exporter.
    display_data_priority = List(["text/html", "text/plain"]).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and self.begin_test_delimeter in cell.source:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [output["ename"] + ": " + output["evalue"]]
        return super().preprocess_cell(cell, resources, index)


# nbgrader's generated feedback shows hidden tests by default: remove them, and their tracebacks.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTestsAndTracebacks, CSSHTMLHeaderPreprocessor]
'''


def render_config(_stage: Stage) -> str:
    return CONFIG


# Appended to autograder.authoring.build.GENERATORS: one notebook per stage, and the course folder's config.
GENERATORS = [
    (lambda: list(STAGES), notebook_path, render_notebook),
    (lambda: [STAGES[0]], lambda _stage: nbgrader_root() / "nbgrader_config.py", render_config),
]
