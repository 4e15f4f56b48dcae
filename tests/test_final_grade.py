"""One final grade per student: made once (admin/final_grade.py), stored, and the same in every output.

A class graded with a policy (on time, late, extended, too late), the bonus as capped extra credit, a stage
not assigned, overrides (excuse, adjust, a granted and a denied regrade) and a roster with a student who
handed nothing in; graded whole, then as two shards merged. Every output must give each student the same
number, and the merged outputs must be the whole run's, byte for byte.
"""

import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.admin.final_grade import final_grade
from autograder.admin.overrides import OverridesError, load_overrides
from autograder.admin.policy import PolicyError, load_policy
from autograder.admin.settings import CourseSettings
from autograder.course.stages import STAGES
from autograder.grading.shards import shard_of
from autograder.record import Change, Lateness, Outcome, StageResult, SubmissionResult
from tests.classes import ROOT, grade, read_grades, reference, starter, write_student

BERLIN = ZoneInfo("Europe/Berlin")
DUE = datetime(2025, 3, 7, 23, 59, tzinfo=BERLIN)
ASSIGNED = ("01_rules", "02_count_games", "03_minimax", "04_memoization", "05_winning_square", "06_count_results")

POLICY = f"""
time_zone = "Europe/Berlin"
[due]
{chr(10).join(f"{stage_id} = 2025-03-07T23:59:00" for stage_id in ASSIGNED)}
[late]
percent = 10
zero_after = 7
[[extensions]]
student = "dee"
days = 3
[grade]
assigned = {list(ASSIGNED)}
bonus = "extra"
bonus_cap = 15
"""

OVERRIDES = """
[[overrides]]
student = "dee"
stage = "03_minimax"
excuse = true
reason = "medical note"
by = "J. Smith"
on = 2025-03-10

[[overrides]]
student = "eve"
stage = "01_rules"
adjust = -2
reason = "helper copied without credit"
by = "J. Smith"
on = 2025-03-11

[[regrades]]
student = "eve"
stage = "05_winning_square"
request = "either square completes the line"
outcome = "granted"
set = 10
response = "the check was too strict"
by = "J. Smith"
on = 2025-03-12

[[regrades]]
student = "eve"
stage = "02_count_games"
request = "I did hand it in"
outcome = "denied"
response = "no count_games.py was in the submission"
by = "J. Smith"
on = 2025-03-12
"""

ROSTER_STUDENTS = ("ada", "ben", "cy", "dee", "eve", "fay", "gil")
# By hand: the assigned stages are worth 10 + 10 + 20 + 20 + 10 + 15 = 85.
EXPECTED = {
    "ada": 100,  # every stage on time: 85, and 30 bonus points earned of which 15 count
    "ben": 18,  # 01 and 02, 1 day late: 10 % of 10 off each
    "cy": 0,  # 01 to 04, 10 days late: past zero_after
    "dee": 52.31,  # 01, 02, 04 within the 3-day extension (40); 03 excused: 40 of 65 counted, scaled to 85
    "eve": 18,  # 01 on time, adjusted by -2 (8); 05 the starter, set to 10 by a granted regrade
    "fay": 0,  # every starter as released
    "gil": 0,  # in the roster, nothing handed in
}


def _student(folder: Path, sources: dict[str, str], when: datetime) -> None:
    write_student(folder, sources)
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when.timestamp(), when.timestamp()))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("final")
    submissions = base / "class"
    _student(submissions / "ada", {stage.id: reference(stage.id) for stage in STAGES}, DUE - timedelta(hours=1))
    _student(submissions / "ben", {s: reference(s) for s in ASSIGNED[:2]}, DUE + timedelta(hours=12))
    _student(submissions / "cy", {s: reference(s) for s in ASSIGNED[:4]}, DUE + timedelta(days=10))
    dee = {s: reference(s) for s in ("01_rules", "02_count_games", "04_memoization")}
    _student(submissions / "dee", dee, DUE + timedelta(days=2))
    eve = {"01_rules": reference("01_rules"), "05_winning_square": starter("05_winning_square")}
    _student(submissions / "eve", eve, DUE - timedelta(days=1))
    _student(submissions / "fay", {stage.id: starter(stage.id) for stage in STAGES}, DUE - timedelta(days=1))
    files = {"policy": base / "policy.toml", "overrides": base / "overrides.toml", "roster": base / "roster.csv"}
    files["policy"].write_text(POLICY)
    files["overrides"].write_text(OVERRIDES)
    files["roster"].write_text(
        "folder,id,name,email,section\n"
        + "".join(f"{name},S{n},{name.title()},{name}@example.edu,A\n" for n, name in enumerate(ROSTER_STUDENTS))
    )
    course_args = [f"--{name}={path}" for name, path in files.items()]
    whole = base / "whole"
    done = grade(submissions, whole, *course_args, "--time-limit", "10")
    assert done.returncode == 0, done.stderr
    # Two shards, each from a copy of the whole run's gradebook: every result is reused as it was stored (the
    # same timings), so what merge writes must be the whole run's outputs, byte for byte.
    shards = []
    for k in (1, 2):
        shard = base / f"shard-{k}"
        shard.mkdir()
        shutil.copy(whole / "gradebook.db", shard / "gradebook.db")
        done = grade(submissions, shard, *course_args, "--time-limit", "10", "--shard", f"{k}/2")
        assert done.returncode == 0, done.stderr
        shards.append(shard)
    merged = base / "merged"
    done = _run("merge", *map(str, shards), "--out", str(merged))
    assert done.returncode == 0, done.stderr
    return {"base": base, "whole": whole, "merged": merged, "shards": shards, "files": files, "args": course_args}


