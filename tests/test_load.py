"""Are grades independent of the machine's load, of --jobs and of earlier runs with other limits?

Each run here is a real `autograde grade` in a subprocess. The class mixes correct work, known mistakes and
a correct but slow plain search whose stage takes about half of its CPU time limit on an idle machine.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course.stages import STAGE_BY_ID
from tests.classes import grade, read_grades, reference, write_student

pytestmark = pytest.mark.slow

VARIANTS = Path(__file__).parent / "variants"
FIXTURES = Path(__file__).parent / "fixtures" / "load"
SLOW = "03_minimax"  # plain minimax: the search that costs the most CPU per call
FAST = ("01_rules", "04_memoization", "05_winning_square")
CORRECT, SLOW_STUDENTS = 4, 3  # more slow students than cores, so that slow stages run side by side under --jobs 4


def variant(stage_id: str, name: str) -> str:
    return (VARIANTS / stage_id / f"{name}.py").read_text()


def make_class(folder: Path) -> None:
    """15 students: correct (fast stages), buggy (each known-wrong variant once) and slow (plain minimax)."""
    for n in range(CORRECT):
        write_student(folder / f"correct_{n:02}", {s: reference(s) for s in FAST}, nested=n % 2 == 0)
    wrong = [
        ("01_rules", "wrong_missing_diagonal"),
        ("01_rules", "wrong_o_moves_first"),
        ("03_minimax", "wrong_full_before_winner"),
        ("03_minimax", "wrong_max_for_both"),
        ("04_memoization", "wrong_finished_not_stored"),
        ("04_memoization", "wrong_key_x_squares"),
        ("05_winning_square", "wrong_ignores_mark"),
        ("05_winning_square", "wrong_gap_at_end_only"),
    ]
    for n, (stage_id, name) in enumerate(wrong):
        write_student(folder / f"buggy_{n:02}", {"01_rules": reference("01_rules"), stage_id: variant(stage_id, name)})
    for n in range(SLOW_STUDENTS):
        write_student(folder / f"slow_{n:02}", {"01_rules": reference("01_rules"), SLOW: reference(SLOW)})


def graded(submissions: Path, out: Path, limit: float, jobs: int, *extra: str) -> bytes:
    result = grade(submissions, out, "--time-limit", f"{limit:g}", "--jobs", str(jobs), *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    return (out / "grades.csv").read_bytes()


class Busy:
    """Both cores kept busy, each hog in a session of its own (a scheduling group of its own)."""

    def __enter__(self):
        self.hogs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(2)
        ]
        return self

    def __exit__(self, *exc):
        for hog in self.hogs:
            hog.kill()
            hog.wait()


def slowest_stage_cpu(out: Path) -> float:
    """The most CPU time any stage of the class needed (the slow students' plain searches)."""
    cpu = 0.0
    for path in out.glob("*/results.json"):
        stages = json.loads(path.read_text())["extra_data"]["stages"].values()
        cpu = max([cpu, *(stage["cpu_seconds"] for stage in stages if stage["outcome"] != "timeout")])
    return cpu


@pytest.fixture(scope="module")
def load_class(tmp_path_factory):
    """The class, a time limit fitted to this machine, and the class graded once idle with --jobs 1."""
    root = tmp_path_factory.mktemp("load")
    make_class(root / "class")
    # Calibrate once, on this machine: a limit twice what the plain search needs when idle, so the slow students'
    # stage takes about half of it and nothing else comes near. One slow student is enough to measure it.
    write_student(root / "calibration-class" / "slow", {SLOW: reference(SLOW)})
    result = grade(root / "calibration-class", root / "calibration", "--time-limit", "60", "--jobs", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    limit = max(1.0, round(2 * slowest_stage_cpu(root / "calibration"), 1))
    graded(root / "class", root / "jobs1", limit, 1)
    return root, limit


def test_the_same_grades_idle_with_jobs_1_and_4_and_under_load(load_class):
    """Do --jobs 1, --jobs 4 and a machine with both cores busy give byte-identical grades.csv files?"""
    root, limit = load_class
    alone = (root / "jobs1" / "grades.csv").read_bytes()
    wide = graded(root / "class", root / "jobs4", limit, 4)
    with Busy():
        loaded = graded(root / "class", root / "busy", limit, 2)
    assert alone == wide == loaded
    grades = read_grades(root / "jobs1")
    assert all(grades[f"slow_{n:02}"][SLOW] == str(STAGE_BY_ID[SLOW].points) for n in range(SLOW_STUDENTS)), grades
    full = str(sum(STAGE_BY_ID[s].points for s in FAST))
    assert all(grades[f"correct_{n:02}"]["total"] == full for n in range(CORRECT)), grades


def test_a_rerun_with_another_limit_and_back_gives_the_first_grades(load_class):
    """After a run with a limit too tight for the slow search, does going back regrade rather than reuse it?"""
    root, limit = load_class
    out = root / "rerun"
    shutil.copytree(root / "jobs1", out)  # the first run: the class graded at the fitted limit
    first = (out / "grades.csv").read_bytes()
    tight = grade(root / "class", out, "--time-limit", f"{limit / 8:g}", "--jobs", "2")
    assert tight.returncode == 0, tight.stderr[-3000:]
    assert "time limit changed" in (out / "report.html").read_text(), "the report says why the class was regraded"
    assert (out / "grades.csv").read_bytes() != first, "the tight limit should cost the slow students their stage"
    back = graded(root / "class", out, limit, 2)
    assert back == first


def test_a_forking_cpu_hog_beside_a_correct_student_leaves_it_at_full_marks(load_class, tmp_path):
    """Graded with --jobs 2 next to a stage that forks busy processes, does a correct slow stage keep its marks?"""
    _, limit = load_class
    folder = tmp_path / "class"
    write_student(folder / "honest", {"01_rules": reference("01_rules"), SLOW: reference(SLOW)})
    write_student(folder / "hog", {"01_rules": (FIXTURES / "fork_hog.py").read_text()})
    graded(folder, tmp_path / "out", limit, 2)
    grades = read_grades(tmp_path / "out")
    assert grades["honest"]["total"] == str(STAGE_BY_ID["01_rules"].points + STAGE_BY_ID[SLOW].points), grades
    assert grades["hog"]["total"] == "0"
