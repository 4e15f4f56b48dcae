"""Notebook courses: do the generated nbgrader notebooks work with real nbgrader, and does the grader read notebooks?

The nbgrader checks run the real `nbgrader` commands (no mocks) in a temporary copy of the course folder
nbgrader/: release every stage, autograde submissions made from the released notebooks, read the scores
back from nbgrader's own gradebook, generate feedback and export. They need the `notebooks` extra
(`pip install -e '.[notebooks]'`, which `make test` installs) and take about a minute.
"""

import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import notebook_tests, notebooks
from autograder.authoring.markers import solution_code, strip_solutions
from autograder.authoring.notebook_tests import BEGIN_HIDDEN, END_HIDDEN, cell_id
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGES, Stage
from autograder.grading import child
from autograder.grading.intake.notebook import extract_code

BIN = Path(sys.executable).parent
VARIANTS = ROOT / "tests" / "variants"


def variants(stage: Stage, kind: str) -> list[Path]:
    return sorted((VARIANTS / stage.id).glob(f"{kind}_*.py"))


# The class of notebooks both graders grade: the reference, the untouched starter and two known-wrong variants
# per stage (stage 1's two are the issue's: a diagonal missing, a column missing), put into the answer cell.
# Every notebook autograded costs nbgrader seconds (a kernel each), so the other variants are judged in-process.
WRONG = {stage.id: variants(stage, "wrong")[:2] for stage in STAGES}
WRONG["01_rules"] = [
    VARIANTS / "01_rules" / "wrong_missing_diagonal.py",
    VARIANTS / "01_rules" / "wrong_missing_column.py",
]
STUDENTS = ("reference", "untouched", "wrong-1", "wrong-2")


def answer_code(stage: Stage, student: str) -> str | None:
    """The code a student puts in the answer cell; None leaves the released starter as it is."""
    if student == "untouched":
        return None
    if student == "reference":
        return solution_code(stage.solution_path.read_text())
    return WRONG[stage.id][int(student.removeprefix("wrong-")) - 1].read_text()


def submission_name(stage: Stage, student: str) -> str:
    return WRONG[stage.id][int(student.removeprefix("wrong-")) - 1].stem if student.startswith("wrong-") else student


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


def source_notebook(stage: Stage) -> dict:
    return json.loads(notebooks.notebook_path(stage).read_text())


# --------------------------------------------------------------------------------------------------
# The source notebooks, without nbgrader
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", STAGES, ids=[s.id for s in STAGES])
def test_source_notebook_has_one_graded_cell_per_check(stage):
    """Is each source notebook what the generator makes, with one nbgrader cell per check, named and scored as it?"""
    path = notebooks.notebook_path(stage)
    assert path.read_text() == notebooks.render_notebook(stage), f"{path} is stale: run `autograde build`"
    notebook = json.loads(path.read_text())
    assert (notebook["nbformat"], notebook["nbformat_minor"]) == (4, 5)
    cells = notebook["cells"]
    ids = [cell["id"] for cell in cells]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) for name in ids)
    metas = [cell["metadata"]["nbgrader"] for cell in cells]
    assert all(
        meta["schema_version"] == 3 and meta["grade_id"] == cell["id"] for meta, cell in zip(metas, cells, strict=True)
    )
    answers = [cell for cell, meta in zip(cells, metas, strict=True) if meta["solution"]]
    assert len(answers) == 1 and not answers[0]["metadata"]["nbgrader"]["grade"]
    assert text(answers[0]) == stage.solution_path.read_text().rstrip("\n")
    tests = [(cell, meta) for cell, meta in zip(cells, metas, strict=True) if meta["grade"]]
    checks = stage_checks(stage.id)
    assert [(meta["grade_id"], meta["points"]) for _, meta in tests] == [(cell_id(c), c.points) for c in checks]
    for (cell, meta), check in zip(tests, checks, strict=True):
        assert meta["locked"] and not meta["solution"] and cell["cell_type"] == "code"
        assert text(cell).startswith(f"# {check.id} ("), f"{meta['grade_id']} does not say which check it is"
        assert len(hidden_regions(text(cell))) == (0 if check.visible else 1), f"{stage.id}: {meta['grade_id']}"


