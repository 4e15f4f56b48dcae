"""What does a student read when a visible test fails? Only the lesson: real pytest on real student files.

Each case copies the course's assignments/ into tmp, puts a typical mistake in one stage's module, runs pytest
on that stage as the README says, and pins what the output must (and must not) hold.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import build
from autograder.course.stages import ROOT, STAGE_BY_ID

MAX_LINES = 60  # about a screenful, even when every test of the stage fails


def solved_with(stage_id: str, old: str, new: str) -> str:
    """The reference solution of a stage with one mistake made in it."""
    code = build.solution_code(STAGE_BY_ID[stage_id].solution_path.read_text())
    assert old in code, old
    return code.replace(old, new)


TALLIES_LOOP = """    totals = [0, 0, 0]
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            x_wins, o_wins, draws = count_results(board)
            board[square] = " "
            totals[0] += x_wins
            totals[1] += o_wins
            totals[2] += draws
    return totals
"""
ADDS_LISTS = """    totals = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            totals = totals + count_results(board)
            board[square] = " "
    return totals
"""

MISTAKES = {
    "missing diagonal": ("01_rules", "(0, 4, 8), (2, 4, 6),", "(0, 4, 8),"),
    "memo keyed by the list": ("04_memoization", 'key = "".join(board)', "key = board"),
    "count_results adds lists": ("06_count_results", TALLIES_LOOP, ADDS_LISTS),
}


def run_stage(tmp_path: Path, stage_id: str, code: str) -> str:
    root = tmp_path / "course"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    stage = STAGE_BY_ID[stage_id]
    (root / "assignments" / stage_id / stage.filename).write_text(code)
    command = [sys.executable, "-m", "pytest", f"assignments/{stage_id}", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout + done.stderr


def assert_only_the_lesson(output: str) -> None:
    assert len(output.splitlines()) < MAX_LINES, output
    assert "def test_" not in output, output
    assert "E   " not in output, output
    assert "assert False" not in output and "AssertionError" not in output, output
    assert max(len(line) for line in output.splitlines()) < 400, "a line too long to read"


@pytest.fixture(scope="module", params=sorted(MISTAKES))
def mistake(request, tmp_path_factory):
    stage_id, old, new = MISTAKES[request.param]
    code = solved_with(stage_id, old, new)
    return request.param, run_stage(tmp_path_factory.mktemp("student"), stage_id, code)


def test_a_failure_shows_the_lesson_and_no_pytest_noise(mistake):
    """Is the output short, free of test source and assertion details, with the board and what to try?"""
    name, output = mistake
    assert_only_the_lesson(output)
    assert "what to fix" in output and "tested " in output
    if name == "missing diagonal":
        assert "winner(board) returned None, but the answer is 'O' (O wins on the other diagonal)." in output
        assert " X | X | O      0 1 2" in output  # the board, dots and a numbered key beside it
        assert "Try this:" in output
    if name == "memo keyed by the list":
        lines = [line for line in output.splitlines() if "unhashable" in line]
        assert len(lines) == 1, output  # thirty failures, one message, said once
        assert lines[0].startswith("assignments/04_memoization/memoization.py line ")
        assert "a list cannot be a dict key: use tuple(board)" in lines[0]
    if name == "count_results adds lists":
        assert "returned [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, ...] (15 items)" in output
        assert "... and " in output or "Also failed:" in output


@pytest.mark.slow
def test_a_stage_where_everything_fails_fits_on_a_screen(tmp_path):
    """Does a starter (every test fails) print one line per unwritten function, and stay under a screenful?"""
    output = run_stage(tmp_path, "01_rules", build.starter(STAGE_BY_ID["01_rules"]))
    assert_only_the_lesson(output)
    assert "winner is not written yet: replace `raise NotImplementedError()` in rules.py" in output
    assert "to_move is not written yet" in output


def test_pytest_tb_still_shows_pytest_s_own_report(tmp_path):
    """Can a student who wants the whole traceback still get it with --tb?"""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "assignments/04_memoization/memoization.py").write_text(
        solved_with("04_memoization", 'key = "".join(board)', "key = board")
    )
    command = [sys.executable, "-m", "pytest", "assignments/04_memoization", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run([*command, "--tb=short", "-x"], cwd=root, capture_output=True, text=True, timeout=120)
    assert "memoization.py:" in done.stdout and "TypeError" in done.stdout, done.stdout
    assert "what to fix" not in done.stdout


def test_the_grader_and_the_notebooks_give_the_same_hint_for_an_error():
    """Do the grader's feedback and the notebook helpers say what to try for an unhashable key, as the tests do?"""
    from autograder.authoring.notebook_tests import helpers_source
    from autograder.course import error_hints
    from autograder.grading import feedback

    advice = error_hints.hint("TypeError", "unhashable type: 'list'")
    assert advice.startswith("a list cannot be a dict key")
    reply = {"error": "TypeError", "message": "unhashable type: 'list'", "where": "memoization.py line 9"}
    assert feedback.error_text("score", reply).endswith(advice)
    cell = {}
    exec(helpers_source(), cell)

    def score(board):
        return {}[board]

    assert advice in cell["_raised"](score, (" " * 9,), TypeError("unhashable type: 'list'"))
    assert (ROOT / "assignments" / "error_hints.py").read_text() == Path(error_hints.__file__).read_text()
