"""Notebook courses: do the generated nbgrader notebooks work with real nbgrader, and does the grader read notebooks?

The nbgrader checks run the real `nbgrader` commands (no mocks) in a temporary copy of the course folder
nbgrader/: release every stage, autograde submissions made from the released notebooks, read the scores
back from nbgrader's own gradebook, generate feedback and export. They need the `notebooks` extra
(`pip install -e '.[notebooks]'`, which `make test` installs) and take about a minute.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import notebooks
from autograder.authoring.build import solution_code, strip_solutions
from autograder.authoring.notebooks import BEGIN_HIDDEN, END_HIDDEN
from autograder.course.stages import ROOT, STAGES, Stage
from autograder.grading.intake.notebook import extract_code

BIN = Path(sys.executable).parent
STUDENTS = ("reference", "untouched", "mistake")

# One known mistake per stage: (text in the reference solution, what the mistake puts instead).
MISTAKES = {
    "01_rules": ('if board.count("X") == board.count("O"):', 'if board.count("X") >= board.count("O"):'),
    "02_count_games": ('if winner(board) is not None or " " not in board:', 'if " " not in board:'),
    "03_minimax": (
        '    if mark == "X":\n        return max(results)\n    return min(results)',
        "    return max(results)",
    ),
    "04_memoization": ("    memo[key] = result\n", ""),
    "05_winning_square": ("marks.count(mark) == 2", "marks.count(mark) >= 1"),
    "06_count_results": ("return [0, 0, 1]", "return [0, 0, 0]"),
    "07_quickest_move": ("return empty + 1", "return 1"),
}


def answer_code(stage: Stage, student: str) -> str | None:
    """The code a student puts in the answer cell; None leaves the released starter as it is."""
    if student == "untouched":
        return None
    code = solution_code(stage.solution_path.read_text())
    if student == "mistake":
        old, new = MISTAKES[stage.id]
        assert old in code, f"{stage.id}: the mistake's text is no longer in the reference solution"
        code = code.replace(old, new)
    return code


def cells_by_id(notebook: dict) -> dict[str, dict]:
    return {cell["metadata"].get("nbgrader", {}).get("grade_id", cell.get("id")): cell for cell in notebook["cells"]}


def text(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def hidden_regions(source: str) -> list[str]:
    regions, inside = [], None
    for line in source.splitlines():
        if line.strip() == BEGIN_HIDDEN:
            inside = []
        elif line.strip() == END_HIDDEN:
            regions.append("\n".join(inside))
            inside = None
        elif inside is not None:
            inside.append(line)
    return regions


# --------------------------------------------------------------------------------------------------
# The source notebooks, without nbgrader
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", STAGES, ids=[s.id for s in STAGES])
def test_source_notebook_follows_nbgrader_schema(stage):
    """Is each source notebook what the generator makes, with nbgrader schema 3 cells whose points add up?"""
    path = notebooks.notebook_path(stage)
    assert path.read_text() == notebooks.render_notebook(stage), f"{path} is stale: run `autograde build`"
    notebook = json.loads(path.read_text())
    assert (notebook["nbformat"], notebook["nbformat_minor"]) == (4, 5)
    cells = notebook["cells"]
    ids = [cell["id"] for cell in cells]
    assert len(set(ids)) == len(ids)
    metas = [cell["metadata"]["nbgrader"] for cell in cells]
    assert all(meta["schema_version"] == 3 and meta["grade_id"] for meta in metas)
    answers = [cell for cell, meta in zip(cells, metas, strict=True) if meta["solution"]]
    assert len(answers) == 1 and not answers[0]["metadata"]["nbgrader"]["grade"]
    assert text(answers[0]) == stage.solution_path.read_text().rstrip("\n")
    tests = [(cell, meta) for cell, meta in zip(cells, metas, strict=True) if meta["grade"]]
    assert sum(meta["points"] for _, meta in tests) == stage.points
    for cell, meta in tests:
        assert meta["locked"] and not meta["solution"] and cell["cell_type"] == "code"
        assert len(hidden_regions(text(cell))) == 1, f"{stage.id}: {meta['grade_id']} has no hidden tests"


def test_source_notebooks_are_exactly_what_nbformat_writes():
    """Would Jupyter save the generated JSON unchanged, and is it valid nbformat 4.5?"""
    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    for stage in STAGES:
        raw = notebooks.notebook_path(stage).read_text()
        notebook = nbformat.reads(raw, as_version=4)
        nbformat.validate(notebook)
        assert nbformat.writes(notebook) == raw


@pytest.mark.parametrize("stage", STAGES, ids=[s.id for s in STAGES])
def test_reference_passes_every_cell_and_starter_none(stage):
    """Run in-process like a kernel would: the reference passes all test cells, the starter none of them."""
    notebook = json.loads(notebooks.notebook_path(stage).read_text())
    cells = cells_by_id(notebook)
    tests = [text(c) for c in notebook["cells"] if c["metadata"]["nbgrader"]["grade"]]
    reference = solution_code(stage.solution_path.read_text())
    starter = strip_solutions(stage.solution_path.read_text(), stage.id)
    for answer, should_pass in ((reference, True), (starter, False)):
        namespace: dict = {}
        exec(answer, namespace)
        exec(text(cells["helpers"]), namespace)
        for source in tests:
            try:
                exec(source, namespace)
                passed = True
            except (AssertionError, NotImplementedError):
                passed = False
            assert passed is should_pass, f"{stage.id}: a test cell {'fails' if should_pass else 'passes'}:\n{source}"


# --------------------------------------------------------------------------------------------------
# extract_code: what `autograde grade` reads from a submitted notebook
# --------------------------------------------------------------------------------------------------


def notebook_bytes(*sources: str, cell_type: str = "code", **metadata) -> bytes:
    cells = [
        {"cell_type": cell_type, "metadata": metadata, "source": source, "outputs": [], "execution_count": None}
        for source in sources
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def test_extract_code_keeps_python_and_drops_ipython_syntax():
    """Are magics, shell escapes and get_ipython() dropped with a note, and everything else kept in place?"""
    raw = notebook_bytes(
        "import math\n%timeit math.sqrt(2)\nfiles = !ls\n!pip install numpy\n\ndef f(x):\n    %time g()\n    return x",
        "%%timeit\nsum(range(10))",
        'get_ipython().run_line_magic("load_ext", "autoreload")\nY = 2',
        '%load_ext autoreload\nTEXT = """\n%d percent\n!important\n"""\nZ = 10 % 3',
    )
    code, notes = extract_code(raw, "rules.ipynb")
    namespace: dict = {}
    exec(compile(code, "rules.ipynb", "exec"), namespace)  # trusted test input: it must define f, Y and TEXT
    assert namespace["f"](3) == 3 and namespace["Y"] == 2 and namespace["Z"] == 1
    assert namespace["TEXT"] == "\n%d percent\n!important\n", "lines inside a string must be kept"
    joined = "\n".join(notes)
    assert "cell 1: dropped the IPython magic `%timeit math.sqrt(2)`" in joined
    assert "cell 1: dropped the shell escape `files = !ls`" in joined
    assert "cell 1: dropped the shell escape `!pip install numpy`" in joined
    assert "cell 2: dropped the whole cell" in joined and "%%timeit" in joined
    assert "cell 3: dropped the get_ipython() call" in joined
    assert [note for note in notes if note.startswith("cell 4")] == [
        "cell 4: dropped the IPython magic `%load_ext autoreload`"
    ]
    lines = code.splitlines()
    assert lines[0] == "# %% cell 1" and lines[1] == "import math"
    assert lines[8].strip() == "return x", "dropped lines must keep the line numbers of the lines after them"


def test_extract_code_skips_course_cells_and_markdown():
    """Are nbgrader test cells, read-only cells and markdown left out, and solution cells kept?"""
    nbgrader = {"grade": False, "solution": True, "locked": False, "grade_id": "answer", "schema_version": 3}
    test = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    notebook = json.loads(notebook_bytes("def winner(board):\n    return None", nbgrader=nbgrader))
    notebook["cells"] += json.loads(notebook_bytes("assert winner([]) == 'X'", nbgrader=test))["cells"]
    notebook["cells"] += json.loads(notebook_bytes("# Stage 1", cell_type="markdown"))["cells"]
    notebook["cells"] += json.loads(notebook_bytes("HELPER = 1"))["cells"]
    code, notes = extract_code(json.dumps(notebook).encode(), "rules.ipynb")
    assert "def winner" in code and "HELPER = 1" in code
    assert "assert" not in code and "Stage 1" not in code
    assert any("skipped the notebook's 1 test and read-only cell(s)" in note for note in notes)


@pytest.mark.parametrize(
    "raw, complaint",
    [
        (b"{not json", "rules.ipynb is not a notebook: it is not valid JSON (Expecting property name"),
        (b"\xff\xfe\x00", "rules.ipynb is not a notebook: it is not UTF-8 text"),
        (b'["a", "list"]', "rules.ipynb is not a notebook: valid JSON, but without the nbformat field"),
        (b'{"nbformat": 4, "cells": {}}', "rules.ipynb is not a notebook: it has no list of cells"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "cell 1: its source is neither"),
    ],
)
def test_extract_code_rejects_what_is_not_a_notebook(raw, complaint):
    """Is a broken file one clear line naming it, never a traceback?"""
    with pytest.raises(ValueError) as caught:
        extract_code(raw, "rules.ipynb")
    assert complaint in str(caught.value) and "\n" not in str(caught.value)


def test_extract_code_reads_nbformat_3():
    raw = json.dumps({"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": "X = 1\n"}]}]})
    code, _ = extract_code(raw.encode(), "old.ipynb")
    assert "X = 1" in code


def test_extract_code_imports_nothing_from_jupyter():
    """The grader and the Gradescope bundle have no Jupyter: extract_code must work with the standard library."""
    code = (
        "import sys, autograder.grading.intake.notebook as n\n"
        "n.extract_code(b'{\"nbformat\": 4, \"cells\": []}', 'x.ipynb')\n"
        "jupyter = ('nbformat', 'nbgrader', 'IPython', 'jupyter_core')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in jupyter)\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --------------------------------------------------------------------------------------------------
# Real nbgrader, in a temporary copy of the course folder
# --------------------------------------------------------------------------------------------------


def nbgrader(course: Path, *args: str) -> str:
    """Run one nbgrader command in the course folder; fail with its output if it fails."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def filled(released: dict, code: str | None) -> dict:
    notebook = json.loads(json.dumps(released))
    if code is not None:
        cells_by_id(notebook)["answer"]["source"] = code
    return notebook


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course folder after release, autograde, feedback and export of three students on every stage."""
    pytest.importorskip("nbgrader", reason="the notebooks extra is not installed: pip install -e '.[notebooks]'")
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    shutil.copytree(ROOT / "nbgrader", course, ignore=shutil.ignore_patterns("gradebook.db", "release", "submitted"))
    nbgrader(course, "generate_assignment", "*", "--force")
    for stage in STAGES:
        released = json.loads((course / "release" / stage.id / f"{stage.id}.ipynb").read_text())
        for student in STUDENTS:
            folder = course / "submitted" / student / stage.id
            folder.mkdir(parents=True)
            notebook = filled(released, answer_code(stage, student))
            (folder / f"{stage.id}.ipynb").write_text(json.dumps(notebook, indent=1))
    nbgrader(course, "autograde", "*", "--force")
    nbgrader(course, "generate_feedback", "*", "--force")
    nbgrader(course, "export")
    return course


def released(course: Path, stage: Stage) -> dict:
    return json.loads((course / "release" / stage.id / f"{stage.id}.ipynb").read_text())


def test_release_holds_no_reference_code_and_no_hidden_test(course):
    """Does `nbgrader generate_assignment` give students the .py starter's code and none of the answers?"""
    for stage in STAGES:
        notebook = released(course, stage)
        shown = "\n".join(text(cell) for cell in notebook["cells"])
        lines = {line.strip() for line in shown.splitlines()}
        starter = strip_solutions(stage.solution_path.read_text(), stage.id)
        assert text(cells_by_id(notebook)["answer"]).rstrip("\n") == starter.rstrip("\n")
        answers = set(solution_code(stage.solution_path.read_text()).splitlines()) - set(starter.splitlines())
        leaked = [line for line in answers if line.strip() and line.strip() in lines]
        assert not leaked, f"{stage.id}: reference lines in the released notebook: {leaked}"
        assert "HIDDEN TESTS" not in shown and not hidden_boards(shown) - visible_boards(stage)
        for cell in notebook["cells"]:
            if cell["metadata"]["nbgrader"]["grade"]:
                assert "check_hidden(" not in text(cell)


