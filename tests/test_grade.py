"""Does `autograde grade` read every layout, explain bad input, write the promised files, and never lose a grade?"""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markupsafe import escape

from autograder.course.stages import ROOT, STAGE_BY_ID, STAGES, TOTAL_POINTS
from autograder.grading.submissions import find_class
from autograder.outputs import clean, clean_line, clean_tree, gradesheet
from autograder.outputs.folders import output_folders
from autograder.outputs.gradesheet import HEADER
from tests.classes import grade, perfect, read_grades, reference, starter, write_student, write_zip

CHEAP = ("01_rules", "05_winning_square")  # the quickest stages to grade, for tests about plumbing


def cheap(sources_of=reference) -> dict[str, str]:
    return {stage_id: sources_of(stage_id) for stage_id in CHEAP}


def points(*stage_ids) -> str:
    return str(sum(STAGE_BY_ID[s].points for s in stage_ids))


@pytest.mark.parametrize(
    "make, complaint",
    [
        (lambda tmp: tmp / "nowhere", "does not exist"),
        (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "holds no submissions"),
        (lambda tmp: (tmp / "file.txt").write_text("") * 0 or tmp / "file.txt", "is not a folder"),
    ],
)
def test_an_unusable_submissions_folder_is_one_line_and_exit_2(tmp_path, make, complaint):
    """Is a missing, empty or non-folder SUBMISSIONS a one-line error with exit code 2?"""
    result = grade(make(tmp_path), tmp_path / "out")
    assert result.returncode == 2
    assert complaint in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_an_unwritable_out_is_one_line_and_exit_2(tmp_path):
    """Is an OUT that cannot be created a one-line error with exit code 2, with nothing graded?"""
    write_student(tmp_path / "class" / "ada", cheap())
    (tmp_path / "a-file").write_text("")
    result = grade(tmp_path / "class", tmp_path / "a-file" / "out")
    assert result.returncode == 2 and "cannot write to" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def mixed_class(tmp_path_factory):
    """Every layout and every kind of broken file, graded once."""
    root = tmp_path_factory.mktemp("mixed")
    folder = root / "class"
    write_student(folder / "nested", cheap())
    write_student(folder / "flat", cheap(), nested=False)
    write_zip(folder / "zipped.zip", cheap())
    write_zip(folder / "wrapped.zip", cheap(), prefix="wrapped/")
    (folder / "corrupt.zip").write_bytes(b"PK\x03\x04 this is not a zip")
    write_student(folder / "broken", {"01_rules": "def winner(board)\n    return None\n", "05_winning_square": ""})
    (folder / "broken" / "05_winning_square" / "winning_square.py").write_bytes(
        b"# caf\xe9\ndef winning_square(b, m):\n"
    )
    write_student(folder / "unfinished", cheap(starter))
    missing_function = reference("01_rules").replace("def to_move(", "def whose_turn(")
    write_student(folder / "misnamed", {"01_rules": missing_function})
    (folder / ".DS_Store").write_text("")
    (folder / "notes.txt").write_text("not a submission")
    result = grade(folder, root / "out")
    return root / "out", result


def test_the_batch_goes_on_past_broken_submissions(mixed_class):
    out, result = mixed_class
    assert result.returncode == 0, result.stderr[-3000:]
    grades = read_grades(out)
    expected_students = {"nested", "flat", "zipped", "wrapped", "corrupt", "broken", "unfinished", "misnamed"}
    assert set(grades) == expected_students


@pytest.mark.parametrize("student", ["nested", "flat", "zipped", "wrapped"])
def test_every_layout_is_graded_alike(mixed_class, student):
    """Do nested folders, flat folders, zips and zips wrapped in a folder all earn the same full marks?"""
    out, _ = mixed_class
    row = read_grades(out)[student]
    assert row["total"] == points(*CHEAP)
    assert row["01_rules"] == points("01_rules") and row["02_count_games"] == "0"


def stage_message(out: Path, student: str, stage_id: str) -> tuple[float, str]:
    results = json.loads((out / student / "results.json").read_text())
    stage = results["extra_data"]["stages"][stage_id]
    outputs = " ".join(t["output"] for t in results["tests"] if t["extra_data"]["stage"] == stage_id)
    return stage["score"], stage["message"] + " " + outputs


@pytest.mark.parametrize(
    "student, stage_id, says",
    [
        ("nested", "02_count_games", "count_games.py was not submitted"),
        ("corrupt", "01_rules", "corrupt.zip could not be read"),
        ("broken", "01_rules", "could not be imported: SyntaxError at rules.py line 1"),
        ("broken", "05_winning_square", "is not UTF-8 text"),
        ("unfinished", "01_rules", "winner is not written yet"),
        ("misnamed", "01_rules", "rules.py has no function to_move"),
    ],
)
def test_each_problem_gets_a_clear_message_and_a_zero(mixed_class, student, stage_id, says):
    out, _ = mixed_class
    score, text = stage_message(out, student, stage_id)
    assert says in text
    assert score == 0 or (student == "misnamed" and score < STAGE_BY_ID[stage_id].points)


