"""The messy class of examples/messy_class/: every kind of trouble an instructor meets, graded once for the file.

graded_messy_class(out) grades it into out and returns out, for any test file that wants the graded class.
"""

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from autograder.course.stages import CORE_STAGES, ROOT
from autograder.grading.submissions import find_class, read_student
from tests.classes import grade, read_grades

MESSY = ROOT / "examples" / "messy_class"
TIME_LIMIT = "3"  # the infinite loop costs this much CPU; the reference stages need well under a second

pytestmark = pytest.mark.slow


def graded_messy_class(out: Path) -> Path:
    """Grade examples/messy_class into out (as `make demo` does) and return out."""
    graded = grade(MESSY, out, "--time-limit", TIME_LIMIT)
    assert graded.returncode == 0, graded.stderr
    return out


@pytest.fixture(scope="module")
def messy(tmp_path_factory) -> Path:
    return graded_messy_class(tmp_path_factory.mktemp("messy") / "out")


def stage_of(out: Path, student: str, stage_id: str = "01_rules") -> dict:
    return json.loads((out / student / "results.json").read_text())["extra_data"]["stages"][stage_id]


# --------------------------------------------------------------------------------------------------
# Intake
# --------------------------------------------------------------------------------------------------


def test_what_is_not_a_student_is_skipped_with_a_reason_each():
    found = find_class(MESSY)
    assert [name for name, _ in found.students] == [
        "amara", "ben", "chloe", "dev", "emil", "farah", "gus", "hana", "ivan", "jo", "kai", "student2", "student10"
    ]  # fmt: skip
    reasons = dict(found.skipped)
    assert set(reasons) == {".DS_Store", "__MACOSX", "Thumbs", "results"}
    assert "gradebook.db" in reasons["results"]
    assert all(f"skipped {name}: {why}" in found.notes for name, why in found.skipped)


def test_each_student_is_read_as_handed_in():
    read = {name: read_student(name, path) for name, path in find_class(MESSY).students}
    assert set(read["amara"].sources) == {stage.id for stage in CORE_STAGES}
    assert all("not a zip file" in problem for problem in read["ben"].problems.values())
    assert all(problem.endswith("was not submitted") for problem in read["chloe"].problems.values())
    assert read["emil"].renamed == {
        "01_rules": ("Rules.py", "rules.py"),
        "02_count_games": ("count_games (1).py", "count_games.py"),
    }
    assert read["kai"].problems["01_rules"] == (
        "found Rules.py and rules (1).py for rules.py: hand in one file named rules.py"
    )
    assert not read["kai"].renamed and "01_rules" not in read["kai"].sources
    assert set(read["farah"].sources) == {stage.id for stage in CORE_STAGES}  # the starters are read like any work


def test_the_one_student_folder_is_refused_with_the_command_to_run(tmp_path):
    result = grade(MESSY / "amara", tmp_path / "out")
    assert result.returncode == 2 and not (tmp_path / "out").exists()
    assert f"autograde grade {MESSY} --out OUT --student amara" in result.stderr


# --------------------------------------------------------------------------------------------------
# Grades
# --------------------------------------------------------------------------------------------------


def test_grades_csv_has_every_student_in_natural_order_with_their_points(messy):
    grades = read_grades(messy)
    assert list(grades) == [name for name, _ in find_class(MESSY).students]  # student2 before student10
    totals = {name: row["total"] for name, row in grades.items() if row["total"] != "0"}
    assert totals == {"amara": "100", "emil": "20", "jo": "8", "student2": "10", "student10": "10"}
    assert not (messy / "Thumbs").exists() and not (messy / "results").exists()


@pytest.mark.parametrize(
    "student, outcome, says",
    [
        ("ben", "error", "ben.zip could not be read: it is not a zip file"),
        ("chloe", "missing", "rules.py was not submitted"),
        ("dev", "error", "No module named 'numpy'"),
        ("emil", "passed", "found Rules.py, graded it as rules.py: name it rules.py next time"),
        ("gus", "error", "SyntaxError"),
        ("hana", "timeout", "CPU time limit"),
        ("ivan", "crashed", ""),
        ("jo", "failed", ""),
        ("kai", "error", "found Rules.py and rules (1).py"),
        ("amara", "passed", ""),
    ],
)
def test_each_student_lands_in_the_right_outcome_with_the_reason(messy, student, outcome, says):
    stage = stage_of(messy, student)
    assert stage["outcome"] == outcome and says in stage["message"]


