"""Adding a stage, proved: an eleventh stage added to a copy of the course through the README's checklist only.

The stage, 11_free_squares (bonus), asks for one function of its own, free_squares(board), whose right answers
are the reference solution's (oracle REFERENCE). It is written into a temporary copy of the course's tracked
files as exactly the pieces the checklist names: its manifest entry, its reference solution, its README and
visible tests, its checks module and its variants. Nothing else of the copy is edited; then `autograde build`,
`verify`, `grade`, `release` and the stage's nbgrader notebook must all handle it, each run in a subprocess with
the copy as its course (the real checkout is never written to).
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.course.stages import ROOT, STAGE_BY_ID

pytestmark = pytest.mark.slow

STAGE = "11_free_squares"
MODULE = "free_squares"
POINTS = 4  # 1 for the visible examples, 3 for the one hidden check

# The manifest entry, appended to BONUS_STAGES in autograder/course/stages.py.
MANIFEST_ENTRY = f'''\
    Stage(
        id="{STAGE}",
        title="Bonus: the free squares",
        module="{MODULE}",
        checks="s{STAGE}",
        contract=(Function("{MODULE}", REFERENCE, "squares"),),
        points={POINTS},
        stars=0,
        bonus=True,
        hints=(
            "A square is free when it holds ' '.",
            "Go through the squares 0 to 8 in order, so that the list comes out sorted.",
        ),
    ),
'''


def _given() -> str:
    """Stage 1's helpers as every later stage's module gives them (autograde build checks each copy): read from
    stage 5's reference, from its "Given" comment to its own function."""
    stage = STAGE_BY_ID["05_winning_square"]
    text = stage.solution_path.read_text(encoding="utf-8")
    return text[text.index("# Given, complete") : text.index(f"\n\n\ndef {stage.functions[0]}(")] + "\n"


GIVEN = _given()


def module_text(docstring: str, body: str) -> str:
    """A stage module: its docstring, stage 1's helpers, and free_squares with the given body."""
    return (
        f'"""{docstring}"""\n\n{GIVEN}\n\ndef free_squares(board):\n'
        '    """Return the sorted list of the empty squares of board."""\n' + textwrap.indent(body, "    ")
    )


SOLUTION = module_text(
    "Bonus stage 11: the free squares.\n\nEvery move is played on a free square: list them.\n",
    '### BEGIN SOLUTION\nreturn [square for square in range(9) if board[square] == " "]\n### END SOLUTION\n',
)
VARIANTS = {
    "wrong_taken_squares.py": (
        "Lists the taken squares instead.\n",
        'return [s for s in range(9) if board[s] != " "]\n',
    ),
    "wrong_last_square_missed.py": ("Never looks at square 8.\n", 'return [s for s in range(8) if board[s] == " "]\n'),
    "wrong_reversed.py": ("Lists them from 8 down.\n", 'return [s for s in range(8, -1, -1) if board[s] == " "]\n'),
    "ok_enumerate.py": ("With enumerate.\n", 'return [s for s, mark in enumerate(board) if mark == " "]\n'),
}

README = f"""\
# Bonus stage 11 — The free squares

You edit one file: `{MODULE}.py`. `LINES`, `winner(board)` and `to_move(board)` are given, complete.

## What to write

`{MODULE}(board)` returns the list of the empty squares of board, in order from 0 to 8, and leaves the board as
it found it.

## Check your work

    pytest assignments/{STAGE}
"""

HINTS = """\
A square is free when it holds ' '.
---
The answer: [square for square in range(9) if board[square] == ' '].
"""

VISIBLE_TESTS = f'''\
"""Visible tests for bonus stage 11: {MODULE}(board)."""

import coursetest
import pytest
import {MODULE}

# (function, arguments, expected answer, why). The first argument is the board.
EXAMPLES = [
    ("{MODULE}", ("         ",), [0, 1, 2, 3, 4, 5, 6, 7, 8], "every square of the empty board is free"),
    ("{MODULE}", ("X   O    ",), [1, 2, 3, 5, 6, 7, 8], "two squares are taken"),
    ("{MODULE}", ("XOXXOOOXX",), [], "a full board has no free square"),
]


@pytest.mark.parametrize(("function_name", "args", "expected", "why"), EXAMPLES, ids=[row[3] for row in EXAMPLES])
def test_example(function_name, args, expected, why):
    result = getattr({MODULE}, function_name)(list(args[0]), *args[1:])
    assert coursetest.matches(result, expected), coursetest.wrong_answer(function_name, args, result, expected, why)
'''