def test_grades_csv_has_the_pinned_header(mixed_class):
    out, _ = mixed_class
    first = (out / "grades.csv").read_text().splitlines()[0]
    assert first.startswith(  # the pinned nine columns first, whatever follows
        "student,01_rules,02_count_games,03_minimax,04_memoization,05_winning_square,06_count_results,07_quickest_move,total"
    )
    assert first.split(",") == HEADER
    assert HEADER[9:] in (["final"], ["08_alpha_beta", "09_best_squares", "10_symmetry", "bonus", "final"])


def test_results_json_follows_gradescopes_format(mixed_class):
    """Is each results.json what Gradescope reads: tests named by stage, visible and hidden, scores adding up?"""
    out, _ = mixed_class
    results = json.loads((out / "nested" / "results.json").read_text())
    assert results["score"] == float(points(*CHEAP))
    assert results["extra_data"]["max_total"] == TOTAL_POINTS
    visibilities = {t["visibility"] for t in results["tests"]}
    assert visibilities == {"visible", "after_published"}
    for test in results["tests"]:
        assert test["name"].split(":")[0] in {s.id for s in STAGES}
        assert test["status"] in ("passed", "failed") and 0 <= test["score"] <= test["max_score"]
    core = [t for t in results["tests"] if "bonus" not in t["tags"]]
    assert sum(t["max_score"] for t in core) == TOTAL_POINTS  # the bonus stages' tests are extra credit
    assert sum(t["score"] for t in results["tests"]) == results["score"]


def test_hidden_feedback_does_not_give_the_answer_away(mixed_class):
    """Does a failed hidden check show the board and the returned value, but not the expected answer?"""
    out, _ = mixed_class
    results = json.loads((out / "misnamed" / "results.json").read_text())
    failed = [t for t in results["tests"] if t["status"] == "failed" and t["visibility"] == "after_published"]
    assert failed and all("expected" not in t["output"] for t in failed)


def gradebook(out: Path) -> sqlite3.Connection:
    return sqlite3.connect(out / "gradebook.db")


def test_the_gradebook_holds_every_result(mixed_class):
    out, _ = mixed_class
    db = gradebook(out)
    students = {row[0] for row in db.execute("SELECT student FROM submissions")}
    assert students == set(read_grades(out))
    per_test = db.execute("SELECT COUNT(*) FROM test_results").fetchone()[0]
    tests_per_student = len(json.loads((out / "nested" / "results.json").read_text())["tests"])
    assert per_test == tests_per_student * len(students)


