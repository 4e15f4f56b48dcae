"""Does `autograde hint STAGE` give one more hint each run, end on the answer, and start again with --reset?"""

import json
import shutil
import subprocess
import sys

import pytest

from autograder.course.stages import ROOT, STAGES
from autograder.practice import hint


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(ROOT / "assignments", root / "assignments", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_every_stage_has_a_ladder_that_ends_on_the_answer(stage):
    """Does each stage have at least two hints, the last one the direct answer?"""
    rungs = hint.ladder(ROOT / "assignments" / stage.id)
    assert len(rungs) >= 2 and rungs[-1].startswith("The answer:"), rungs
    assert not any(rung.startswith("The answer:") for rung in rungs[:-1])


def test_each_run_shows_the_next_hint_and_the_last_one_stays(course, capsys):
    rungs = hint.ladder(course / "assignments" / "07_quickest_move")
    shown = []
    for _ in range(len(rungs) + 1):
        assert hint.main(["7", "--root", str(course)]) == 0
        shown.append(capsys.readouterr().out)
    for text, rung in zip(shown, rungs, strict=False):
        assert rung.removeprefix("The answer:").strip() in text
    answer = rungs[-1].removeprefix("The answer:").strip()  # the title says it is the answer, once
    assert "the answer:" in shown[-1] and answer in shown[-1] and shown[-1] == shown[-2]
    assert shown[-1].lower().count("the answer") == 1
    assert json.loads((course / hint.PROGRESS_FILE).read_text()) == {"07_quickest_move": len(rungs)}


def test_reset_starts_the_stage_again_and_leaves_the_others(course, capsys):
    hint.main(["1", "--root", str(course)])
    hint.main(["minimax", "--root", str(course)])
    assert hint.main(["01_rules", "--reset", "--root", str(course)]) == 0
    assert json.loads((course / hint.PROGRESS_FILE).read_text()) == {"03_minimax": 1}
    capsys.readouterr()
    hint.main(["1", "--root", str(course)])
    assert "hint 1 of" in capsys.readouterr().out


def test_a_damaged_progress_file_is_no_progress(course, capsys):
    (course / hint.PROGRESS_FILE).write_text("{not json")
    assert hint.main(["2", "--root", str(course)]) == 0
    assert "hint 1 of" in capsys.readouterr().out


def test_an_unknown_stage_exits_2_in_one_line(course):
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "hint", "11", "--root", str(course)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no stage called '11'" in done.stderr