def test_source_notebooks_are_exactly_what_nbformat_writes():
    """Would Jupyter save the generated JSON unchanged, and is it valid nbformat 4.5?"""
    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    for stage in STAGES:
        raw = notebooks.notebook_path(stage).read_text()
        notebook = nbformat.reads(raw, as_version=4)
        nbformat.validate(notebook)
        assert nbformat.writes(notebook) == raw


def test_helpers_and_config_cells_are_the_package_files():
    """The helpers cell and nbgrader_config.py are copies of real (linted) files of the package."""
    helpers = (ROOT / "autograder" / "authoring" / "nbgrader_files" / "helpers.py").read_text()
    # with the grader's error hints embedded where the file leaves their source empty
    hints = (ROOT / "autograder" / "course" / "error_hints.py").read_text()
    helpers = helpers.replace('_ERROR_HINTS_SOURCE = ""', f"_ERROR_HINTS_SOURCE = {hints!r}", 1)
    for stage in STAGES:
        assert text(cells_by_id(source_notebook(stage))["helpers"]) == helpers.rstrip("\n")
    config = (ROOT / "autograder" / "authoring" / "nbgrader_files" / "nbgrader_config.py").read_text()
    assert (ROOT / "nbgrader" / "nbgrader_config.py").read_text() == config