@pytest.mark.slow
def test_unchanged_work_is_reused_and_changed_work_regraded(tmp_path):
    """Is an unchanged submission reused, a changed one graded again, --regrade honoured, and history kept?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", cheap())
    write_student(folder / "bob", cheap(starter))
    assert grade(folder, out).returncode == 0
    assert grade(folder, out).returncode == 0
    db = gradebook(out)
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 2
    assert db.execute("SELECT SUM(reused) FROM run_students WHERE run_id = 2").fetchone()[0] == 2
    write_student(folder / "bob", cheap())
    assert grade(folder, out).returncode == 0
    assert read_grades(out)["bob"]["total"] == points(*CHEAP)
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 3
    assert grade(folder, out, "--regrade").returncode == 0
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 5
    history = db.execute("SELECT score FROM submissions WHERE student = 'bob' ORDER BY id").fetchall()
    assert [row[0] for row in history] == [0, float(points(*CHEAP)), float(points(*CHEAP))]


@pytest.mark.slow
def test_a_killed_batch_resumes_without_regrading_or_duplicates(tmp_path):
    """After SIGKILL mid-batch, does the same command finish the rest and match a clean run exactly?"""
    folder = tmp_path / "class"
    for number in range(6):
        write_student(folder / f"student{number}", {"03_minimax": reference("03_minimax"), **cheap()})
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out), "--quiet", "--jobs", "1"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done_before_kill = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if (out / "gradebook.db").exists():
            try:
                done_before_kill = gradebook(out).execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
            except sqlite3.OperationalError:
                done_before_kill = 0
            if done_before_kill >= 2:
                break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 2 <= done_before_kill < 6, "the batch must be killed part way through"
    done_before_kill = gradebook(out).execute("SELECT COUNT(*) FROM submissions").fetchone()[0]

    assert grade(folder, out).returncode == 0
    db = gradebook(out)
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 6, "each student graded exactly once"
    reused = db.execute("SELECT SUM(reused) FROM run_students WHERE run_id = 2").fetchone()[0]
    assert reused == done_before_kill
    assert grade(folder, tmp_path / "clean").returncode == 0
    assert (out / "grades.csv").read_text() == (tmp_path / "clean" / "grades.csv").read_text()


@pytest.mark.slow
def test_two_graders_can_share_a_gradebook(tmp_path):
    """Do two grader processes writing to one gradebook at once both finish, with an intact database?"""
    shared = tmp_path / "gradebook.db"
    processes = []
    for name in ("one", "two"):
        folder = tmp_path / name
        for number in range(4):
            write_student(folder / f"{name}{number}", cheap())
        command = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(tmp_path / f"out-{name}"),
                   "--gradebook", str(shared), "--quiet", "--jobs", "1"]  # fmt: skip
        processes.append(subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True))
    for process in processes:
        _, errors = process.communicate(timeout=300)
        assert process.returncode == 0, errors
    db = sqlite3.connect(shared)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 8
    assert db.execute("SELECT COUNT(DISTINCT run_id) FROM run_students").fetchone()[0] == 2


def test_a_perfect_submission_earns_every_point(tmp_path):
    write_student(tmp_path / "class" / "ada", perfect())
    result = grade(tmp_path / "class", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert read_grades(tmp_path / "out")["ada"]["total"] == str(TOTAL_POINTS)


def test_a_failure_in_one_of_a_class_of_ones_stages_side_by_side_is_that_submissions_result(
    tmp_path, monkeypatch, capsys
):
    """A class of one runs its stages side by side: when one of them raises inside the grader, the submission is
    "could not be graded" with the reason naming that stage, written and not stored, like any other fault."""
    from autograder.grading import grade as barrier
    from autograder.grading.judge import grade_stage
    from autograder.verbs import grade as grading

    def failing_on_one(stage, source, *args, **kwargs):
        if FAILS_HERE in source:
            "\udc80".encode()
        return grade_stage(stage, source, *args, **kwargs)

    monkeypatch.setattr(barrier, "grade_stage", failing_on_one)
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "bob", {**cheap(), "05_winning_square": FAILS_HERE + reference("05_winning_square")})
    assert grading.main([str(folder), "--out", str(out), "--quiet", "--jobs", "2"]) == 1
    assert "bob could not be graded: the grader failed while grading 05_winning_square" in capsys.readouterr().err
    results = json.loads((out / "bob" / "results.json").read_text())
    assert results["score"] == 0 and "UnicodeEncodeError" in results["extra_data"]["ungraded"]
    assert (out / "bob" / "feedback.html").exists()
    assert list(gradebook(out).execute("SELECT student FROM submissions")) == []


def test_a_crash_on_one_worked_example_still_asks_the_hidden_boards(tmp_path):
    """When the stage's child dies on a visible example (os._exit in to_move, after winner's replies were sent), is
    its hidden job still asked, of a child of its own, so that winner's hidden checks keep their points?"""
    crash = (
        "\n\nimport os\nimport time\n\n_winner, _to_move = winner, to_move\n\n\ndef winner(board):\n"
        '    if "".join(board) == "XOXOXOXOX":  # its last example: the child sends what it has after a slow call\n'
        "        time.sleep(0.05)\n    return _winner(board)\n\n\ndef to_move(board):\n"
        '    if "".join(board) == "OO  X  X ":  # its last example\n        os._exit(1)\n    return _to_move(board)\n'
    )
    write_student(tmp_path / "class" / "ada", {"01_rules": reference("01_rules") + crash})
    result = grade(tmp_path / "class", tmp_path / "out")
    assert result.returncode == 0, result.stderr[-2000:]
    tests = json.loads((tmp_path / "out" / "ada" / "results.json").read_text())["tests"]
    status = {t["extra_data"]["check"]: t["status"] for t in tests if t["extra_data"]["stage"] == "01_rules"}
    winner = ("winner/examples", "winner/no-line", "winner/rows", "winner/columns", "winner/diagonals")
    assert {status[check] for check in winner} == {"passed"}, status
    assert status["to_move/examples"] == status["to_move/all-positions"] == "failed"
    assert read_grades(tmp_path / "out")["ada"]["01_rules"] == "6"


def test_one_submissions_stages_on_several_cores_grade_as_one_at_a_time(tmp_path):
    """A class of one runs its stages side by side (--jobs 2): the same grades, every result in the course's order."""
    from tests.test_golden import normalised_results

    write_student(tmp_path / "class" / "ada", {**perfect(), "05_winning_square": starter("05_winning_square")})
    outputs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert grade(tmp_path / "class", out, "--jobs", jobs).returncode == 0
        results = normalised_results(json.loads((out / "ada" / "results.json").read_text()))
        outputs.append(((out / "grades.csv").read_text(), results))
    assert outputs[0] == outputs[1]
    assert list(outputs[1][1]["extra_data"]["stages"]) == [stage.id for stage in STAGES]
    assert read_grades(tmp_path / "jobs2")["ada"]["05_winning_square"] == "0"


@pytest.mark.slow
def test_graders_creating_one_gradebook_at_once_all_succeed(tmp_path):
    """Do three graders that create the same new gradebook at the same moment all get it (no "database is locked")?"""
    import multiprocessing

    from tests.racing import open_gradebook

    context = multiprocessing.get_context("spawn")
    failures = 0
    for attempt in range(15):
        barrier = context.Barrier(3)
        path = str(tmp_path / f"gradebook-{attempt}.db")
        processes = [context.Process(target=open_gradebook, args=(path, barrier)) for _ in range(3)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=120)
            failures += process.exitcode != 0
    assert failures == 0


# ---------------------------------------------------------------------------------------------------------------
# Options are checked before anything is graded or written


def loud(submissions: Path, out: Path, *extra: str, **kwargs) -> subprocess.CompletedProcess:
    """grade() with the summary and the messages on stdout (wide, so no line is wrapped)."""
    command = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), *extra]
    environment = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=environment, **kwargs)