CHECKS = f'''\
"""Hidden checks of {STAGE} (bonus): the free squares of a fixed sample of boards."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import Oracle


def checks(oracle: Oracle) -> list[Check]:
    boards = sample(oracle.positions, 40, "free/sample")
    return [
        Check(
            id="{MODULE}/sample",
            function="{MODULE}",
            title="{MODULE} on a fixed sample of 40 reachable boards",
            points={POINTS - 1},
            cases=[case(board, accept=oracle.answer("{MODULE}", board)) for board in boards],
            hint="Keep every square that holds ' ', from 0 to 8.",
        ),
        unchanged("{MODULE}"),
    ]
'''


def stage_files() -> dict[str, str]:
    """Every file the new stage adds, by its path in the course (the manifest entry is an edit, apart)."""
    files = {
        f"solutions/{STAGE}/{MODULE}.py": SOLUTION,
        f"assignments/{STAGE}/README.md": README,
        f"assignments/{STAGE}/test_{MODULE}.py": VISIBLE_TESTS,
        f"assignments/{STAGE}/hints.txt": HINTS,
        f"autograder/course/checks/s{STAGE}.py": CHECKS,
    }
    for name, (docstring, body) in VARIANTS.items():
        files[f"tests/variants/{STAGE}/{name}"] = module_text(docstring, body)
    return files


MANIFEST = "autograder/course/stages.py"
# Where the entry goes: the end of BONUS_STAGES, just before the line that joins the two tuples.
BONUS_END = "\n)\nCORE_STAGES = STAGES\n"


def add_stage(course: Path) -> list[str]:
    """Write the stage into the course at course, only through the checklist's places; return the paths touched."""
    manifest = course / MANIFEST
    text = manifest.read_text()
    assert text.count(BONUS_END) == 1, "the manifest's BONUS_STAGES no longer ends where the test expects"
    manifest.write_text(text.replace(BONUS_END, "\n" + MANIFEST_ENTRY + BONUS_END[1:]))
    for relative, content in stage_files().items():
        path = course / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return [MANIFEST, *stage_files()]


def run(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`autograde ARGS` with the copy as the course: its own package first on the path, run from its root."""
    env = {**os.environ, "PYTHONPATH": str(course), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "autograder", *args], cwd=course, env=env, capture_output=True, text=True, timeout=300
    )
    if check:
        assert done.returncode == 0, f"autograde {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done


def python(course: Path, code: str) -> str:
    """Run code with the copy's package (not the checkout's) and return what it printed."""
    env = {**os.environ, "PYTHONPATH": str(course), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=course, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course's tracked files with the stage added, after `autograde build`."""
    root = tmp_path_factory.mktemp("extra") / "course"
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]  # new files not yet added too
    tracked = subprocess.run(listing, cwd=ROOT, capture_output=True, check=True).stdout
    for relative in tracked.decode().split("\0"):
        source = ROOT / relative
        if relative and source.is_file():  # a file deleted in the working tree stays deleted
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / relative)
    add_stage(root)
    built = run(root, "build")
    assert f"wrote assignments/{STAGE}/{MODULE}.py" in built.stdout
    assert f"wrote nbgrader/source/{STAGE}/{STAGE}.ipynb" in built.stdout
    return root


def test_the_build_writes_the_stage_and_then_is_in_sync(course):
    """The build wrote the new stage's starter and notebook, nothing of the other stages, and --check is clean."""
    assert run(course, "build", "--check").stdout == ""
    starter = (course / "assignments" / STAGE / f"{MODULE}.py").read_text()
    assert "raise NotImplementedError()" in starter and "range(9)" not in starter.split("def free_squares")[1]
    assert not (ROOT / "assignments" / STAGE).exists() and not (ROOT / "solutions" / STAGE).exists()


def test_the_stage_is_whole_and_verify_grades_it(course):
    """verify finds no piece missing; the reference earns every point, the starter none, each variant as it must.
    (`verify STAGE` grades that stage's rows only: tests/test_variants.py grades every other stage's.)"""
    out = run(course, "verify", STAGE, "--jobs", "2").stdout
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith(STAGE)}
    assert set(rows) == {"reference", "starter", *(Path(name).stem for name in VARIANTS)}, out
    assert f"{len(rows)} of {len(rows)} as expected." in out, "rows of the other stages were graded too"
    assert f"{POINTS}/{POINTS}" in rows["reference"] and f" 0/{POINTS}" in rows["starter"]
    assert all(line.endswith(" ok") for line in rows.values()), out
    mutants = run(course, "verify", "--mutants", STAGE, "--jobs", "2").stdout
    assert "every requirement holds" in mutants, mutants