def _results(out: Path, student: str) -> dict:
    return json.loads((out / student / "results.json").read_text())


def _export(out: Path, roster: Path, target: Path, *args: str) -> list[list[str]]:
    done = _run("export", str(out), str(target), "--roster", str(roster), *args)
    assert done.returncode == 0, done.stderr
    with target.open(newline="") as handle:
        return list(csv.reader(handle))


def test_every_output_gives_each_student_the_same_final_grade(course):
    whole, roster = course["whole"], course["files"]["roster"]
    grades = read_grades(whole)
    db = sqlite3.connect(whole / "gradebook.db")
    (run,) = db.execute("SELECT MAX(id) FROM runs").fetchone()
    stored = {row[0]: row[1] for row in db.execute("SELECT student, points FROM final_grades WHERE run_id = ?", (run,))}
    exported = {row[0]: row[-1] for row in _export(whole, roster, course["base"] / "plain.csv", "--format", "csv")[1:]}
    for student, expected in EXPECTED.items():
        assert stored[student] == pytest.approx(expected), student
        assert exported[student] == f"{expected:g}" if float(expected).is_integer() else f"{expected:.2f}", student
        if student == "gil":
            assert student not in grades  # grades.csv lists the submissions; the exports and the report list gil
            continue
        results = _results(whole, student)
        assert results["score"] == results["extra_data"]["final"]["points"] == pytest.approx(expected), student
        assert float(grades[student]["final"]) == pytest.approx(expected), student
        assert results["extra_data"]["final"]["possible"] == 85
    assert grades["cy"]["total"] == "60" and grades["cy"]["final"] == "0"  # the first nine columns stay raw


def test_each_step_is_kept_with_its_reason(course):
    final = _results(course["whole"], "dee")["extra_data"]["final"]
    assert final["stages"]["03_minimax"]["counted"] == "excused"
    assert any("excused by J. Smith on 2025-03-10: medical note" in step for step in final["steps"])
    assert any("40 of 65 counted, scaled to 52.31 of 85" in step for step in final["steps"])
    eve = _results(course["whole"], "eve")["extra_data"]["final"]
    assert eve["stages"]["05_winning_square"]["changes"][0]["request"] == "either square completes the line"
    assert [regrade["outcome"] for regrade in eve["regrades"]] == ["granted", "denied"]
    ada = _results(course["whole"], "ada")["extra_data"]["final"]
    assert (ada["bonus"], ada["bonus_earned"], ada["bonus_rule"]) == (15, 30, "extra")
    assert ada["stages"]["07_quickest_move"]["counted"] == "not assigned"
    assert _results(course["whole"], "ben")["extra_data"]["final"]["penalty"] == 2


def test_merged_shards_write_the_whole_runs_outputs_byte_for_byte(course):
    whole, merged = course["whole"], course["merged"]
    assert (merged / "grades.csv").read_bytes() == (whole / "grades.csv").read_bytes()
    for student in EXPECTED:
        if student == "gil":
            continue
        for name in ("results.json", "feedback.html"):
            assert (merged / student / name).read_bytes() == (whole / student / name).read_bytes(), (student, name)
    roster = course["files"]["roster"]
    for args in (("--format", "canvas"), ("--format", "moodle", "--columns", "stages"), ("--format", "csv")):
        from_whole = _export(whole, roster, course["base"] / "from-whole.csv", *args)
        from_merged = _export(merged, roster, course["base"] / "from-merged.csv", *args)
        assert from_merged == from_whole, args