def one_line_refusal(result: subprocess.CompletedProcess, says: str) -> None:
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and says in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "option, says",
    [
        (["--time-limit", "-1"], "positive number of seconds"),
        (["--time-limit", "0"], "positive number of seconds"),
        (["--time-limit", "nan"], "positive number of seconds"),
        (["--time-limit", "inf"], "positive number of seconds"),
        (["--time-limit", "1e9"], "too large"),
        (["--time-limit", "ten"], "number of seconds"),
        (["--jobs", "0"], "at least 1"),
        (["--jobs", "-4"], "at least 1"),
        (["--jobs", "1000000"], "too many"),
        (["--jobs", "two"], "whole number"),
    ],
)
def test_a_wrong_option_is_one_line_and_exit_2_with_nothing_written(tmp_path, option, says):
    """Is a time limit that is not a sensible number of seconds, or a wrong --jobs, refused before any work?"""
    write_student(tmp_path / "class" / "ada", cheap())
    one_line_refusal(grade(tmp_path / "class", tmp_path / "out", *option), says)
    assert not (tmp_path / "out").exists()


def _text_file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("not a gradebook\n")
    return tmp / "notes.txt"


def _foreign_database(tmp: Path) -> Path:
    db = sqlite3.connect(tmp / "other.db")
    db.execute("CREATE TABLE marks (student TEXT, mark REAL)")
    db.execute("INSERT INTO marks VALUES ('ada', 1)")
    db.commit()
    db.close()
    return tmp / "other.db"


def _folder(tmp: Path) -> Path:
    (tmp / "a-folder").mkdir()
    return tmp / "a-folder"


def _under_a_file(tmp: Path) -> Path:
    return _text_file(tmp) / "gradebook.db"


@pytest.mark.parametrize(
    "make, says",
    [
        (_text_file, "is not a gradebook (it is not an SQLite database)"),
        (_foreign_database, "is an SQLite database but not a gradebook"),
        (_folder, "is a folder, not a gradebook file"),
        (_under_a_file, "is not a folder"),
    ],
)
def test_a_gradebook_path_that_is_not_a_gradebook_is_one_line_and_nothing_is_written(tmp_path, make, says):
    """Is a --gradebook that is a text file, another database or a folder refused, OUT not created and it unchanged?"""
    write_student(tmp_path / "class" / "ada", cheap())
    path = make(tmp_path)
    before = path.read_bytes() if path.is_file() else None
    one_line_refusal(grade(tmp_path / "class", tmp_path / "out", "--gradebook", str(path)), says)
    assert not (tmp_path / "out").exists()
    assert (path.read_bytes() if path.is_file() else None) == before
    assert {p.name for p in tmp_path.iterdir()} == {"class", path.relative_to(tmp_path).parts[0]}  # nothing new


def test_no_usable_sandbox_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """Not root and no working bubblewrap (detect() refuses): is that one line, exit 2, and OUT never created?"""
    from autograder.grading import sandbox
    from autograder.verbs import grade as grading

    def refuse(fresh=False):
        raise RuntimeError("not root and bubblewrap does not work here; set AUTOGRADE_ISOLATION=none to grade anyway")

    monkeypatch.setattr(sandbox, "detect", refuse)
    write_student(tmp_path / "class" / "ada", cheap())
    assert grading.main([str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        "autograde grade: not root and bubblewrap does not work here; set AUTOGRADE_ISOLATION=none to grade anyway"
    ]
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# Reuse only what would be graded the same


def test_another_time_limit_regrades_and_says_why_and_the_first_limit_reuses_the_first_results(tmp_path):
    """Is a stored result reused only under the same time limit, with the reason said, and found again after?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", {"01_rules": reference("01_rules")})
    write_student(folder / "bob", {"01_rules": starter("01_rules")})
    first = loud(folder, out)
    assert first.returncode == 0, first.stderr
    grades = (out / "grades.csv").read_bytes()
    second = loud(folder, out, "--time-limit", "10")
    assert second.returncode == 0, second.stderr
    assert "2 regraded: the time limit changed (60 s -> 10 s)" in second.stdout
    assert "reused" not in second.stdout
    assert "2 regraded: the time limit changed (60 s -&gt; 10 s)" in (out / "report.html").read_text()
    assert json.loads((out / "ada" / "results.json").read_text())["extra_data"]["grading"]["time_limit"] == 10
    third = loud(folder, out)
    assert third.returncode == 0, third.stderr
    assert "2 of 2 submissions are unchanged since they were graded: reused." in third.stdout
    assert "regraded" not in third.stdout
    assert (out / "grades.csv").read_bytes() == grades
    db = gradebook(out)
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 4
    reused = db.execute("SELECT s.run_id, s.time_limit FROM run_students r JOIN submissions s ON s.id = r.submission_id"
                        " WHERE r.run_id = 3 AND r.reused = 1").fetchall()  # fmt: skip
    assert reused == [(1, 60.0), (1, 60.0)], "the third run takes over the first run's results"
    grading = json.loads((out / "ada" / "results.json").read_text())["extra_data"]["grading"]
    assert set(grading) == {"suite", "grader_version", "time_limit", "isolation", "cgroups"}
    assert grading["time_limit"] == 60 and grading["isolation"] in ("bubblewrap", "rlimits", "none")
    runs = db.execute("SELECT time_limit, isolation, cgroups, suite_hash FROM runs ORDER BY id").fetchall()
    assert [run[0] for run in runs] == [60.0, 10.0, 60.0] and {run[3] for run in runs} == {grading["suite"]}


# The gradebook as the first versions of the grader created it: no grading parameters beyond the suite.
OLD_SCHEMA = """
CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, suite_hash TEXT NOT NULL,
    isolation TEXT NOT NULL, submissions_dir TEXT NOT NULL);
