"""Does `autograde check` run the visible tests of a working copy and say, per stage, what to fix first?"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.authoring import build
from autograder.course.stages import ROOT, STAGES
from autograder.practice import check


def working_copy(tmp_path: Path, solved: bool) -> Path:
    """A student's folder: the course's assignments/ with every module a starter, or the reference solution."""
    root = tmp_path / "student"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    for stage in STAGES:
        text = build.solution_code(stage.solution_path.read_text()) if solved else build.starter(stage)
        (root / "assignments" / stage.id / stage.filename).write_text(text)
    return root


def autograde_check(root: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "check", "--root", str(root), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.slow
def test_starters_pass_nothing_and_say_what_to_write(tmp_path):
    """Do the starters pass no visible test, with the first thing to fix naming the function to write?"""
    reports = check.check(working_copy(tmp_path, solved=False))
    assert [r.stage for r in reports] == [s.id for s in STAGES]
    for report, stage in zip(reports, STAGES, strict=True):
        assert report.passed == 0 and report.total, report
        assert "is not written yet" in report.first_problem and stage.filename in report.first_problem, report
        assert "\n" not in report.first_problem


@pytest.mark.slow
def test_solutions_pass_everything_and_exit_zero(tmp_path):
    """Does a working copy holding the reference solutions pass every stage, and the command exit 0?"""
    root = working_copy(tmp_path, solved=True)
    reports = check.check(root)
    assert all(r.ok and r.first_problem == "" for r in reports), reports
    result = autograde_check(root, "7")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All visible tests pass" in result.stdout


@pytest.mark.slow
def test_one_broken_stage_is_the_only_one_reported(tmp_path):
    """Is a wrong answer in one stage reported there, with the visible test's one-line message, and exit 1?"""
    root = working_copy(tmp_path, solved=True)
    rules = root / "assignments" / "01_rules" / "rules.py"
    text = rules.read_text()
    assert "(0, 4, 8), (2, 4, 6)," in text
    rules.write_text(text.replace("(0, 4, 8), (2, 4, 6),", "(0, 4, 8),"))  # forget a diagonal
    broken, other = check.check(root, ["1", "2"])  # stage 2 has its own copy of LINES: it still passes
    assert 0 < broken.passed < broken.total
    assert broken.first_problem.startswith("winner(board) returned None, but the answer is 'O'"), broken
    assert other.ok
    result = autograde_check(root, "1")
    assert result.returncode == 1
    assert "01_rules" in result.stdout and "winner(board) returned None" in result.stdout


@pytest.mark.slow
def test_an_endless_loop_stops_each_test_and_the_stage_still_reports(tmp_path, monkeypatch):
    """A winner that loops forever: each test that calls it stops (1 s each here, then less once 3 s are gone),
    to_move's tests still pass, and the first thing to fix says which function did not finish and why."""
    monkeypatch.setenv("COURSE_TEST_SECONDS", "1")
    root = working_copy(tmp_path, solved=True)
    rules = root / "assignments" / "01_rules" / "rules.py"
    rules.write_text(rules.read_text() + "\n\ndef winner(board):\n    while True:\n        pass\n")
    started = time.monotonic()
    (report,) = check.check(root, ["1"])
    assert time.monotonic() - started < 30
    assert 0 < report.passed < report.total, report
    assert report.first_problem.startswith("winner (assignments/01_rules/rules.py line "), report
    assert "did not finish in 1 s: look for a loop that never ends" in report.first_problem, report
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "assignments/01_rules"], cwd=root, capture_output=True, text=True
    )
    assert "did not finish in 0.5 s (the time left once earlier tests ran out of it)" in tested.stdout
    assert "Traceback" not in tested.stdout and "passed" in tested.stdout


@pytest.mark.slow
def test_a_module_that_does_not_import_is_one_line(tmp_path):
    """Does a syntax error or a missing module show as the conftest's one-line hint, with no test count?"""
    root = working_copy(tmp_path, solved=True)
    minimax = root / "assignments" / "03_minimax" / "minimax.py"
    minimax.write_text(minimax.read_text() + "\ndef oops(:\n")
    (root / "assignments" / "05_winning_square" / "winning_square.py").unlink()
    syntax, missing = check.check(root, ["minimax", "winning_square"])
    assert syntax.total is None and "SyntaxError" in syntax.first_problem and "minimax.py" in syntax.first_problem
    assert missing.total is None and "winning_square.py not found" in missing.first_problem


@pytest.mark.parametrize("name", ["3", "03", "03_minimax", "minimax"])
def test_a_stage_can_be_named_three_ways(name):
    """Do `check 3`, `check 03_minimax` and `check minimax` all mean stage 3, as autograder.course.stages.stage says?"""
    from autograder.course.stages import stage

    folder = check.resolve(name, check.stage_folders(ROOT))
    assert folder.name == stage(name).id == "03_minimax"


def test_an_unknown_stage_exits_2_listing_the_stages(tmp_path):
    """Does a stage that does not exist fail before running anything, naming the stages there are?"""
    result = autograde_check(ROOT, "11")
    assert result.returncode == 2
    assert "no stage called '11'" in result.stderr and "01_rules" in result.stderr


def test_check_needs_nothing_from_the_grader():
    """Can check.py run in the student release, where the autograder package does not exist?"""
    source = (ROOT / "autograder" / "practice" / "check.py").read_text()
    assert "from autograder" not in source and "import autograder" not in source


@pytest.mark.parametrize("rich_installed", [True, False])
def test_messages_are_printed_as_written(rich_installed, monkeypatch, capsys):
    """Is a message holding brackets, like [1, 0, 0], printed as is (rich markup or not, rich installed or not)?"""
    if not rich_installed:
        monkeypatch.setitem(sys.modules, "rich", None)  # any `import rich...` now raises ImportError
    monkeypatch.setenv("COLUMNS", "200")
    message = "count_results(board) returned [1, 0, 0], but the answer is [0, 0, 1] [/bold]"
    check.render([check.StageReport("06_count_results", 1, 3, message), check.StageReport("01_rules", 3, 3, "")])
    out = capsys.readouterr().out
    assert message in out and "1/3" in out and "nothing: all visible tests pass" in out