def test_the_generator_does_not_import_the_build():
    """The notebook generator and the build share the solution markers, not each other (no import cycle)."""
    code = "import sys, autograder.authoring.notebooks\nassert 'autograder.authoring.build' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def helpers_module():
    spec = importlib.util.spec_from_file_location("helpers", notebook_tests.HELPERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_helpers_read_memo_keys_and_answers_as_the_grader_does():
    """The notebook's memo experiment recognises the keys the grader's child does; answers keep their exact type."""
    helpers = helpers_module()
    board = ["X", "O", " ", " ", "X", " ", " ", " ", "O"]

    class Text(str):
        pass

    keys = ["".join(board), tuple(board), str(board), str(tuple(board)), repr(board)[:-1], 9, ("X",) * 8, Text("X")]
    keys += ["XO  X  Q ", "x" * 9, [" "] * 9, (" ", 1) * 4 + (" ",), "(" + "'X', " * 8 + "'X')", "OO"]
    assert [helpers._board_of(key) for key in keys] == [child.board_of(key) for key in keys]
    assert helpers._right([1, 0, 0], [(1, 0, 0)]) and helpers._right((1, 0, 0), [(1, 0, 0)])
    for wrong in (True, 1.0, "1", Text("X"), [1], None):
        assert not helpers._right(wrong, [1, "X"]), wrong
    assert helpers._cases(".X.......,'O'=2|5 XXX......=None") == [
        (((" X" + " " * 7), "O"), [2, 5]),
        (("XXX" + " " * 6,), [None]),
    ]


@pytest.mark.parametrize("stage", STAGES, ids=[s.id for s in STAGES])
def test_reference_passes_every_cell_and_starter_none(stage):
    """Run in-process like a kernel would: the reference passes all test cells, the starter none of them."""
    notebook = source_notebook(stage)
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
            except AssertionError:
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


def test_extract_code_keeps_python_and_reproduces_ipython_syntax():
    """Do front-end magics and shell escapes do nothing, %time run its statement, and every other line keep
    its place? (tests/test_notebook_cells.py compares each cell with the real IPython.)"""
    raw = notebook_bytes(
        "import math\n%time R = math.sqrt(4)\n!pip install numpy\n\ndef f(x):\n    %matplotlib inline\n    return x",
        "%%bash\nls",
        '%load_ext autoreload\nTEXT = """\n%d percent\n!important\n"""\nZ = 10 % 3',
    )
    code, notes = extract_code(raw, "rules.ipynb")
    namespace: dict = {}
    exec(compile(code, "rules.ipynb", "exec"), namespace)  # trusted test input: it must define f, R, TEXT and Z
    assert namespace["f"](3) == 3 and namespace["R"] == 2.0 and namespace["Z"] == 1
    assert namespace["TEXT"] == "\n%d percent\n!important\n", "lines inside a string must be kept"
    joined = "\n".join(notes)
    assert "cell 1: ran `%time R = math.sqrt(4)` as `R = math.sqrt(4)`" in joined
    assert "cell 1: left out the shell escape `!pip install numpy`" in joined
    assert "cell 1: left out the IPython magic `%matplotlib inline`" in joined
    assert "cell 2: left out the whole cell: `%%bash`" in joined
    cell_3 = [note for note in notes if note.startswith("cell 3")]
    assert cell_3 == ["cell 3: left out the IPython magic `%load_ext autoreload`"]
    lines = code.splitlines()
    assert lines[0].startswith("# -*- coding: utf-8 -*-") and lines[1] == "# %% cell 1" and lines[2] == "import math"
    assert lines[8].strip() == "return x", "a line left out must keep the line numbers of the lines after it"


@pytest.mark.parametrize(
    "source, complaint",
    [
        ("%timeit f()", "rules.ipynb: cell 1 uses the IPython magic `%timeit f()`, which the grader cannot run"),
        ("files = !ls", "rules.ipynb: cell 1 has a name given the result of a magic or shell command"),
        ("get_ipython().system('ls')", "rules.ipynb: cell 1 calls get_ipython()"),
        ("# note\x1c%time winner = None", "cell 1 holds the character '\\x1c', a line break for Jupyter but not"),
    ],
)
def test_extract_code_refuses_what_it_cannot_run_as_the_kernel_does(source, complaint):
    with pytest.raises(ValueError) as caught:
        extract_code(notebook_bytes(source), "rules.ipynb")
    assert complaint in str(caught.value)


def test_extract_code_runs_what_python_runs_across_odd_line_breaks():
    """`# note\\x1cdef winner...` is one comment line to Python, IPython and nbgrader: the grader runs no def."""
    raw = notebook_bytes("def winner(board):\n    return None\n# note\x1cdef winner(board): return 'X'\n")
    code, _ = extract_code(raw, "rules.ipynb")
    namespace: dict = {}
    exec(compile(code, "rules.ipynb", "exec"), namespace)  # trusted test input
    assert namespace["winner"]([" "] * 9) is None


def test_a_coding_line_in_a_cell_changes_nothing(tmp_path):
    """The kernel gets text: `# coding: utf-7` must not turn `+AAo-` into a line break in the grader's module."""
    raw = notebook_bytes("# coding: utf-7\n# +AAo-X = 42\nY = 1")
    code, _ = extract_code(raw, "rules.ipynb")
    (tmp_path / "cooked.py").write_bytes(code.encode())
    done = subprocess.run(
        [sys.executable, "-c", "import cooked; print(hasattr(cooked, 'X'), cooked.Y)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["False", "1"]


def test_extract_code_skips_course_cells_and_markdown():
    """Are the course's locked cells (by grade_id, as nbgrader replaces them) and markdown left out, every
    other code cell kept, and a cell marked as the course's under an id of the student's refused, as nbgrader does?"""
    nbgrader = {"grade": False, "solution": True, "locked": False, "grade_id": "answer", "schema_version": 3}
    test = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    fake = {"grade": False, "solution": False, "locked": True, "grade_id": "mine", "schema_version": 3}
    notebook = json.loads(notebook_bytes("def winner(board):\n    return None", nbgrader=nbgrader))
    notebook["cells"] += json.loads(notebook_bytes("assert winner([]) == 'X'", nbgrader=test))["cells"]
    notebook["cells"] += json.loads(notebook_bytes("# Stage 1", cell_type="markdown"))["cells"]
    notebook["cells"] += json.loads(notebook_bytes("HELPER = 1"))["cells"]
    course = {"answer": False, "t": True, "helpers": True}
    code, notes = extract_code(json.dumps(notebook).encode(), "rules.ipynb", course)
    assert "def winner" in code and "HELPER = 1" in code
    assert "assert" not in code and "Stage 1" not in code
    assert any("skipped the notebook's 1 test and read-only cell(s)" in note for note in notes)
    notebook["cells"] += json.loads(notebook_bytes("MINE = 2", nbgrader=fake))["cells"]  # nbgrader refuses it too
    with pytest.raises(ValueError, match="cell 5 is marked as an nbgrader cell under the id 'mine', which is not one"):
        extract_code(json.dumps(notebook).encode(), "rules.ipynb", course)
    notebook["cells"][-1]["metadata"]["nbgrader"]["grade_id"] = "t"
    with pytest.raises(ValueError, match="two cells have the nbgrader id 't'"):
        extract_code(json.dumps(notebook).encode(), "rules.ipynb", course)


def test_the_course_cells_are_the_source_notebooks_locked_cells():
    for stage in STAGES:
        source = notebooks.source_notebook(stage)
        marked = {cell["id"]: cell["metadata"]["nbgrader"]["locked"] for cell in source["cells"]}
        assert notebooks.course_cells(stage) == marked, stage.id


@pytest.mark.parametrize(
    "raw, complaint",
    [
        (b"{not json", "rules.ipynb is not a notebook: it is not valid JSON (Expecting property name"),
        (b"\xff\xfe\x00", "rules.ipynb is not a notebook: it is not UTF-8 text"),
        (b'["a", "list"]', "rules.ipynb is not a notebook: valid JSON, but without the nbformat field"),
        (b'{"nbformat": 4, "cells": {}}', "rules.ipynb is not a notebook: it has no list of cells"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "cell 1: its source is neither"),
        (b'\xef\xbb\xbf{"nbformat": 4, "cells": []}', "rules.ipynb is not a notebook Jupyter can open: it starts with"),
        (b'{"nbformat": 4, "cells": [], "cells": []}', "rules.ipynb names the key 'cells' twice in one object"),
        (b'{"nbformat": "4", "cells": []}', "rules.ipynb is not a notebook Jupyter can open: nbformat '4'"),
        (b'{"nbformat": 5, "cells": []}', "rules.ipynb is not a notebook Jupyter can open: nbformat 5"),
    ],
)
def test_extract_code_rejects_what_is_not_a_notebook(raw, complaint):
    """Is a broken file one clear line naming it, never a traceback?"""
    with pytest.raises(ValueError) as caught:
        extract_code(raw, "rules.ipynb")
    assert complaint in str(caught.value) and "\n" not in str(caught.value)


def _nb(cells: list, **top) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}).encode()


def _code_cell(source) -> dict:
    return {"cell_type": "code", "id": "a", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


NBFORMAT_CASES = [
    _nb([_code_cell("x = 1\n")]),
    _nb([_code_cell(["x = 1\n", "y = 2"]), {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "# x"}]),
    _nb([_code_cell(["x = 1", "y = 2"])]),  # joined as they are: "x = 1y = 2"
    _nb([_code_cell("# note\x1cdef f(): pass")]),
    b"\xef\xbb\xbf" + _nb([_code_cell("x = 1")]),
    _nb([_code_cell("x = 1")]).replace(b"x = 1", "x = '\xe9'".encode("latin-1")),
    _nb([_code_cell(3)]),
    _nb([_code_cell(["x", 3])]),
    _nb([_code_cell("x")], nbformat=5),
    _nb([_code_cell("x")], nbformat="4"),
    json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": "X = 1\n", "outputs": [], "language": "python", "metadata": {}}]}]}).encode(),
]  # fmt: skip


@pytest.mark.parametrize("raw", NBFORMAT_CASES)
def test_extract_code_reads_what_nbformat_reads(raw):
    """Does the grader read each code cell's source exactly as nbformat does, and refuse what nbformat refuses?"""
    nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
    from autograder.grading.intake.notebook import read_notebook

    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
        theirs = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    except Exception:  # noqa: BLE001 - whatever nbformat refuses, Jupyter cannot open
        theirs = None
    try:
        cells = read_notebook(raw, "x.ipynb")
        ours = [notebook_source(cell) for cell in cells if cell.get("cell_type") == "code"]
    except ValueError:
        ours = None
    assert ours == theirs


def notebook_source(cell: dict) -> str:
    from autograder.grading.intake.notebook import _source

    return _source(cell.get("source", cell.get("input", "")), "x")


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
        [str(BIN / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True, timeout=1800
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
    """The course folder after release, one autograde of the whole class, feedback and export."""
    pytest.importorskip("nbgrader", reason="the notebooks extra is not installed: pip install -e '.[notebooks]'")
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    shutil.copytree(ROOT / "nbgrader", course, ignore=shutil.ignore_patterns("gradebook.db", "release", "submitted"))
    nbgrader(course, "generate_assignment", "*", "--force")
    for stage in STAGES:
        released = json.loads((course / "release" / stage.id / f"{stage.id}.ipynb").read_text())
        for student in STUDENTS:
            code = answer_code(stage, student)
            folder = course / "submitted" / student / stage.id
            folder.mkdir(parents=True)
            (folder / f"{stage.id}.ipynb").write_text(json.dumps(filled(released, code), indent=1))
    hostile = hostile_notebooks(released_notebook(course, "01_rules"))
    for student, notebook in hostile.items():
        folder = course / "submitted" / student / "01_rules"
        folder.mkdir(parents=True)
        (folder / "01_rules.ipynb").write_text(notebook)
    # hostile-locked makes nbgrader fail (it refuses the notebook), so it has a run of its own after the class's.
    locked_copy = course / "submitted" / "hostile-locked"
    shutil.move(locked_copy, course / "hostile-locked-later")
    nbgrader(course, "autograde", "*", "--force")  # every student of every stage in one run: kernels cost seconds
    shutil.move(course / "hostile-locked-later", locked_copy)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONWARNINGS": "ignore"}
    refused = subprocess.run(
        [str(BIN / "nbgrader"), "autograde", "01_rules", "--student", "hostile-locked", "--force"],
        cwd=course, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    (course / "hostile-locked.log").write_text(f"{refused.returncode}\n{refused.stdout}{refused.stderr}")
    nbgrader(course, "generate_feedback", "*", "--student=wrong-*", "--force")  # feedback of failing students
    nbgrader(course, "export")
    return course


def released_notebook(course: Path, stage_id: str) -> str:
    return (course / "release" / stage_id / f"{stage_id}.ipynb").read_text()


def hostile_notebooks(released_text: str) -> dict[str, str]:
    """Stage 1 notebooks, made with nbformat, whose text another reader could take for other code than the kernel's.

    `hostile-separator`: the reference, then `# note<U+001C>def winner(board): return 'X'`, one comment line to
    Python and IPython (str.splitlines breaks it in two). `hostile-locked`: the reference, then a cell the student
    marked `locked` under an id of their own (which the grader used to skip), that spoils `winner`.
    """
    import nbformat

    reference = solution_code(STAGES[0].solution_path.read_text())
    made = {}
    notebook = nbformat.reads(released_text, as_version=4)
    answer = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer")
    answer.source = reference + "\n# note\x1cdef winner(board): return 'X'\n"
    made["hostile-separator"] = nbformat.writes(notebook)
    notebook = nbformat.reads(released_text, as_version=4)
    answer = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer")
    answer.source = reference
    spoiler = nbformat.v4.new_code_cell("def winner(board):\n    return 'X'\n")
    spoiler.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True, "grade_id": "mine"}
    spoiler.metadata["nbgrader"]["schema_version"] = 3
    notebook.cells.insert(notebook.cells.index(answer) + 1, spoiler)
    made["hostile-locked"] = nbformat.writes(notebook)
    return made


HOSTILE = ("hostile-separator", "hostile-locked")


def released(course: Path, stage: Stage) -> dict:
    return json.loads((course / "release" / stage.id / f"{stage.id}.ipynb").read_text())


def hidden_boards(stage: Stage) -> set[str]:
    """The boards of the hidden tests' tables, as students would write them (spaces for empty squares)."""
    regions = [region for cell in source_notebook(stage)["cells"] for region in hidden_regions(text(cell))]
    tokens = {token for region in regions for token in re.findall(r"\b[XO.]{9}(?=[=,])", region)}
    return {token.replace(".", " ") for token in tokens}


def visible_boards(stage: Stage) -> set[str]:
    """The boards of the visible examples (hidden tables write boards with dots, never in quotes)."""
    return set(re.findall(r"'([XO ]{9})'", "\n".join(text(cell) for cell in source_notebook(stage)["cells"])))


def secret_boards(stage: Stage) -> set[str]:
    """Hidden boards that no visible example shows, in both of the forms a notebook may write them."""
    secrets = hidden_boards(stage) - visible_boards(stage)
    return secrets | {board.replace(" ", ".") for board in secrets}


def test_release_holds_no_reference_code_and_no_hidden_test(course):
    """Does `nbgrader generate_assignment` give students the .py starter's code and none of the answers?"""
    for stage in STAGES:
        notebook = released(course, stage)
        shown = "\n".join(text(cell) for cell in notebook["cells"])
        ours = [cell for name, cell in cells_by_id(notebook).items() if name != "helpers"]
        lines = {line.strip() for cell in ours for line in text(cell).splitlines()}
        starter = strip_solutions(stage.solution_path.read_text(), stage.id)
        assert text(cells_by_id(notebook)["answer"]).rstrip("\n") == starter.rstrip("\n")
        answers = set(solution_code(stage.solution_path.read_text()).splitlines()) - set(starter.splitlines())
        leaked = [line for line in answers if line.strip() and line.strip() in lines]
        assert not leaked, f"{stage.id}: reference lines in the released notebook: {leaked}"
        assert "HIDDEN TESTS" not in shown
        assert len(secret_boards(stage)) > 10, f"{stage.id}: too few hidden boards to test with"
        assert not [board for board in secret_boards(stage) if board in shown], stage.id
        for cell in notebook["cells"]:
            if cell["metadata"]["nbgrader"]["grade"]:
                assert "check_hidden(" not in text(cell) and "check_memo" not in text(cell)


def test_each_released_assignment_holds_its_student_readme(course):
    """Does nbgrader's release put, beside each stage's notebook, the README that names that notebook, says how
    to validate and submit it, and gives its points from visible and hidden tests, and no leak of any stage?"""
    from autograder.authoring import release

    for stage in STAGES:
        readme = (course / "release" / stage.id / "README.md").read_text()
        assert f"`{stage.id}.ipynb`" in readme and f"`nbgrader validate {stage.id}.ipynb`" in readme
        assert "*Submit*" in readme and f"worth {stage.points} points" in readme
        assert release.leaks(course / "release" / stage.id, ["README.md"]) == []


def test_validate_fails_the_starters_visible_cells_and_passes_filled_ones(course, tmp_path):
    """What students see from `nbgrader validate`: the starter fails every visible check, the reference passes.

    (A released cell of hidden tests holds only its comments, so nbgrader counts it as passed until grading.)
    """
    starters = [str(course / "release" / stage.id / f"{stage.id}.ipynb") for stage in STAGES]
    done = []
    for stage in STAGES:
        path = tmp_path / f"{stage.id}.ipynb"
        path.write_text(json.dumps(filled(released(course, stage), answer_code(stage, "reference"))))
        done.append(str(path))
    out = nbgrader(course, "validate", *starters, *done)  # one nbgrader for all: it reports them in order
    failed = [int(cells) for cells in re.findall(r"VALIDATION FAILED ON (\d+) CELL\(S\)!", out)]
    assert failed == [sum(check.visible for check in stage_checks(stage.id)) for stage in STAGES], out
    assert out.count("Success! Your notebook passes all the tests.") == len(STAGES), out


GRADEBOOK = """\
import json, sys, warnings
warnings.simplefilter('ignore')
from nbgrader.api import Gradebook
rows = []
with Gradebook(sys.argv[1]) as gb:
    for assignment in gb.assignments:
        for submission in assignment.submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    rows.append([assignment.name, submission.student.id, grade.name, grade.score, grade.max_score])
print(json.dumps(rows))
"""


def gradebook_cells(course: Path) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(stage, student, cell) -> (score, max score), read with nbgrader's own Gradebook API."""
    db = "sqlite:///" + str(course / "gradebook.db")
    out = subprocess.run([sys.executable, "-c", GRADEBOOK, db], capture_output=True, text=True, check=True).stdout
    return {(stage, student, cell): (score, top) for stage, student, cell, score, top in json.loads(out)}


def gradebook_scores(course: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(stage, student) -> (score, max score): the sums of the cells."""
    scores: dict[tuple[str, str], tuple[float, float]] = {}
    for (stage, student, _), (score, top) in gradebook_cells(course).items():
        total, most = scores.get((stage, student), (0, 0))
        scores[stage, student] = (total + score, most + top)
    return scores


def test_autograde_gives_full_zero_and_partial_points(course):
    """The reference and the right variants earn every point, the starter none, and every known-wrong variant
    loses points in the notebook channel too."""
    scores = gradebook_scores(course)
    for stage in STAGES:
        for student in STUDENTS:
            score = scores[stage.id, student]
            if student == "reference":
                assert score == (stage.points, stage.points), f"{stage.id} {student}"
            elif student == "untouched":
                assert score == (0, stage.points), stage.id
            else:
                assert score[0] < stage.points, f"{stage.id} {student}: {answer_code(stage, student)[:80]!r}"
    with open(course / "grades.csv", newline="") as handle:  # nbgrader export agrees with the gradebook
        exported = {(row["assignment"], row["student_id"]): float(row["score"]) for row in csv.DictReader(handle)}
    assert {key: score for key, score in exported.items() if key[1] in STUDENTS} == {
        key: score for key, (score, _) in scores.items() if key[1] in STUDENTS
    }


def test_feedback_hides_hidden_tests(course):
    """nbgrader's feedback shows hidden tests by default; the course config removes them and their tracebacks."""
    for stage in STAGES:
        secrets = secret_boards(stage)
        for student in ("wrong-1", "wrong-2"):
            html = (course / "feedback" / student / stage.id / f"{stage.id}.html").read_text()
            assert "HIDDEN TESTS" not in html and "check_hidden(" not in html.split("def check_hidden")[-1]
            # A failed hidden check draws its board (never the expected answer), never writes it as a string.
            shown = [board for board in secrets if board in html]
            assert not shown, f"{stage.id} feedback of {student} shows hidden boards: {shown[:5]}"
    failing = (course / "feedback" / "wrong-1" / "01_rules" / "01_rules.html").read_text()
    assert "AssertionError" in failing, "a failing student must still see why a test failed"


@pytest.fixture(scope="module")
def autograded(course, tmp_path_factory) -> Path:
    """`autograde grade` of the same notebooks nbgrader graded, plus .py twins of the reference and the starter."""
    submissions = tmp_path_factory.mktemp("autograde") / "submissions"
    for stage in STAGES:
        for student in STUDENTS:
            notebook = course / "submitted" / student / stage.id / f"{stage.id}.ipynb"
            (submissions / f"{student}-nb").mkdir(parents=True, exist_ok=True)
            shutil.copy(notebook, submissions / f"{student}-nb" / f"{stage.id}.ipynb")
        for student in ("reference", "untouched"):
            code = answer_code(stage, student) or strip_solutions(stage.solution_path.read_text(), stage.id)
            (submissions / f"{student}-py").mkdir(parents=True, exist_ok=True)
            (submissions / f"{student}-py" / stage.filename).write_text(code)
    for student in HOSTILE:
        (submissions / student).mkdir()
        shutil.copy(course / "submitted" / student / "01_rules" / "01_rules.ipynb", submissions / student)
    (submissions / "broken-nb").mkdir()
    (submissions / "broken-nb" / "01_rules.ipynb").write_bytes(b'{"cells": [')  # cut short: not valid JSON
    out = submissions.parent / "out"
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def autograde_checks(out: Path, student: str) -> dict[tuple[str, str], float]:
    """(stage, check id) -> points, from the student's results.json."""
    results = json.loads((out / student / "results.json").read_text())
    return {(test["extra_data"]["stage"], test["extra_data"]["check"]): test["score"] for test in results["tests"]}


def test_nbgrader_and_autograde_give_the_same_points_check_by_check(course, autograded):
    """One source of hidden tests: the same notebook earns the same points per check from both graders."""
    cells = gradebook_cells(course)
    rows, differences = [], []
    for stage in STAGES:
        for student in STUDENTS:
            graded = autograde_checks(autograded, f"{student}-nb")
            name = submission_name(stage, student)
            nb_total = grader_total = 0.0
            for check in stage_checks(stage.id):
                nb = cells[stage.id, student, cell_id(check)][0]
                grader = graded[stage.id, check.id]
                nb_total, grader_total = nb_total + nb, grader_total + grader
                if nb != grader:
                    differences.append(f"{stage.id} {name} {check.id}: nbgrader {nb:g}, autograde {grader:g}")
            rows.append(f"{stage.id:<18} {name:<30} {nb_total:>5g} {grader_total:>5g} /{stage.points}")
    print("\n".join(["stage              submission                     nbgrader autograde", *rows]))
    assert not differences, "\n".join(differences)


def test_hostile_notebooks_earn_what_the_kernels_code_earns(course, autograded):
    """A notebook whose text reads as other code (a U+001C in a comment) gets from `autograde grade` exactly
    nbgrader's points, check by check; one nbgrader refuses (a cell its student marked `locked`) is refused with
    the reason; an honest classmate keeps full marks."""
    cells = gradebook_cells(course)
    checks = stage_checks("01_rules")
    graded = autograde_checks(autograded, "hostile-separator")
    nb = {check.id: cells["01_rules", "hostile-separator", cell_id(check)][0] for check in checks}
    assert {check.id: graded["01_rules", check.id] for check in checks} == nb
    assert sum(nb.values()) == STAGES[0].points, "the def after U+001C is a comment: the reference's winner stands"
    # nbgrader refuses the notebook with a cell locked under the student's own id; so does the grader, saying why.
    log = (course / "hostile-locked.log").read_text()
    assert log.startswith("1\n") and "nbgrader cell does not have a grade_id" in log
    assert not any(score for (_, student, _), (score, _) in cells.items() if student == "hostile-locked")
    refused = json.loads((autograded / "hostile-locked" / "results.json").read_text())
    assert refused["score"] == 0 and "marked as an nbgrader cell under the id 'mine'" in json.dumps(refused)
    honest = autograde_checks(autograded, "reference-nb")
    assert sum(honest["01_rules", check.id] for check in checks) == STAGES[0].points


def test_autograde_grade_matches_py_twins(autograded):
    """Does `autograde grade` give each notebook exactly the points of the same code submitted as a .py file?"""
    with open(autograded / "grades.csv", newline="") as handle:
        grades = {row["student"]: row for row in csv.DictReader(handle)}
    assert float(grades["broken-nb"]["01_rules"]) == 0
    broken = (autograded / "broken-nb" / "results.json").read_text()
    assert "01_rules.ipynb is not a notebook: it is not valid JSON" in broken
    for student in ("reference", "untouched"):
        for stage in STAGES:
            nb, py = float(grades[f"{student}-nb"][stage.id]), float(grades[f"{student}-py"][stage.id])
            assert nb == py, f"{student} {stage.id}: notebook {nb} points, .py twin {py}"