CREATE TABLE submissions (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL, files_hash TEXT NOT NULL, suite_hash TEXT NOT NULL, graded_at TEXT NOT NULL,
    score REAL NOT NULL, max_score REAL NOT NULL, seconds REAL NOT NULL, results_json TEXT NOT NULL);
CREATE TABLE stage_scores (submission_id INTEGER NOT NULL REFERENCES submissions(id), stage TEXT NOT NULL,
    score REAL NOT NULL, max_score REAL NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (submission_id, stage));
CREATE TABLE test_results (submission_id INTEGER NOT NULL REFERENCES submissions(id), stage TEXT NOT NULL,
    check_id TEXT NOT NULL, name TEXT NOT NULL, score REAL NOT NULL, max_score REAL NOT NULL, outcome TEXT NOT NULL,
    visibility TEXT NOT NULL, output TEXT NOT NULL, PRIMARY KEY (submission_id, stage, check_id));
CREATE TABLE run_students (run_id INTEGER NOT NULL REFERENCES runs(id), student TEXT NOT NULL,
    submission_id INTEGER NOT NULL REFERENCES submissions(id), reused INTEGER NOT NULL, PRIMARY KEY (run_id, student));
"""


def test_an_older_gradebook_gains_the_new_columns_and_its_results_are_regraded_once(tmp_path):
    """Does a gradebook without the grading parameters open, and is its result (same files, same suite) regraded?"""
    from autograder.grading.reuse import suite_hash
    from autograder.grading.submissions import read_student

    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", {"01_rules": reference("01_rules")})
    out.mkdir()
    db = sqlite3.connect(out / "gradebook.db")
    db.executescript(OLD_SCHEMA)
    files_hash = read_student("ada", folder / "ada").files_hash
    db.execute("INSERT INTO runs VALUES (1, 'then', 'then', ?, 'bubblewrap', 'class')", (suite_hash(),))
    row = (files_hash, suite_hash())
    db.execute("INSERT INTO submissions VALUES (1, 1, 'ada', ?, ?, 'then', 3, 100, 1, '{}')", row)
    db.commit()
    db.close()
    result = loud(folder, out)
    assert result.returncode == 0, result.stderr
    assert "1 regraded: the stored result does not record its time limit and isolation" in result.stdout
    assert read_grades(out)["ada"]["01_rules"] == points("01_rules")
    db = gradebook(out)
    columns = {row[1] for row in db.execute("PRAGMA table_info(submissions)")}
    assert {"grader_version", "time_limit", "isolation", "cgroups"} <= columns
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 2
    assert "reused" in loud(folder, out).stdout  # the new row matches the next run


# ---------------------------------------------------------------------------------------------------------------
# One submission, one fault

FAILS_HERE = "# the grader fails on this file\n"


def test_a_failure_inside_the_grader_becomes_that_submissions_result(tmp_path, monkeypatch, capsys):
    """When grading one submission raises inside the grader, is it "could not be graded" with zeros, and only it?"""
    from autograder.grading import grade as barrier
    from autograder.grading.judge import grade_stage
    from autograder.verbs import grade as grading

    def failing_on_one(stage, source, *args, **kwargs):
        if FAILS_HERE in source:
            "\udc80".encode()  # UnicodeEncodeError, as a lone surrogate gives anywhere text is written
        return grade_stage(stage, source, *args, **kwargs)

    monkeypatch.setattr(barrier, "grade_stage", failing_on_one)
    folder, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "cat"):
        write_student(folder / name, cheap())
    write_student(folder / "bob", {**cheap(), "01_rules": FAILS_HERE + reference("01_rules")})
    assert grading.main([str(folder), "--out", str(out), "--quiet", "--jobs", "2"]) == 1
    errors = capsys.readouterr().err
    assert "bob could not be graded: the grader failed while grading 01_rules: UnicodeEncodeError" in errors
    grades = read_grades(out)
    assert grades["ada"]["total"] == grades["cat"]["total"] == points(*CHEAP)
    assert set(grades["bob"].values()) == {"bob", "0", ""}  # raw zeros; no final grade: it is not a grade
    assert grades["bob"]["final"] == ""
    results = json.loads((out / "bob" / "results.json").read_text())
    assert results["score"] == 0 and "could not be graded" in results["output"]
    assert "UnicodeEncodeError" in results["extra_data"]["ungraded"]
    assert {stage["outcome"] for stage in results["extra_data"]["stages"].values()} == {"ungraded"}
    assert {test["extra_data"]["outcome"] for test in results["tests"]} == {"ungraded"}
    assert len(results["tests"]) == len(json.loads((out / "ada" / "results.json").read_text())["tests"])
    report = (out / "report.html").read_text()
    ungraded = report[report.index('id="ungraded"') : report.index("</section>", report.index('id="ungraded"'))]
    assert "bob" in ungraded and "UnicodeEncodeError" in ungraded and "ada" not in ungraded
    assert (out / "bob" / "feedback.html").exists()
    db = gradebook(out)
    assert {row[0] for row in db.execute("SELECT student FROM submissions")} == {"ada", "cat"}

    monkeypatch.undo()  # the grader fixed: the next run grades bob (nothing of his was stored) and reuses the rest
    assert grading.main([str(folder), "--out", str(out), "--quiet"]) == 0
    assert read_grades(out)["bob"]["total"] == points(*CHEAP)
    assert db.execute("SELECT SUM(reused) FROM run_students WHERE run_id = 2").fetchone()[0] == 2


def test_a_result_the_class_report_cannot_draw_is_that_students_alone(tmp_path, monkeypatch, capsys):
    """When one student's row of the class report fails to draw, is that student "could not be graded", never
    stored, while the others' rows (each drawn once, as they were graded) fill the report?"""
    from autograder.outputs.report import views
    from autograder.verbs import grade as grading

    real_row = views.student_row

    def failing_for_bob(name, result, href):
        if name == "bob" and result.ungraded is None:  # his graded result; "could not be graded" draws
            "\udc80".encode()  # UnicodeEncodeError, as a lone surrogate gives anywhere text is written
        return real_row(name, result, href)

    monkeypatch.setattr(views, "student_row", failing_for_bob)
    folder, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "bob", "cat"):
        write_student(folder / name, cheap())
    drawn = []
    real_html = grading_pages().row_html

    def counted(name, *args):
        drawn.append(name)
        return real_html(name, *args)

    monkeypatch.setattr("autograder.outputs.report.row_html", counted)
    assert grading.main([str(folder), "--out", str(out), "--quiet", "--jobs", "2"]) == 1
    assert "bob could not be graded: the grader failed while rendering its results" in capsys.readouterr().err
    assert sorted(drawn) == ["ada", "bob", "cat"]  # once each, not again for the class report
    grades = read_grades(out)
    assert grades["ada"]["total"] == grades["cat"]["total"] == points(*CHEAP) and grades["bob"]["final"] == ""
    report = (out / "report.html").read_text()
    students = report[report.index('id="students"') :]
    assert all(f">{name}</a>" in students for name in ("ada", "bob", "cat"))
    assert {row[0] for row in gradebook(out).execute("SELECT student FROM submissions")} == {"ada", "cat"}


