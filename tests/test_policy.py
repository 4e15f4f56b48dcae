"""The course policy: due dates, grace, late penalty and extensions, on the example class, checked by hand.

The class is a copy of four students of examples/submissions whose submission times are set the three ways the
grader reads them (a collection tool's timestamp.txt, a git commit, the file times); their raw points are the
example class's (tests/golden/example_class/grades.csv).
"""

import csv
import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest

from autograder.admin.final_grade import final_grade
from autograder.admin.late import apply_policy
from autograder.admin.policy import (
    LateRule,
    PolicyError,
    late_units,
    load_policy,
    penalty_percent,
    penalty_points,
)
from autograder.admin.settings import DEFAULT_SETTINGS
from autograder.admin.submitted import (
    NO_TIME,
    Submitted,
    git_commit_time,
    parse_timestamp,
    submission_time,
    submission_times,
)
from autograder.course.stages import CORE_STAGES, STAGES
from autograder.grading.class_loop import untimed_notes
from autograder.outputs.report import feedback_html, report_html
from autograder.outputs.results import raw_json, to_json
from autograder.record import Outcome, StageResult, SubmissionResult
from tests.classes import ROOT, grade, read_grades, reference

EXAMPLES = ROOT / "examples" / "submissions"
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope-results.schema.json").read_text())
BERLIN_DUE = datetime.fromisoformat("2025-03-07T23:59:00+01:00")  # every stage's due date below

POLICY = """
time_zone = "Europe/Berlin"
grace_minutes = 15
collected_by = "nbgrader"

[due]
01_rules = 2025-03-07T23:59:00
02_count_games = 2025-03-07T23:59:00
03_minimax = 2025-03-07T23:59:00
04_memoization = 2025-03-07T23:59:00
05_winning_square = 2025-03-07T23:59:00
06_count_results = 2025-03-07T23:59:00
07_quickest_move = 2025-03-07T23:59:00

[late]
per = "day"
percent = 10
cap = 50
zero_after = 7

[[extensions]]
student = "ada"
days = 3

[[extensions]]
student = "linus"
stage = "07_quickest_move"
days = 2
"""


# ---------------------------------------------------------------------------------------------------------------
# The arithmetic


def test_lateness_counts_started_units_from_the_due_date_and_the_grace_only_forgives():
    grace = timedelta(minutes=15)
    assert late_units(BERLIN_DUE, BERLIN_DUE, grace, "day") == 0
    assert late_units(BERLIN_DUE + timedelta(minutes=15), BERLIN_DUE, grace, "day") == 0  # within the grace
    assert late_units(BERLIN_DUE + timedelta(minutes=16), BERLIN_DUE, grace, "day") == 1
    assert late_units(BERLIN_DUE + timedelta(days=1), BERLIN_DUE, grace, "day") == 1
    assert late_units(BERLIN_DUE + timedelta(days=1, seconds=1), BERLIN_DUE, grace, "day") == 2
    assert late_units(BERLIN_DUE + timedelta(hours=3, minutes=1), BERLIN_DUE, timedelta(0), "hour") == 4
    assert late_units(BERLIN_DUE - timedelta(days=3), BERLIN_DUE, grace, "day") == 0


def test_penalty_percent_caps_and_zero_after():
    rule = LateRule("day", Fraction(10), Fraction(50), 7)
    assert [penalty_percent(units, rule) for units in (0, 1, 2, 5, 6, 7, 8)] == [0, 10, 20, 50, 50, 50, 100]
    assert penalty_percent(30, LateRule("day", Fraction(10))) == 100  # never more than all of it


def test_points_off_round_half_up_to_cents_and_never_exceed_the_points_earned():
    assert str(penalty_points(10, 10, Fraction("10.05"))) == "1.01"  # 1.005 exactly: half up (a float says 1.00)
    assert str(penalty_points(15, 15, Fraction("3.35"))) == "0.50"  # 0.5025
    assert str(penalty_points(12, 20, Fraction(20))) == "4.00"
    assert str(penalty_points(2.5, 20, Fraction(50))) == "2.5"  # 10 off a stage that earned 2.5: it scores 0