def test_the_student_with_no_submission_is_recorded_once_and_merged(course):
    owner = course["shards"][shard_of("gil", 2) - 1]
    for out in (course["whole"], course["merged"], owner):
        db = sqlite3.connect(out / "gradebook.db")
        (run,) = db.execute("SELECT MAX(id) FROM runs").fetchone()
        rows = db.execute("SELECT status FROM final_grades WHERE run_id = ? AND student = 'gil'", (run,)).fetchall()
        assert rows == [("not submitted",)], out
    other = course["shards"][2 - shard_of("gil", 2)]
    db = sqlite3.connect(other / "gradebook.db")
    (run,) = db.execute("SELECT MAX(id) FROM runs").fetchone()
    assert not db.execute("SELECT 1 FROM final_grades WHERE run_id = ? AND student = 'gil'", (run,)).fetchall()


def test_merge_refuses_shards_graded_with_other_course_files(course, tmp_path):
    changed = tmp_path / "overrides.toml"
    changed.write_text(OVERRIDES.replace("adjust = -2", "adjust = -3"))
    shard = tmp_path / "shard-2"
    shutil.copytree(course["shards"][1], shard)
    args = [arg for arg in course["args"] if not arg.startswith("--overrides")] + [f"--overrides={changed}"]
    done = grade(course["base"] / "class", shard, *args, "--time-limit", "10", "--shard", "2/2")
    assert done.returncode == 0, done.stderr
    done = _run("merge", str(course["shards"][0]), str(shard), "--out", str(tmp_path / "merged"))
    assert done.returncode == 2 and "another course policy, overrides or roster" in done.stderr
    assert not (tmp_path / "merged").exists()


def test_a_part_run_keeps_the_course_applied_to_everyone(course, tmp_path):
    out = tmp_path / "part"
    shutil.copytree(course["whole"], out)
    done = grade(course["base"] / "class", out, *course["args"], "--time-limit", "10", "--student", "ben")
    assert done.returncode == 0, done.stderr
    assert (out / "grades.csv").read_bytes() == (course["whole"] / "grades.csv").read_bytes()
    assert _results(out, "cy")["score"] == 0 and _results(out, "dee")["score"] == pytest.approx(52.31)


def test_overrides_are_checked_before_anything_is_graded(course, tmp_path):
    for text, message in (
        (OVERRIDES.replace('student = "dee"', 'student = "zed"'), "'zed', who is not a student of the roster"),
        (OVERRIDES.replace('stage = "03_minimax"', 'stage = "03_minimaks"'), "names no stage of the course"),
        (OVERRIDES.replace("adjust = -2", "adjust = -20"), "outside -10 to 10"),
        (
            OVERRIDES + '[[overrides]]\nstudent = "dee"\nstage = "03_minimax"\nset = 1\nreason = "x"\nby = "y"\n'
            "on = 2025-03-13\n",
            "changed twice",
        ),  # fmt: skip
    ):
        bad = tmp_path / "overrides.toml"
        bad.write_text(text)
        out = tmp_path / "out"
        args = [arg for arg in course["args"] if not arg.startswith("--overrides")] + [f"--overrides={bad}"]
        done = grade(course["base"] / "class", out, *args)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()


# ---------------------------------------------------------------------------------------------------------------
# The arithmetic, one rule at a time


def _result(scores: dict[str, float], penalties: dict[str, float] | None = None) -> SubmissionResult:
    stages = {
        stage.id: StageResult(stage.id, scores.get(stage.id, 0.0), stage.points, Outcome.PASSED, "") for stage in STAGES
    }
    result = SubmissionResult("kim", stages, "", "bubblewrap", "", 1.0)
    if penalties is not None:
        result.lateness = {
            stage_id: Lateness(None, "", None, "", 1, "day", 10.0, penalty, scores.get(stage_id, 0) - penalty)
            for stage_id, penalty in penalties.items()
        }
    return result


def _change(stage: str, action: str, value: float | None) -> Change:
    return Change(stage, action, value, "why", "me", "2025-03-10")


def test_changes_never_take_a_stage_below_zero_or_above_its_points():
    result = _result({"01_rules": 9, "03_minimax": 20})
    changes = {"01_rules": _change("01_rules", "adjust", 5), "03_minimax": _change("03_minimax", "adjust", -20)}
    final = final_grade(result, CourseSettings(), changes)
    assert final.stages["01_rules"].points == 10 and final.stages["03_minimax"].points == 0
    assert final.points == 10


def test_a_set_replaces_the_late_penalty_and_an_excuse_scales_the_rest():
    result = _result({"01_rules": 10, "02_count_games": 10}, {"01_rules": 5, "02_count_games": 5})
    final = final_grade(result, CourseSettings(), {"01_rules": _change("01_rules", "set", 10)})
    assert (final.points, final.penalty, final.stages["01_rules"].points) == (15, 10, 10)
    everything_but_01 = {s.id: _change(s.id, "excuse", None) for s in STAGES if s.id != "01_rules" and not s.bonus}
    final = final_grade(_result({"01_rules": 7}), CourseSettings(), everything_but_01)
    assert final.points == 70  # 7 of the 10 counted, scaled to the 100 the course is out of