def grading_pages():
    from autograder.outputs.report import pages

    return pages


def test_gradescopes_run_uses_the_same_barrier(tmp_path, monkeypatch, capsys):
    """Does Gradescope's run write a valid results.json saying "could not be graded" when the grader fails on it?"""
    import jsonschema

    from autograder.grading import grade as barrier
    from autograder.verbs import gradescope

    def failing(stage, source, *args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(barrier, "grade_stage", failing)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "rules.py").write_text(reference("01_rules"))
    assert gradescope.run(tmp_path) == 1
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    schema = json.loads((ROOT / "tests" / "schemas" / "gradescope-results.schema.json").read_text())
    jsonschema.validate(results, schema, cls=jsonschema.Draft202012Validator)
    assert results["score"] == 0 and "could not be graded" in results["output"]
    assert "OperationalError: database is locked" in results["extra_data"]["ungraded"]
    assert "could not be graded" in capsys.readouterr().out


def test_a_failure_while_storing_leaves_nothing_of_that_submission(tmp_path):
    """If the gradebook refuses one submission half way through storing it, is none of it kept, and the rest?"""
    from autograder.outputs.gradebook import Gradebook

    folder, out, path = tmp_path / "class", tmp_path / "out", tmp_path / "gradebook.db"
    write_student(folder / "ada", cheap())
    write_student(folder / "bob", cheap())
    Gradebook(path).close()
    db = sqlite3.connect(path)  # a real SQLite error in the middle of bob's transaction, after his first rows
    db.execute("CREATE TRIGGER refuse_bob BEFORE INSERT ON test_results WHEN (SELECT student FROM submissions"
               " WHERE id = NEW.submission_id) = 'bob' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")  # fmt: skip
    db.commit()
    result = grade(folder, out, "--gradebook", str(path))
    assert result.returncode == 1
    assert "bob could not be graded: the grader failed while storing it in the gradebook" in result.stderr
    assert "disk I/O error" in result.stderr and "Traceback" not in result.stderr
    assert {row[0] for row in db.execute("SELECT student FROM submissions")} == {"ada"}
    assert db.execute("SELECT COUNT(*) FROM stage_scores WHERE submission_id NOT IN (SELECT id FROM submissions)"
                      ).fetchone()[0] == 0  # fmt: skip
    assert db.execute("SELECT student FROM run_students").fetchall() == [("ada",)]
    grades = read_grades(out)
    assert grades["ada"]["total"] == points(*CHEAP) and grades["bob"]["total"] == "0"
    assert "could not be graded" in json.loads((out / "bob" / "results.json").read_text())["output"]