def test_nbgrader_timestamps_and_iso_8601_are_read_and_naive_times_are_not():
    assert parse_timestamp("2025-03-07 22:59:12.503241 UTC") == datetime(2025, 3, 7, 22, 59, 12, 503241, tzinfo=UTC)
    berlin = parse_timestamp("2025-03-07 23:59:12.000000 Europe/Berlin")
    assert berlin == datetime(2025, 3, 7, 22, 59, 12, tzinfo=UTC)
    assert parse_timestamp("2025-03-07 23:59:12 +0100") == berlin
    assert parse_timestamp("2025-03-07T23:59:12+01:00\n") == berlin
    assert parse_timestamp("2025-03-07 23:59:12") is None
    assert parse_timestamp("next tuesday") is None


# ---------------------------------------------------------------------------------------------------------------
# Bad policy files: one line, exit 2, nothing graded or written


BAD_POLICIES = {
    "not toml": ("[due\n", "is not valid TOML"),
    "a date without a time zone": ("[due]\n01_rules = 2025-03-07T23:59:00\n", "has no time zone"),
    "a date without a time": ('time_zone = "UTC"\n[due]\n01_rules = 2025-03-07\n', "needs a date and a time"),
    "an unknown stage": ('time_zone = "UTC"\n[due]\n08_chess = 2025-03-07T23:59:00\n', "names no stage"),
    "an unknown time zone": ('time_zone = "Mars/Olympus"\n', "is not a time zone"),
    "a misspelt key": ("[late]\npercents = 10\n", "unknown key 'percents'"),
    "a negative penalty": ("[late]\npercent = -5\n", "late.percent must be 0 or more"),
    "an extension for a student not in the class": (
        '[[extensions]]\nstudent = "bob"\ndays = 2\n',
        "the extension for 'bob' names no student in the class",
    ),
    "an extension without an amount": ('[[extensions]]\nstudent = "ada"\n', "needs exactly one of days, hours"),
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_a_bad_policy_is_one_line_before_anything_is_graded(case, tmp_path, capsys):
    from autograder.verbs import grade as grading

    text, expected = BAD_POLICIES[case]
    policy = tmp_path / "policy.toml"
    policy.write_text(text)
    out = tmp_path / "out"
    assert grading.main([str(EXAMPLES), "--out", str(out), "--policy", str(policy), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert expected in error and error.count("\n") == 1, error
    assert not out.exists()


def test_an_extension_must_name_a_roster_student_when_there_is_a_roster(tmp_path, capsys):
    from autograder.verbs import grade as grading

    policy = tmp_path / "policy.toml"
    policy.write_text('[[extensions]]\nstudent = "ada"\ndays = 2\n')
    roster = tmp_path / "roster.csv"
    roster.write_text("folder,id\nalan,S2\n")
    args = [str(EXAMPLES), "--out", str(tmp_path / "out"), "--policy", str(policy), "--roster", str(roster)]
    assert grading.main([*args, "--quiet"]) == 2
    assert "the extension for 'ada' names no student in the roster" in capsys.readouterr().err


def test_the_example_policy_parses():
    policy = load_policy(ROOT / "examples" / "course-policy.example.toml")
    assert len(policy.due) == 7 and policy.extension("ada", "01_rules").describe() == "3 days"
    with pytest.raises(PolicyError):
        load_policy(ROOT / "examples" / "no-such-policy.toml")


# ---------------------------------------------------------------------------------------------------------------
# The example class under the policy


def _set_times(folder: Path, when: datetime) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when.timestamp(), when.timestamp()))


def _git(folder: Path, *args: str, date: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_GLOBAL": "/dev/null"}
    identity = ["-c", "user.name=Katherine", "-c", "user.email=k@example.edu", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *identity, *args], cwd=folder, env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """ada (extended 3 days, 2 days late), linus (2 days late, extended on 07), alan (10 days late), katherine
    (a git commit 11 minutes late, within the grace), graded with the policy and a roster naming a fifth."""
    base = tmp_path_factory.mktemp("policy")
    submissions = base / "submissions"
    for name in ("ada", "alan", "katherine", "linus"):
        shutil.copytree(EXAMPLES / name, submissions / name)
    _set_times(submissions / "ada", BERLIN_DUE + timedelta(days=2))
    _set_times(submissions / "alan", BERLIN_DUE + timedelta(days=10))
    _set_times(submissions / "linus", BERLIN_DUE + timedelta(days=30))  # the timestamp file wins over these
    # nbgrader's format and place (submitted/<student>/<assignment>/timestamp.txt, one per stage folder);
    # 2025-03-09 11:00 in Berlin: 1 day 11 h 1 min late, so 2 started days
    for stage_folder in (submissions / "linus").iterdir():
        (stage_folder / "timestamp.txt").write_text("2025-03-09 10:00:00.000000 UTC")
    _git(submissions / "katherine", "init", "-q", date="2025-03-08T00:10:00+01:00")
    _git(submissions / "katherine", "add", ".", date="2025-03-08T00:10:00+01:00")
    _git(submissions / "katherine", "commit", "-qm", "my stages", date="2025-03-08T00:10:00+01:00")
    policy = base / "policy.toml"
    policy.write_text(POLICY)
    roster = base / "roster.csv"
    roster.write_text(
        "folder,id,name,email,section\n"
        'ada,S1,"Lovelace, Ada",ada@example.edu,A\nalan,S2,"Turing, Alan",alan@example.edu,A\n'
        'katherine,S3,"Johnson, Katherine",kj@example.edu,B\nlinus,S4,"Torvalds, Linus",linus@example.edu,B\n'
        'barbara,S5,"Liskov, Barbara",bl@example.edu,B\n'
    )
    out = base / "out"
    done = grade(submissions, out, "--policy", str(policy), "--roster", str(roster), "--time-limit", "10")
    assert done.returncode == 0, done.stderr
    return submissions, out, roster


def _late(out: Path, student: str) -> dict:
    return json.loads((out / student / "results.json").read_text())["extra_data"]["late"]


def _final(out: Path, student: str) -> float:
    """The student's final grade as results.json gives it: its score, which is extra_data.final's points."""
    results = json.loads((out / student / "results.json").read_text())
    assert results["score"] == results["extra_data"]["final"]["points"]
    return results["score"]


def test_final_scores_by_hand(graded):
    submissions, out, _ = graded
    # ada: 2 days after the due date, 3 days of extension on every stage: on time, 100.
    assert _final(out, "ada") == 100
    stages = _late(out, "ada")["stages"]
    assert {stages[stage.id]["extension"] for stage in CORE_STAGES} == {"3 days"}  # the bonus stages have no due date
    # linus (raw 10, 10, 0, 20, 0, 0, 15): 2 days late, 10 % of each stage's points a day, so 20 % off
    # 01 (2 of 10 -> 8), 02 (2 of 10 -> 8), 04 (4 of 20 -> 16); 03 earned 0 and stays 0 (never below);
    # 07 has a 2-day extension (due 2025-03-09 23:59): on time, 15. 8 + 8 + 16 + 15 = 47.
    linus = _late(out, "linus")
    assert _final(out, "linus") == 47
    assert [linus["stages"][s]["score"] for s in ("01_rules", "02_count_games", "03_minimax", "04_memoization")] == [
        8,
        8,
        0,
        16,
    ]
    quickest = linus["stages"]["07_quickest_move"]
    assert (quickest["late"], quickest["score"], quickest["extension"]) == (0, 15, "2 days")
    assert linus["stages"]["01_rules"]["late"] == 2 and linus["stages"]["01_rules"]["penalty_percent"] == 20
    assert linus["stages"]["01_rules"]["source"] == "timestamp file"
    assert linus["stages"]["01_rules"]["submitted"] == "2025-03-09T11:00:00+01:00"
    # alan (raw 40): 10 days late, more than zero_after = 7: every stage earns 0.
    assert _final(out, "alan") == 0
    assert _late(out, "alan")["stages"]["01_rules"]["penalty_percent"] == 100
    # katherine (raw 30): committed 11 minutes after the due date, within the 15 minutes of grace: 30.
    katherine = _late(out, "katherine")
    assert _final(out, "katherine") == 30
    assert katherine["stages"]["01_rules"]["source"] == "git commit"
    assert katherine["stages"]["01_rules"]["submitted"] == "2025-03-08T00:10:00+01:00"


def test_grades_csv_keeps_the_raw_points(graded):
    _, out, _ = graded
    grades = read_grades(out)
    assert {name: row["total"] for name, row in grades.items()} == {
        "ada": "100",
        "alan": "40",
        "katherine": "30",
        "linus": "55",
    }


def test_results_stay_gradescopes_format_and_the_gradebook_keeps_the_policy(graded):
    import sqlite3

    _, out, _ = graded
    for student in ("ada", "alan", "katherine", "linus"):
        results = json.loads((out / student / "results.json").read_text())
        jsonschema.validate(results, SCHEMA, cls=jsonschema.Draft202012Validator)
        assert results["score"] == _final(out, student)  # the final grade; the raw points stay in "total"
    db = sqlite3.connect(out / "gradebook.db")
    rows = db.execute("SELECT student, SUM(score), MAX(late) FROM late_results GROUP BY student").fetchall()
    assert rows == [("ada", 100.0, 0), ("alan", 0.0, 10), ("katherine", 30.0, 0), ("linus", 47.0, 2)]
    # the raw result is stored raw: a reused result gets the policy of the run that reuses it
    stored = json.loads(db.execute("SELECT results_json FROM submissions WHERE student = 'linus'").fetchone()[0])
    assert "late" not in stored["extra_data"]


def test_report_and_feedback_show_late_days_penalty_and_extension(graded):
    _, out, _ = graded
    report = (out / "report.html").read_text()
    assert "late work" in report and "01: 2 days late, -2" in report
    assert "1 student in the roster with no submission (not submitted): barbara" in report
    page = (out / "linus" / "feedback.html").read_text()
    assert "Deadlines" in page and "2025-03-09T11:00:00+01:00 (timestamp file)" in page
    assert 'Your grade: <b class="grand">47 of 100</b>' in page  # the final grade, from the policy's penalties
    assert "-2 (20 %)" in page and "2 days" in page


def test_a_folder_not_in_the_roster_is_flagged(graded, tmp_path):
    submissions, out, roster = graded
    shutil.copy(out / "gradebook.db", tmp_path / "gradebook.db")  # the same files: every result is reused
    short = tmp_path / "roster.csv"
    short.write_text("\n".join(roster.read_text().splitlines()[:-2]) + "\n")  # without linus and barbara
    book = ["--gradebook", str(tmp_path / "gradebook.db")]
    done = grade(submissions, tmp_path / "out", "--roster", str(short), "--time-limit", "10", *book)
    assert done.returncode == 0
    assert "not in the roster" in (tmp_path / "out" / "report.html").read_text()
    assert "linus" in (tmp_path / "out" / "report.html").read_text().split("not in the roster")[1][:200]


def test_exports_use_the_final_scores_and_the_roster(graded, tmp_path):
    from autograder.admin import exports

    _, out, roster = graded
    target = tmp_path / "canvas.csv"
    assert exports.main([str(out), str(target), "--format", "canvas", "--roster", str(roster)]) == 0
    rows = list(csv.reader(target.read_text().splitlines()))
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "100"
    assert {row[2]: row[-1] for row in rows[2:]} == {"S1": "100", "S2": "0", "S3": "30", "S4": "47", "S5": "0"}
    assert exports.main([str(out), str(target), "--format", "csv", "--roster", str(roster), "--scores", "raw"]) == 0
    assert {row[0]: row[-1] for row in list(csv.reader(target.read_text().splitlines()))[1:]}["linus"] == "55"


def test_submission_time_reads_git_without_running_anything_of_the_repository(tmp_path):
    repo = tmp_path / "student"
    (repo / "01_rules").mkdir(parents=True)
    (repo / "01_rules" / "rules.py").write_text("x = 1\n")
    _git(repo, "init", "-q", date="2025-03-01T10:00:00+00:00")
    _git(repo, "add", ".", date="2025-03-01T10:00:00+00:00")
    _git(repo, "commit", "-qm", "one", date="2025-03-01T10:00:00+00:00")
    marker = tmp_path / "ran"
    with open(repo / ".git" / "config", "a") as config:  # what a hostile repository could ask git to run
        config.write(f"[core]\n\tfsmonitor = touch {marker}\n\tpager = touch {marker}\n")
        config.write(f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = touch {marker}\n")
    submitted = submission_time(repo, "01_rules", "01_rules/rules.py")
    assert submitted.source == "git commit"
    assert submitted.when == datetime(2025, 3, 1, 10, tzinfo=UTC)
    assert git_commit_time(repo) == submitted.when
    assert not marker.exists()
    assert submission_time(repo, "02_count_games", None) is None  # nothing of that stage was graded


def test_a_git_file_pointing_at_a_classmate_never_lends_their_commit_dates(tmp_path):
    """Is the working tree of a folder whose .git is a file (gitdir: ../grace/.git) timed by the classmate's
    commit? It holds the same bytes, so only the refusal stops it; a 1 GiB config of grace's is never read."""
    grace, eve = tmp_path / "grace", tmp_path / "eve"
    for folder in (grace, eve):
        (folder / "01_rules").mkdir(parents=True)
        (folder / "01_rules" / "rules.py").write_text(reference("01_rules"))
    _git(grace, "init", "-q", date="2025-03-01T10:00:00+00:00")
    _git(grace, "add", ".", date="2025-03-01T10:00:00+00:00")
    _git(grace, "commit", "-qm", "one", date="2025-03-01T10:00:00+00:00")
    os.truncate(grace / ".git" / "config", 1 << 30)  # sparse: costs nothing here, would cost git a GiB
    (eve / ".git").write_text("gitdir: ../grace/.git\n")
    _set_times(eve, BERLIN_DUE + timedelta(days=19))
    graded = {"01_rules": "01_rules/rules.py"}
    assert submission_times(eve, graded)["01_rules"] == Submitted(BERLIN_DUE + timedelta(days=19), "file times")
    assert submission_times(grace, graded)["01_rules"] == Submitted(datetime(2025, 3, 1, 10, tzinfo=UTC), "git commit")


def _policy_grade(tmp_path, submissions: Path, text: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    policy = tmp_path / "late-policy.toml"
    policy.write_text(text)
    out = tmp_path / "out"
    done = grade(submissions, out, "--policy", str(policy), "--time-limit", "10")
    assert done.returncode == 0, done.stderr
    return out


LATE_POLICY = """
[due]
01_rules = 2025-03-07T23:59:00+01:00
02_count_games = 2025-03-07T23:59:00+01:00
[late]
percent = 10
zero_after = 7
"""


def test_a_stage_handed_in_under_a_near_miss_name_is_timed_like_an_exact_one(tmp_path):
    """Is a stage folder or module under a near-miss name (1_rules/, 01-count-games/, Rules.py) that the
    intake grades also the file whose time decides lateness? (19 days late once scored 100: no time, never late)"""
    submissions = tmp_path / "submissions"
    late = BERLIN_DUE + timedelta(days=19)
    for student, rules, games in (
        ("nina", "1_rules/rules.py", "02-count-games/count_games.py"),
        ("noor", "Rules.py", "count_games (1).py"),
        ("grace", "01_rules/rules.py", "02_count_games/count_games.py"),
    ):
        for name, stage_id in ((rules, "01_rules"), (games, "02_count_games")):
            path = submissions / student / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(reference(stage_id))
        _set_times(submissions / student, late if student != "grace" else BERLIN_DUE - timedelta(days=1))
    out = _policy_grade(tmp_path, submissions, LATE_POLICY)
    for student in ("nina", "noor"):
        late_stages = _late(out, student)["stages"]
        assert read_grades(out)[student]["01_rules"] == "10"  # graded as the exact names
        for stage_id in ("01_rules", "02_count_games"):
            assert late_stages[stage_id]["late"] == 19, (student, stage_id, late_stages[stage_id])
            assert late_stages[stage_id]["score"] == 0 and late_stages[stage_id]["source"] == "file times"
    grace = _late(out, "grace")
    assert grace["stages"]["01_rules"]["late"] == 0 and _final(out, "grace") == 20


def test_a_timestamp_file_the_student_wrote_is_never_believed(tmp_path):
    """Is a timestamp.txt inside a student's own folder (or zip, or repository) ignored unless the course says
    the class was collected by a tool that writes it (nbgrader), where it is the tool's and not the student's?"""
    submissions = tmp_path / "submissions"
    for student in ("sly", "grace"):
        path = submissions / student / "01_rules" / "rules.py"
        path.parent.mkdir(parents=True)
        path.write_text(reference("01_rules"))
        _set_times(submissions / student, BERLIN_DUE + timedelta(days=19))
    on_time = "2025-03-01 10:00:00.000000 UTC"
    (submissions / "sly" / "timestamp.txt").write_text(on_time)
    (submissions / "sly" / "01_rules" / "timestamp.txt").write_text(on_time)
    out = _policy_grade(tmp_path, submissions, LATE_POLICY)
    for student in ("sly", "grace"):
        entry = _late(out, student)["stages"]["01_rules"]
        assert (entry["source"], entry["late"], entry["score"]) == ("file times", 19, 0), student
    collected = _policy_grade(tmp_path / "collected", submissions, 'collected_by = "nbgrader"\n' + LATE_POLICY)
    assert _late(collected, "sly")["stages"]["01_rules"]["source"] == "timestamp file"
    assert _late(collected, "grace")["stages"]["01_rules"]["late"] == 19


def test_a_file_changed_after_its_last_commit_is_timed_by_the_file_not_the_commit(tmp_path):
    """Is a stage file edited in the working tree after its last commit (the starter committed before the due
    date, the answer written 19 days later) timed by that commit? The commit's date does not describe the bytes
    graded, so its own file time does; an honest classmate whose file is the one committed keeps the commit's."""
    submissions = tmp_path / "submissions"
    before = (BERLIN_DUE - timedelta(days=2)).isoformat()
    for student in ("max", "grace"):
        folder = submissions / student
        (folder / "01_rules").mkdir(parents=True)
        (folder / "01_rules" / "rules.py").write_text(reference("01_rules") if student == "grace" else "# soon\n")
        _git(folder, "init", "-q", date=before)
        _git(folder, "add", ".", date=before)
        _git(folder, "commit", "-qm", "start", date=before)
        _set_times(folder, BERLIN_DUE + timedelta(days=19))
    (submissions / "max" / "01_rules" / "rules.py").write_text(reference("01_rules"))
    _set_times(submissions / "max", BERLIN_DUE + timedelta(days=19))
    out = _policy_grade(tmp_path, submissions, LATE_POLICY)
    assert read_grades(out)["max"]["01_rules"] == read_grades(out)["grace"]["01_rules"] == "10"
    changed = _late(out, "max")["stages"]["01_rules"]
    assert (changed["source"], changed["late"], changed["score"]) == ("file times", 19, 0), changed
    honest = _late(out, "grace")["stages"]["01_rules"]
    assert (honest["source"], honest["late"], honest["score"]) == ("git commit", 0, 10), honest


def test_only_the_timestamp_nbgrader_writes_counts_even_when_the_class_was_collected_by_it(tmp_path):
    """With collected_by = "nbgrader", is a timestamp.txt read anywhere but the assignment folder nbgrader made
    (submitted/<student>/<assignment>/timestamp.txt, written over the student's own)? One at the student's level
    beside flat files, or in a folder that is the student's own repository, is the student's."""
    submissions = tmp_path / "submissions"
    on_time, late = "2025-03-01 10:00:00.000000 UTC", "2025-03-26 10:00:00.000000 UTC"
    flat = submissions / "flo"
    flat.mkdir(parents=True)
    (flat / "rules.py").write_text(reference("01_rules"))
    (flat / "timestamp.txt").write_text(on_time)
    repository = submissions / "rex" / "01_rules"
    repository.mkdir(parents=True)
    (repository / "rules.py").write_text(reference("01_rules"))
    (repository / "timestamp.txt").write_text(on_time)
    _git(submissions / "rex", "init", "-q", date="2025-03-01T10:00:00+00:00")  # nothing committed: no git time
    honest = submissions / "grace" / "01_rules"
    honest.mkdir(parents=True)
    (honest / "rules.py").write_text(reference("01_rules"))
    (honest / "timestamp.txt").write_text(late)  # nbgrader's own: 19 days late
    for student in ("flo", "rex", "grace"):
        _set_times(submissions / student, BERLIN_DUE + timedelta(days=19))
    out = _policy_grade(tmp_path, submissions, 'collected_by = "nbgrader"\n' + LATE_POLICY)
    for student, source in (("flo", "file times"), ("rex", "file times"), ("grace", "timestamp file")):
        entry = _late(out, student)["stages"]["01_rules"]
        assert (entry["source"], entry["late"], entry["score"]) == (source, 19, 0), (student, entry)
        assert read_grades(out)[student]["01_rules"] == "10"


def test_a_graded_stage_whose_file_is_not_known_has_no_time_and_is_never_on_time_silently(tmp_path):
    """A stage that was graded but whose graded file the policy cannot find (or time) is NO_TIME, flagged in
    the results and the terminal, never "not submitted" (which is never late)."""
    stages = {
        stage.id: StageResult(stage.id, 0.0, stage.points, Outcome.MISSING, "not submitted", phase="intake")
        for stage in STAGES
    }
    stages["01_rules"] = StageResult("01_rules", 10.0, 10, Outcome.PASSED, "", phase="calls")
    stages["02_count_games"] = StageResult("02_count_games", 10.0, 10, Outcome.PASSED, "", phase="calls")
    result = SubmissionResult("kim", stages, "", "bubblewrap", "", 1.0)
    (tmp_path / "kim").mkdir()
    policy = load_policy_text(LATE_POLICY)
    files = {"02_count_games": "02_count_games/count_games.py"}  # 01's file unknown; 02's gone since
    lateness = apply_policy(policy, "kim", tmp_path / "kim", result, files)
    for stage_id in ("01_rules", "02_count_games"):
        assert (lateness[stage_id].source, lateness[stage_id].submitted) == (NO_TIME, None), stage_id
    assert lateness["03_minimax"].source == ""  # not submitted: nothing to time
    timed = dataclasses.replace(result, lateness=lateness)
    timed.final = final_grade(timed, DEFAULT_SETTINGS)
    (line,) = untimed_notes({"kim": timed})
    assert "kim" in line and "01_rules, 02_count_games" in line
    looks = report_html({"kim": timed}).split('id="needs-look"')[1].split("</section>")[0]
    assert "01_rules" in looks and "02_count_games" in looks and "no time found" in looks
    assert "Deadlines" in feedback_html(timed) and "no time found" in feedback_html(timed)


def test_the_gradebook_keeps_the_raw_result_made_from_the_written_one():
    """Is what the gradebook keeps for reuse, made from the results.json tree the run wrote (lateness and final grade
    in it), exactly to_json of the result without them, key order included?"""
    stages = {stage.id: StageResult(stage.id, 0.0, stage.points, Outcome.MISSING, "not submitted") for stage in STAGES}
    stages["01_rules"] = StageResult("01_rules", 10.0, 10, Outcome.PASSED, "", phase="calls")
    result = SubmissionResult("kim", stages, "", "bubblewrap", "", 1.0)
    timed = dataclasses.replace(result, lateness=late_on_day_two(result))
    timed.final = final_grade(timed, DEFAULT_SETTINGS)
    raw = to_json(dataclasses.replace(timed, lateness=None, final=None))
    assert raw_json(to_json(timed)) == raw and list(raw_json(to_json(timed))["extra_data"]) == list(raw["extra_data"])
    assert raw_json(to_json(timed))["score"] == 10 != to_json(timed)["score"]
    assert raw_json(to_json(result)) == to_json(result)


def late_on_day_two(result):
    """Stage one handed in a day and an hour after its due date, under the bundled late policy."""
    policy = load_policy_text(LATE_POLICY)
    due = policy.due["01_rules"]
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "01_rules").mkdir()
        rules = Path(folder) / "01_rules" / "rules.py"
        rules.write_text("")
        late = (due + timedelta(days=1, hours=1)).timestamp()
        os.utime(rules, (late, late))
        return apply_policy(policy, "kim", Path(folder), result, {"01_rules": "01_rules/rules.py"})


def test_collected_by_names_a_known_collection_tool():
    with pytest.raises(PolicyError, match="collected_by"):
        load_policy_text('collected_by = "my-own-script"\n')


def load_policy_text(text: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.toml"
        path.write_text(text)
        return load_policy(path)