def test_validate_says_released_notebooks_do_not_pass_and_filled_ones_do(course, tmp_path):
    """What students see from `nbgrader validate`: the starter fails (--invert agrees), the reference passes."""
    paths = [str(course / "release" / stage.id / f"{stage.id}.ipynb") for stage in STAGES]
    out = nbgrader(course, "validate", "--invert", *paths)
    assert out.count("Success! The notebook does not pass any tests.") == len(STAGES), out
    done = []
    for stage in STAGES:
        path = tmp_path / f"{stage.id}.ipynb"
        path.write_text(json.dumps(filled(released(course, stage), answer_code(stage, "reference"))))
        done.append(str(path))
    out = nbgrader(course, "validate", *done)
    assert out.count("Success! Your notebook passes all the tests.") == len(STAGES), out


def gradebook_scores(course: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(stage, student) -> (score, max score), read with nbgrader's own Gradebook API."""
    code = (
        "import json, sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from nbgrader.api import Gradebook\n"
        "with Gradebook(sys.argv[1]) as gb:\n"
        "    rows = [[a.name, s.student.id, s.score, s.max_score] for a in gb.assignments for s in a.submissions]\n"
        "print(json.dumps(rows))\n"
    )
    db = "sqlite:///" + str(course / "gradebook.db")
    out = subprocess.run([sys.executable, "-c", code, db], capture_output=True, text=True, check=True).stdout
    return {(stage, student): (score, top) for stage, student, score, top in json.loads(out)}


def test_autograde_gives_full_zero_and_partial_points(course):
    scores = gradebook_scores(course)
    for stage in STAGES:
        assert scores[stage.id, "reference"] == (stage.points, stage.points), stage.id
        assert scores[stage.id, "untouched"] == (0, stage.points), stage.id
        assert scores[stage.id, "mistake"][0] < stage.points, f"{stage.id}: the known mistake lost no points"
    with open(course / "grades.csv", newline="") as handle:  # nbgrader export agrees with the gradebook
        exported = {(row["assignment"], row["student_id"]): float(row["score"]) for row in csv.DictReader(handle)}
    assert exported == {key: score for key, (score, _) in scores.items()}


def hidden_boards(source: str) -> set[str]:
    """The boards quoted in a text's hidden test regions (or in the whole text, if it has none)."""
    regions = hidden_regions(source) or [source]
    return {match for region in regions for match in re.findall(r"\('([XO ]{9})'", region)}


def visible_boards(stage: Stage) -> set[str]:
    notebook = json.loads(notebooks.notebook_path(stage).read_text())
    shown = [line for cell in notebook["cells"] for line in text(cell).splitlines()]
    visible = "\n".join(line for line in shown if not line.startswith("    (("))  # hidden table rows
    return set(re.findall(r"'([XO ]{9})'", visible))


def test_feedback_hides_hidden_tests(course):
    """nbgrader's feedback shows hidden tests by default; the course config removes them and their tracebacks."""
    for stage in STAGES:
        source = json.loads(notebooks.notebook_path(stage).read_text())
        secrets = set().union(*(hidden_boards(text(cell)) for cell in source["cells"] if BEGIN_HIDDEN in text(cell)))
        secrets -= visible_boards(stage)
        assert len(secrets) > 10, f"{stage.id}: too few hidden boards to test with"
        for student in STUDENTS:
            html = (course / "feedback" / student / stage.id / f"{stage.id}.html").read_text()
            assert "HIDDEN TESTS" not in html and "check_hidden(" not in html.split("def check_hidden")[-1]
            shown = [board for board in secrets if board in html]
            # A failed hidden check names its board (never the expected answer): at most one per failing cell.
            allowed = 0 if student == "reference" else len(stage.functions) + 1
            assert len(shown) <= allowed, f"{stage.id} feedback of {student} shows hidden boards: {shown[:5]}"
    mistake = (course / "feedback" / "mistake" / "01_rules" / "01_rules.html").read_text()
    assert "AssertionError" in mistake, "a failing student must still see why a test failed"


def test_autograde_grade_matches_py_twins(course, tmp_path):
    """Does `autograde grade` give each notebook exactly the points of the same code submitted as a .py file?"""
    pytest.importorskip("autograder.grading.grade", reason="`autograde grade` does not exist yet")
    submissions = tmp_path / "submissions"
    for stage in STAGES:
        for student in STUDENTS:
            notebook = course / "submitted" / student / stage.id / f"{stage.id}.ipynb"
            (submissions / f"{student}-nb").mkdir(parents=True, exist_ok=True)
            shutil.copy(notebook, submissions / f"{student}-nb" / f"{stage.id}.ipynb")
            code = answer_code(stage, student) or strip_solutions(stage.solution_path.read_text(), stage.id)
            (submissions / f"{student}-py").mkdir(parents=True, exist_ok=True)
            (submissions / f"{student}-py" / stage.filename).write_text(code)
    (submissions / "broken-nb").mkdir()
    (submissions / "broken-nb" / "01_rules.ipynb").write_bytes(b'{"cells": [')  # cut short: not valid JSON
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with open(out / "grades.csv", newline="") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(grades["broken-nb"]["01_rules"]) == 0
    assert "01_rules.ipynb is not a notebook: it is not valid JSON" in (out / "broken-nb" / "results.json").read_text()
    scores = gradebook_scores(course)
    for student in STUDENTS:
        for stage in STAGES:
            nb, py = float(grades[f"{student}-nb"][stage.id]), float(grades[f"{student}-py"][stage.id])
            assert nb == py, f"{student} {stage.id}: notebook {nb} points, .py twin {py}"
            if student != "mistake":  # same fraction as nbgrader gives (the checks differ, so not for mistakes)
                assert nb / stage.points == scores[stage.id, student][0] / stage.points