def test_an_output_folder_that_cannot_be_written_fails_only_that_student(tmp_path):
    """When a student's output folder cannot be made, is only that student "could not be graded", and unstored?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", cheap())
    write_student(folder / "bob", cheap())
    out.mkdir()
    (out / "bob").write_text("a file where bob's folder should go")
    result = grade(folder, out)
    assert result.returncode == 1 and "bob could not be graded" in result.stderr
    assert "while writing its results" in result.stderr
    grades = read_grades(out)
    assert grades["ada"]["total"] == points(*CHEAP) and grades["bob"]["total"] == "0"
    assert "bob" in (out / "report.html").read_text()
    assert {row[0] for row in gradebook(out).execute("SELECT student FROM submissions")} == {"ada"}


def test_what_student_code_says_is_cleaned_and_capped_and_grading_goes_on(tmp_path):
    """A 200,000-character exception name and a lone surrogate in a message: graded, written, and small?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", cheap())
    huge = "raise type('E' * 200_000, (Exception,), {})('at import')\n"
    write_student(folder / "eve", {**cheap(), "01_rules": huge})
    raising = "def winner(board):\n    raise ValueError('\\udc80 and \\x1b[31m')"
    odd = reference("01_rules").replace("def winner(board):", raising, 1)
    write_student(folder / "mal", {"01_rules": odd})
    result = grade(folder, out)
    assert result.returncode == 0, result.stderr
    grades = read_grades(out)
    assert grades["ada"]["total"] == points(*CHEAP)
    assert grades["eve"]["01_rules"] == "0" and grades["eve"]["05_winning_square"] == points("05_winning_square")
    written = (out / "eve" / "results.json").read_text(encoding="utf-8")
    assert len(written) < 200_000 and (out / "eve" / "feedback.html").stat().st_size < 400_000
    results = json.loads(written)
    assert "ungraded" not in results["extra_data"]
    message = results["extra_data"]["stages"]["01_rules"]["message"]
    assert "could not be imported" in message and "E" * 100 in message and len(message) < 1_000
    odd = (out / "mal" / "results.json").read_text(encoding="utf-8")
    assert "winner raised ValueError" in odd and "\ufffd and " in odd and "\\u001b" not in odd
    db = gradebook(out)
    stored = db.execute(
        "SELECT length(results_json) + (SELECT SUM(length(output)) FROM test_results t WHERE t.submission_id = s.id)"
        " FROM submissions s WHERE student = 'eve'"
    ).fetchone()[0]
    assert stored < 400_000


# ---------------------------------------------------------------------------------------------------------------
# Outputs that cannot be injected into


def test_names_are_inert_in_grades_csv_and_printed_literally(tmp_path):
    """Do names that start a formula land as text in grades.csv, and rich markup in a name print as it is?"""
    names = ['=HYPERLINK("x","y")', "+1", "-2", "@SUM(1)", "[bold red]x", "[blink]y"]
    folder, out = tmp_path / "class", tmp_path / "out"
    write_student(folder / "ada", {"01_rules": reference("01_rules")})
    for name in names:
        write_student(folder / name, {"01_rules": starter("01_rules")})
    result = loud(folder, out, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    lines = (out / "grades.csv").read_text().splitlines()
    zeros = ",0" * (len(HEADER) - 1)
    assert f'"\'=HYPERLINK(""x"",""y"")"{zeros}' in lines
    assert {f"'+1{zeros}", f"'-2{zeros}", f"'@SUM(1){zeros}"} <= set(lines)
    assert f"[bold red]x{zeros}" in lines
    for row in lines[1:]:
        assert not row.lstrip('"').startswith(("=", "+", "-", "@", "\t", "\r"))
    assert "[bold red]x" in result.stdout and "[blink]y" in result.stdout
    assert "\x1b[" not in result.stdout  # not a terminal, and nothing a name said was turned into a style
    report = (out / "report.html").read_text()
    assert escape('=HYPERLINK("x","y")') in report  # shown as text, escaped as the pages escape
    folders = output_folders(names)  # `"` is no file name on FAT or NTFS: that folder is named apart
    for name in names:  # each student's own files are in their own folder
        assert json.loads((out / folders[name] / "results.json").read_text())["extra_data"]["student"] == name


@pytest.mark.parametrize(
    "cell, shown",
    [("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@A1", "'@A1"), ("\tx", "'\tx"), ("\rx", "'\rx"),
     ("ada", "ada"), ("a=b", "a=b"), ("", "")],
)  # fmt: skip
def test_cells_that_start_a_formula_get_a_quote(cell, shown):
    assert gradesheet.inert(cell) == shown


def test_clean_caps_and_removes_what_cannot_be_written_or_would_drive_a_terminal():
    assert clean("a\udc80b") == "a\ufffdb"
    assert clean("x\x1b[2Jy\x00\r\n\tz\x85") == "x[2Jy\n\tz"
    assert clean("x" * 50, 10) == "x" * 10 + "… (40 more characters not shown)"
    assert clean_line("a\nb\tc") == "a b c"
    json.dumps(clean_tree({"k\udc80": ["\udc81", {"v": "\udc82"}]}), ensure_ascii=False).encode()


# ---------------------------------------------------------------------------------------------------------------
# Ctrl-C


def marked_processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def endless_class(folder: Path, loopers: int) -> str:
    """ada (correct) and students whose winner turns into an endless loop; returns the loops' command-line marker."""
    marker = f"endless-{os.getpid()}-{time.monotonic_ns()}"  # in the command line of the looping processes only
    becomes_a_loop = (
        "def winner(board):\n    import os, sys\n"
        f"    os.execv(sys.executable, [sys.executable, '-c', 'while True: pass', {marker!r}])\n"
    )
    write_student(folder / "ada", {"01_rules": reference("01_rules")})
    for name in ("bob", "cat")[:loopers]:
        write_student(
            folder / name, {"01_rules": reference("01_rules").replace("def winner(board):", becomes_a_loop, 1)}
        )
    return marker


def interrupt(folder: Path, out: Path, marker: str, loopers: int, signals: int) -> tuple[int, str, float]:
    """Grade folder, send SIGINT `signals` times once the loops have run a second; (exit code, stderr, seconds)."""
    command = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out), "--quiet", "--jobs", "3",
               "--time-limit", "600"]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(marked_processes(marker)) < loopers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(marked_processes(marker)) == loopers, "the endless stages must be running"
        time.sleep(1)
        sent = time.monotonic()
        for _ in range(signals):
            process.send_signal(signal.SIGINT)
            time.sleep(0.05)
        _, errors = process.communicate(timeout=30)
        return process.returncode, errors, time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()


