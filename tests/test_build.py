"""Does the generator turn solutions into starters faithfully, and does --check catch drift?"""

import shutil
import subprocess
import sys

import pytest

from autograder.authoring import build, markers
from autograder.course.stages import ROOT, STAGES


def test_committed_starters_are_in_sync():
    """Is every committed starter exactly what the generator makes from its solution?"""
    result = subprocess.run([sys.executable, "-m", "autograder", "build", "--check"], cwd=ROOT, capture_output=True)
    assert result.returncode == 0, result.stderr.decode()


def test_check_names_a_drifted_starter(tmp_path, monkeypatch):
    """Does --check fail, naming the file, when a starter no longer matches its solution?"""
    copy = tmp_path / "course"
    for folder in ("solutions", "assignments"):
        shutil.copytree(ROOT / folder, copy / folder)
    stale = copy / "assignments" / STAGES[2].id / STAGES[2].filename
    stale.write_text(stale.read_text() + "\n# edited by hand\n")
    env_code = (
        "import sys, pathlib, autograder.course.stages as c;"
        f"root = pathlib.Path({str(copy)!r});"
        "c.ROOT = root; c.SOLUTIONS = root / 'solutions'; c.ASSIGNMENTS = root / 'assignments';"
        "import autograder.authoring.build as b; b.ROOT = root; sys.exit(b.main(['--check']))"
    )
    result = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1
    assert f"assignments/{STAGES[2].id}/{STAGES[2].filename} differs" in result.stderr


def test_starter_keeps_everything_but_the_solution():
    """Does a starter keep docstrings, signatures and given helpers, and drop every solution line?"""
    for stage in STAGES:
        solution = stage.solution_path.read_text()
        starter = build.starter(stage)
        assert markers.BEGIN not in starter and markers.END not in starter
        for name in stage.functions:
            assert f"def {name}(" in starter, f"{stage.id}: starter lost {name}"
        assert starter.count("raise NotImplementedError()") == solution.count(markers.BEGIN)
        if stage is not STAGES[0]:
            assert "def winner(board):" in starter and "LINES = [" in starter


@pytest.mark.parametrize(
    "source, complaint",
    [
        ("def f():\n    return 1\n", "no ### BEGIN SOLUTION region"),
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "never closed"),
        ("def f():\n    ### END SOLUTION\n", "without a ### BEGIN SOLUTION"),
        ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n", "inside the region"),
        ("def f():\n    x = 1  ### BEGIN SOLUTION\n", "must stand alone"),
    ],
)
def test_bad_markers_are_loud(source, complaint):
    """Is a missing, nested, unbalanced or inline marker an error that names the problem?"""
    with pytest.raises(markers.MarkerError, match=complaint):
        markers.strip_solutions(source, "x.py")


def test_stripping_keeps_indentation():
    source = "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
    stripped = "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    assert markers.strip_solutions(source, "x.py") == stripped


def test_helper_drift_is_reported(monkeypatch, tmp_path):
    """Does the build notice when a stage's copy of winner() no longer matches stage 1's?"""
    stage = STAGES[1]
    broken = tmp_path / stage.filename
    broken.write_text(stage.solution_path.read_text().replace("(0, 4, 8), (2, 4, 6)", "(0, 4, 8)"))
    monkeypatch.setattr(type(stage), "solution_path", property(lambda s: broken if s is stage else _orig(s)))
    assert any("LINES differs" in problem for problem in build.check_shared_helpers())


_orig = type(STAGES[0]).solution_path.fget