def test_untouched_starters_earn_nothing_and_pass_nothing(messy):
    stages = json.loads((messy / "farah" / "results.json").read_text())["extra_data"]["stages"]
    assert all(stage["score"] == 0 and stage["outcome"] != "passed" for stage in stages.values())


def test_a_near_miss_name_is_told_to_the_student(messy):
    output = json.loads((messy / "emil" / "results.json").read_text())["output"]
    assert "02_count_games: found count_games (1).py, graded it as count_games.py" in output
    assert "count_games (1).py" in (messy / "emil" / "feedback.html").read_text()


# --------------------------------------------------------------------------------------------------
# Part of the class
# --------------------------------------------------------------------------------------------------


def test_a_part_run_grades_only_its_part_and_writes_the_whole_class(messy, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(messy, out)
    before = {path.relative_to(out): path.read_bytes() for path in out.rglob("results.json")}
    result = grade(MESSY, out, "--student", "emil", "--stage", "count_games", "--time-limit", TIME_LIMIT)
    assert result.returncode == 0, result.stderr
    after = {path.relative_to(out): path.read_bytes() for path in out.rglob("results.json")}
    assert set(after) == set(before)
    assert {path for path in after if after[path] != before[path]} <= {Path("emil/results.json")}
    assert (out / "grades.csv").read_bytes() == (messy / "grades.csv").read_bytes()
    assert stage_of(out, "emil") == stage_of(messy, "emil")  # stage 1 taken over as it was
    with sqlite3.connect(out / "gradebook.db") as db:
        rows = db.execute("SELECT student, reused FROM run_students WHERE run_id = 2 ORDER BY student").fetchall()
        graded = db.execute("SELECT COUNT(*) FROM submissions WHERE run_id = 2").fetchone()[0]
    assert graded == 1 and len(rows) == 13 and dict(rows)["emil"] == 0 and sum(r for _, r in rows) == 12
    again = grade(MESSY, out, "--time-limit", TIME_LIMIT)  # the whole class: everything is reused, emil's too
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(out / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM submissions WHERE run_id = 3").fetchone()[0] == 0


@pytest.mark.parametrize(
    "option, says",
    [
        (["--student", "Emli"], "no student called 'Emli' in SUBMISSIONS; did you mean emil?"),
        (["--stage", "11"], "no stage called '11'"),
    ],
)
def test_an_unknown_student_or_stage_is_one_line_and_exit_2(messy, tmp_path, option, says):
    out = tmp_path / "out"
    shutil.copytree(messy, out)
    result = grade(MESSY, out, *option)
    assert result.returncode == 2 and says in result.stderr and len(result.stderr.splitlines()) == 1
    assert (out / "grades.csv").read_bytes() == (messy / "grades.csv").read_bytes()


# --------------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------------

NEEDS_A_LOOK = {
    "ben": "could not be read",  # a corrupt zip
    "dev": "does not load",  # import numpy
    "gus": "does not load",  # a syntax error
    "hana": "timed out",  # an endless loop
    "ivan": "crashed",
    "kai": "could not be read",  # two near misses for rules.py
}


def section(page: str, anchor: str) -> str:
    start = page.index(f'id="{anchor}"')
    return page[start : page.find("<section", start)]


def test_each_student_lands_in_the_right_report_section(messy):
    """Is every student who could not be graded normally under "Needs a look", with the word for what went wrong,
    and nobody else: not the missing stages, the starters, the wrong answers or the full marks?"""
    page = (messy / "report.html").read_text()
    row = r'<tr><td><a href="[^"]*">([^<]+)</a></td><td>([^<]+)</td><td><span class="kind [^"]*">\S+ ([^<]+)</span>'
    rows = re.findall(row, section(page, "needs-look"))
    listed = {}
    for student, _stage, kind in rows:
        listed.setdefault(student, set()).add(kind)
    assert listed == {student: {kind} for student, kind in NEEDS_A_LOOK.items()}
    about = section(page, "notes")
    for skipped in ("__MACOSX", "Thumbs", ".DS_Store", "results"):
        assert f"skipped {skipped}:" in about, skipped
    assert "found Rules.py, graded it as rules.py" in (messy / "emil" / "feedback.html").read_text()
    students = section(page, "students")
    assert students.index(">student2<") < students.index(">student10<")
    assert "○ starter left as is" in students and "– not submitted" in students