def survivors(marker: str) -> list[int]:
    for _ in range(10):  # killed processes are reaped by the kernel in a moment
        if not marked_processes(marker):
            break
        time.sleep(0.05)
    return marked_processes(marker)


def test_ctrl_c_stops_at_once_and_stores_only_finished_students(tmp_path):
    """Does the first Ctrl-C kill the running stages, store nobody half graded, say what is stored, and exit 130?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    marker = endless_class(folder, loopers=2)
    code, errors, took = interrupt(folder, out, marker, loopers=2, signals=1)
    assert code == 130, errors
    assert took < 3, f"took {took:.1f} s to stop"
    assert "Traceback" not in errors
    said = re.search(r"interrupted: (\d) of 3 submissions are graded and stored; run the same command again", errors)
    assert said, errors
    assert survivors(marker) == []
    stored = {row[0] for row in gradebook(out).execute("SELECT student FROM submissions")}
    assert stored <= {"ada"} and len(stored) == int(said.group(1))


def test_a_second_ctrl_c_leaves_quietly(tmp_path):
    """Does a second Ctrl-C right after the first leave at once, without a traceback and without leftovers?"""
    folder, out = tmp_path / "class", tmp_path / "out"
    marker = endless_class(folder, loopers=1)
    code, errors, took = interrupt(folder, out, marker, loopers=1, signals=2)
    assert code == 130 and took < 3 and "Traceback" not in errors, errors
    assert survivors(marker) == []
    assert "bob" not in {row[0] for row in gradebook(out).execute("SELECT student FROM submissions")}


# ---------------------------------------------------------------------------------------------------------------
# The one time limit (the layers: tests/test_layers.py)


def test_the_stage_time_limit_is_one_value_with_one_default():
    """--time-limit's default is DEFAULT_STAGE_SECONDS, and below the options no step on its way to the sandbox's
    Limits has a default of its own."""
    import inspect

    from autograder.grading import grade as barrier
    from autograder.grading import judge, sandbox
    from autograder.grading.options import parse_options

    options = parse_options(["class", "--out", "out"])
    assert options.time_limit == sandbox.DEFAULT_STAGE_SECONDS
    steps = {
        barrier.grade_submission: "seconds",
        barrier.grade_student: "seconds",
        barrier.grade_guarded: "seconds",
        judge.grade_stage: "seconds",
        judge.judge_stage: "seconds",
        judge.stage_limits: "seconds",
        sandbox.Limits: "cpu_seconds",
    }
    for step, name in steps.items():
        assert inspect.signature(step).parameters[name].default is inspect.Parameter.empty, step.__qualname__
    assert inspect.signature(sandbox.Limits).parameters["wall_seconds"].default is inspect.Parameter.empty


def test_a_students_results_copied_from_an_earlier_run_into_the_class_is_skipped(tmp_path):
    """Is a student's folder of an earlier run's OUT (results.json and feedback.html, as the grader wrote them) put
    back among the submissions skipped as grader output, not graded as a student who handed nothing in?"""
    write_student(tmp_path / "class" / "alice", {"01_rules": reference("01_rules")})
    assert grade(tmp_path / "class", tmp_path / "out").returncode == 0
    shutil.copytree(tmp_path / "out" / "alice", tmp_path / "class" / "alice-graded")
    found = find_class(tmp_path / "class", tmp_path / "out")
    assert [name for name, _ in found.students] == ["alice"]
    assert "results.json the grader wrote" in dict(found.skipped)["alice-graded"]


LOADED_RICH = """
import sys
from autograder.verbs.grade import main
code = main(sys.argv[1:])
print(code, sorted(name for name in sys.modules if name.split(".")[0] == "rich"))
"""


@pytest.mark.parametrize("quiet", [True, False])
def test_a_quiet_run_never_loads_the_terminals_library(tmp_path, quiet):
    """rich draws the progress bar and the table: a run that shows neither (--quiet) does not import it."""
    write_student(tmp_path / "class" / "ada", {"01_rules": reference("01_rules")})
    argv = [str(tmp_path / "class"), "--out", str(tmp_path / "out"), *(["--quiet"] if quiet else [])]
    ran = subprocess.run([sys.executable, "-c", LOADED_RICH, *argv], capture_output=True, text=True, cwd=ROOT)
    code, loaded = ran.stdout.strip().splitlines()[-1].split(" ", 1)
    assert code == "0", ran.stderr
    assert (loaded == "[]") == quiet
    assert read_grades(tmp_path / "out")["ada"]["total"] == "10"
