"""Do the hidden checks tell right from wrong, in the grader and in the notebooks? The library of student variants."""

import ast
import contextlib
import io
import json

import pytest

from autograder.authoring import notebooks, verify
from autograder.authoring.notebook_tests import cell_id
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGES

VARIANTS = ROOT / "tests" / "variants"


def docstring_first_line(path):
    """The first line of the module docstring, or '' when there is none."""
    doc = ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""
    return doc.split("\n", 1)[0].strip()


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_every_stage_has_variants_that_say_what_they_are(stage):
    """Has each stage at least 3 wrong_ and 1 ok_ variants, each a module with a one-line summary docstring?"""
    folder = VARIANTS / stage.id
    files = sorted(folder.glob("*.py"))
    wrong = [path for path in files if path.stem.startswith("wrong_")]
    right = [path for path in files if path.stem.startswith("ok_")]
    assert len(wrong) >= 3, f"{stage.id}: only {len(wrong)} wrong_ variants"
    assert len(right) >= 1, f"{stage.id}: no ok_ variant"
    assert [path.name for path in files if path not in wrong + right] == [], "variants are named wrong_* or ok_*"
    for path in files:
        summary = docstring_first_line(path)
        assert summary, f"{path.name} has no docstring saying what it does"
        assert summary.endswith("."), f"{path.name}: the docstring's first line should be one sentence"
        assert verify.first_line(path) == summary, f"{path.name}: verify would not quote this summary"
        assert "### BEGIN SOLUTION" not in path.read_text(), f"{path.name} still has solution markers"
        for function in stage.functions:
            assert f"def {function}(" in path.read_text(), f"{path.name} has no {function}: not a complete module"


@pytest.fixture(scope="module")
def graded_course():
    """Every reference, starter and variant graded once by the real judge in the sandbox, as `verify` grades them."""
    return verify.grade_course(jobs=2)


@pytest.mark.slow
def test_verify_finds_every_row_of_the_course_as_expected(graded_course):
    """References full, starters zero, ok_ variants full, every wrong_ variant short of full marks."""
    surprises = [
        f"{row[1].id} {row[0]}: {problem}" for row, result in graded_course if (problem := verify.verdict(row, result))
    ]
    assert not surprises, "\n".join(surprises)
    assert len(graded_course) == len(verify.expectations()) > 2 * len(STAGES)


def notebook_points(stage, code: str) -> dict[str, int]:
    """cell id -> the points the notebook's test cells give code, run in order in one namespace, as a kernel would:
    the code, the helpers cell, then every test cell, a cell earning its points when it raises nothing."""
    cells = json.loads(notebooks.notebook_path(stage).read_text())["cells"]
    by_id = {cell["id"]: "".join(cell["source"]) for cell in cells}
    namespace: dict = {"__name__": "__main__"}
    points = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, namespace)
        exec(by_id["helpers"], namespace)
        for cell in cells:
            meta = cell["metadata"]["nbgrader"]
            if meta["grade"]:
                try:
                    exec(by_id[cell["id"]], namespace)
                    points[cell["id"]] = meta["points"]
                except Exception:
                    points[cell["id"]] = 0
    return points


@pytest.mark.slow
def test_the_notebook_cells_give_every_row_the_graders_points_check_by_check(graded_course):
    """The known-wrong variants guard both channels: the same points per check from the notebook's test cells
    (tests/test_notebooks.py proves the cells with real `nbgrader autograde` on a few rows) and from the grader."""
    differences = []
    for (name, stage, path, want), result in graded_course:
        if name in ("reference", "starter"):
            continue  # every cell and none: tests/test_notebooks.py, in-process and under nbgrader
        cells = notebook_points(stage, path.read_text())
        scores = {test.check: test.score for test in result.tests}
        grader = {cell_id(check): scores[check.id] for check in stage_checks(stage.id)}
        differences += [
            f"{stage.id} {name} {cell}: notebook {cells[cell]}, grader {grader[cell]:g}"
            for cell in grader
            if cells[cell] != grader[cell]
        ]
        total = sum(cells.values())
        expected = {"full": total == stage.points, "zero": total == 0, "less": total < stage.points}[want]
        assert expected, f"{stage.id} {name}: {total} of {stage.points} in the notebook, expected {want} marks"
    assert not differences, "\n".join(differences)


def test_verify_catches_a_variant_that_is_not_wrong(tmp_path, monkeypatch, capsys):
    """Is a 'wrong' variant that earns full marks (here: the reference itself) reported, with exit code 1?"""
    stage = STAGES[0]
    folder = tmp_path / stage.id
    folder.mkdir()
    text = stage.solution_path.read_text()
    text = "\n".join(
        line for line in text.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
    )
    (folder / "wrong_nothing_wrong.py").write_text('"""Claims a mistake but has none."""\n' + text + "\n")
    (folder / "ok_also_fine.py").write_text(stage.solution_path.read_text())
    monkeypatch.setattr(verify, "VARIANTS", tmp_path)
    monkeypatch.setattr(verify, "STAGES", (stage,))
    assert verify.main(["--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "wrong_nothing_wrong" in out and "SURPRISE" in out
    assert "Claims a mistake but has none." in out
    assert "ok_also_fine" in out and out.count("SURPRISE") == 1


def test_verify_grades_the_stages_named_and_refuses_one_it_does_not_know(capsys):
    """`verify 01` grades stage 01's rows only, as they are expected; an unknown stage is a usage error."""
    assert verify.main(["01", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(STAGES[0].id)]
    assert len(rows) == len(verify.expectations([STAGES[0]])) > 2 and all(row.endswith(" ok") for row in rows)
    assert f"{len(rows)} of {len(rows)} as expected." in out
    with pytest.raises(SystemExit) as stopped:
        verify.main(["42"])
    assert stopped.value.code == 2 and "no stage '42'" in capsys.readouterr().err
