"""Do the visible tests' messages read right on the real test files: clean titles, a changed board first, advice
that belongs to the stage, lists of boards compared entry by entry, and check.py's line and hint.py's last rung?"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import build
from autograder.course.stages import ROOT, STAGE_BY_ID
from autograder.practice import check, hint


def copy_with(tmp_path: Path, stage_id: str, extra: str) -> Path:
    """The course's assignments/ with one stage's reference module, plus code that replaces some functions."""
    root = tmp_path / "student"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    stage = STAGE_BY_ID[stage_id]
    reference = build.solution_code(stage.solution_path.read_text())
    (root / "assignments" / stage.id / stage.filename).write_text(reference + "\n\n" + extra)
    return root


def visible(root: Path, stage_id: str) -> str:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", f"assignments/{stage_id}"], cwd=root, capture_output=True, text=True, env=env
    )
    assert done.returncode == 1, done.stdout
    return done.stdout.split("what to fix", 1)[1]


def numbered(text: str) -> list[str]:
    """The titles of the failures shown in full: "1. <title>" lines."""
    return re.findall(r"^\d+\. (.*)$", text, re.MULTILINE)


def test_titles_are_clean_and_a_changed_board_comes_first(tmp_path):
    """A choose_move that leaves its mark on the board and a score that is always 0: the changed board is failure
    1, and no title carries pytest's suffixes (a number after an example's words, a _0, brackets)."""
    extra = (
        "def score(board):\n    return 0\n\n\n"
        "def choose_move(board):\n    square = board.index(' ')\n    board[square] = 'X'\n    return square\n"
    )
    shown = visible(copy_with(tmp_path, "03_minimax", extra), "03_minimax")
    titles = numbered(shown)
    assert titles[0].startswith("board is left unchanged ("), titles
    assert "changed the board it was given" in shown.split("\n2. ", 1)[0]
    everything = re.findall(r"^\s*\d+\. ([^:\n]*)", shown, re.MULTILINE)
    assert any(title.startswith("X has already won") for title in everything), everything
    for title in everything:
        assert not re.search(r"[a-z]\d+$|_\d+\b|\[", title), title
    assert "With a memo" not in shown and "memo" not in shown.lower()  # stage 3 comes before memos


def test_the_memo_stage_s_score_advice_speaks_of_the_memo(tmp_path):
    extra = (  # right on finished boards, wrong on the others: the general advice for score applies
        "_score = score\n\n\ndef score(board):\n    return _score(board) if winner(board) or ' ' not in board else 5\n"
    )
    shown = visible(copy_with(tmp_path, "04_memoization", extra), "04_memoization")
    assert "With a memo, two different boards must never share a key." in shown


def test_a_list_of_boards_is_compared_entry_by_entry(tmp_path):
    """symmetries in the wrong order: the message names the first entry that differs, both as 9 squares."""
    extra = "_symmetries = symmetries\n\n\ndef symmetries(board):\n    return list(reversed(_symmetries(board)))\n"
    shown = visible(copy_with(tmp_path, "10_symmetry", extra), "10_symmetry")
    assert re.search(r"symmetries\(board\) is wrong: entry 0 is '[XO ]{9}', and should be '[XO ]{9}'", shown), shown


def test_check_s_first_thing_to_fix_shows_the_board(tmp_path):
    root = copy_with(tmp_path, "01_rules", "def winner(board):\n    return None\n")
    (report,) = check.check(root, ["1"])
    assert re.search(r"On [XO·]{3}/[XO·]{3}/[XO·]{3}\. Try this:", report.first_problem), report.first_problem


@pytest.mark.parametrize("stage_id", ["01_rules", "03_minimax"])
def test_the_last_hint_says_the_answer_once(tmp_path, stage_id):
    root = tmp_path / "student"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    folder = root / "assignments" / stage_id
    text = ""
    for _ in range(len(hint.ladder(folder))):
        text = hint.next_hint(root, folder)
    assert text.startswith(f"{stage_id}, the answer:") and text.lower().count("the answer") == 1, text