def test_grade_counts_the_stage(course, tmp_path):
    """A class of two: the reference for every stage earns the new stage's points, a wrong variant fewer."""
    submissions = tmp_path / "submissions"
    shutil.copytree(course / "solutions", submissions / "ada")  # every stage's reference, the new one's too
    (submissions / "bo" / STAGE).mkdir(parents=True)
    shutil.copy(
        course / "tests" / "variants" / STAGE / "wrong_taken_squares.py", submissions / "bo" / STAGE / f"{MODULE}.py"
    )
    out = tmp_path / "out"
    run(course, "grade", str(submissions), "--out", str(out), "--jobs", "2", "--quiet")
    with (out / "grades.csv").open(newline="") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    header = list(rows["ada"])
    assert header.index(STAGE) == header.index("10_symmetry") + 1 and header[header.index(STAGE) + 1] == "bonus"
    assert float(rows["ada"][STAGE]) == POINTS and float(rows["ada"]["total"]) == 100
    assert float(rows["ada"]["bonus"]) == 30 + POINTS
    assert float(rows["bo"][STAGE]) < POINTS


def test_the_release_holds_the_stage_and_leaks_nothing(course, tmp_path):
    """The student copy has the new stage's starter, README and visible tests, and passes its own leak check."""
    out = tmp_path / "release"
    run(course, "release", str(out))
    folder = out / "assignments" / STAGE
    assert {p.name for p in folder.iterdir()} == {f"{MODULE}.py", f"test_{MODULE}.py", "README.md", "hints.txt"}
    assert (folder / f"{MODULE}.py").read_text() == (course / "assignments" / STAGE / f"{MODULE}.py").read_text()
    assert f"| `{STAGE}` |" in (out / "README.md").read_text()
    assert STAGE in (out / ".github" / "workflows" / "classroom.yml").read_text()
    assert not any("solutions" in p.parts for p in out.rglob("*"))


# Run like a kernel would, as tests/test_notebooks.py does: the answer cell, the helpers, then each test cell.
NOTEBOOK_RUN = f"""
import json
from autograder.authoring.markers import solution_code, strip_solutions
from autograder.course.stages import STAGE_BY_ID
from autograder.authoring import notebooks
stage = STAGE_BY_ID["{STAGE}"]
notebook = json.loads(notebooks.notebook_path(stage).read_text())
cells = {{c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in notebook["cells"]}}
tests = [name for name, c in zip(cells, notebook["cells"]) if c["metadata"]["nbgrader"]["grade"]]
for label, answer in (("reference", solution_code(stage.solution_path.read_text())),
                      ("starter", strip_solutions(stage.solution_path.read_text(), stage.id))):
    namespace = {{}}
    exec(answer, namespace)
    exec(cells["helpers"], namespace)
    for name in tests:
        try:
            exec(cells[name], namespace)
            print(label, name, "passed")
        except AssertionError:
            print(label, name, "failed")
"""


def test_the_notebook_is_generated_and_its_cells_pass_on_the_reference(course):
    """The stage's nbgrader source notebook holds one graded cell per check; the reference passes them, the
    starter none."""
    notebook = json.loads((course / "nbgrader" / "source" / STAGE / f"{STAGE}.ipynb").read_text())
    graded = {
        cell["metadata"]["nbgrader"]["grade_id"]: cell["metadata"]["nbgrader"]["points"]
        for cell in notebook["cells"]
        if cell["metadata"]["nbgrader"]["grade"]
    }
    assert sum(graded.values()) == POINTS and len(graded) == 3  # the examples, the hidden check, the advisory one
    lines = [line for line in python(course, NOTEBOOK_RUN).splitlines() if line.startswith(("reference ", "starter "))]
    assert sorted(lines) == sorted(
        [f"reference {name} passed" for name in graded] + [f"starter {name} failed" for name in graded]
    ), lines


def test_check_and_hint_know_the_stage(course):
    """`autograde check` runs the stage's visible tests (the starter fails them); `autograde hint` reads its hints."""
    checked = run(course, "check", STAGE, check=False)
    assert checked.returncode == 1 and STAGE in checked.stdout and "0/3" in checked.stdout, checked.stdout
    assert "A square is free when it holds ' '." in run(course, "hint", STAGE).stdout