def test_every_stage_excused_is_no_grade_not_a_zero():
    final = final_grade(_result({}), CourseSettings(), {s.id: _change(s.id, "excuse", None) for s in STAGES})
    assert final.status == "excused" and final.points == 0


def test_the_bonus_rules():
    scores = {"01_rules": 10, "08_alpha_beta": 10, "09_best_squares": 10}
    assert final_grade(_result(scores), CourseSettings(bonus="apart")).points == 10
    assert final_grade(_result(scores), CourseSettings(bonus="apart")).bonus_earned == 20
    assert final_grade(_result(scores), CourseSettings(bonus="extra")).points == 30
    capped = final_grade(_result(scores), CourseSettings(bonus="extra", bonus_cap=Fraction(5)))
    assert (capped.points, capped.bonus) == (15, 5)
    off = final_grade(_result(scores), CourseSettings(bonus="off"))
    assert (off.points, off.bonus_earned, off.stages["08_alpha_beta"].counted) == (10, 0, "bonus off")


def test_an_unassigned_stage_counts_nowhere():
    settings = CourseSettings(assigned=("01_rules", "02_count_games"))
    final = final_grade(_result({"01_rules": 10, "02_count_games": 5, "03_minimax": 20}), settings)
    assert (final.points, final.possible, final.raw) == (15, 20, 15)
    assert final.stages["03_minimax"].counted == "not assigned"


def test_an_ungraded_submission_has_no_grade():
    result = _result({"01_rules": 10})
    result.ungraded = "the grader failed while reading it"
    final = final_grade(result, CourseSettings())
    assert final.status == "ungraded" and "not a grade" in final.steps[0]


def test_the_grade_table_is_checked_whole(tmp_path):
    path = tmp_path / "policy.toml"
    for text, message in (
        ('[grade]\nbonus = "sometimes"\n', "grade.bonus must be one of"),
        ('[grade]\nassigned = ["01_rules", "08_alpha_beta"]\n', "names the bonus stage"),
        ('[grade]\nassigned = ["1_rules"]\n', "names no stage of the course"),
        ('[grade]\nbonus = "apart"\nbonus_cap = 5\n', 'is for bonus = "extra"'),
        ('[grade]\nbonus = "extra"\nbonus_cap = 500\n', "from 0 to"),
        ("[grade]\nassigned = []\n", "is empty"),
        ("[grade]\nweights = 1\n", "unknown key 'weights'"),
    ):
        path.write_text(text)
        with pytest.raises(PolicyError, match=message):
            load_policy(path)


def test_a_hand_written_overrides_file_reads_back(tmp_path):
    path = tmp_path / "overrides.toml"
    path.write_text(OVERRIDES)
    overrides = load_overrides(path)
    changes, regrades = overrides.for_student("eve")
    assert changes["05_winning_square"].action == "set" and changes["05_winning_square"].request
    assert [regrade.outcome for regrade in regrades] == ["granted", "denied"]
    path.write_text(OVERRIDES.replace('outcome = "denied"', 'outcome = "denied"\nadjust = 1'))
    with pytest.raises(OverridesError, match="a denied request changes nothing"):
        load_overrides(path)


def test_an_excused_bonus_stage_stays_out_of_the_core():
    result = _result({"01_rules": 10, "08_alpha_beta": 10})
    final = final_grade(
        result, CourseSettings(bonus="extra"), {"08_alpha_beta": _change("08_alpha_beta", "excuse", None)}
    )
    assert (final.raw, final.points, final.bonus_earned) == (10, 10, 0)


def test_gradescope_gives_the_grade_the_class_run_gives(course, tmp_path):
    """The same course settings bundled for Gradescope: is ada's score there her final grade here? (Gradescope
    applies its own late policy, and ada was on time, so the two must agree.)"""
    from tests.test_gradescope import grade as gradescope_grade

    bundle = tmp_path / "autograder.zip"
    done = _run("gradescope", str(bundle), "--policy", str(course["files"]["policy"]))
    assert done.returncode == 0, done.stderr
    files = {stage.filename: reference(stage.id) for stage in STAGES}
    results, done = gradescope_grade(bundle, tmp_path / "root", files)
    assert done.returncode == 0, done.stderr
    assert results["score"] == _results(course["whole"], "ada")["score"] == EXPECTED["ada"]
    assert results["extra_data"]["final"] == _results(course["whole"], "ada")["extra_data"]["final"]
