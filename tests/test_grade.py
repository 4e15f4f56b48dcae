"""Does `autograde grade` read every layout, explain bad input, write the promised files, and never lose a grade?"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.course import ROOT, STAGE_BY_ID, STAGES, TOTAL_POINTS
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
    assert first == (
        "student,01_rules,02_count_games,03_minimax,04_memoization,05_winning_square,06_count_results,07_quickest_move,total"
    )
    assert first.split(",") == HEADER


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
    assert sum(t["max_score"] for t in results["tests"]) == TOTAL_POINTS
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


def test_a_killed_batch_resumes_without_regrading_or_duplicates(tmp_path):
    """After SIGKILL mid-batch, does the same command finish the rest and match a clean run exactly?"""
    folder = tmp_path / "class"
    for number in range(8):
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
            if done_before_kill >= 3:
                break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 3 <= done_before_kill < 8, "the batch must be killed part way through"
    done_before_kill = gradebook(out).execute("SELECT COUNT(*) FROM submissions").fetchone()[0]

    assert grade(folder, out).returncode == 0
    db = gradebook(out)
    assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 8, "each student graded exactly once"
    reused = db.execute("SELECT SUM(reused) FROM run_students WHERE run_id = 2").fetchone()[0]
    assert reused == done_before_kill
    assert grade(folder, tmp_path / "clean").returncode == 0
    assert (out / "grades.csv").read_text() == (tmp_path / "clean" / "grades.csv").read_text()


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


def _open_gradebook(path: str, barrier) -> None:
    from autograder.gradebook import Gradebook

    barrier.wait()
    Gradebook(Path(path)).close()


def test_graders_creating_one_gradebook_at_once_all_succeed(tmp_path):
    """Do three graders that create the same new gradebook at the same moment all get it (no "database is locked")?"""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    failures = 0
    for attempt in range(15):
        barrier = context.Barrier(3)
        path = str(tmp_path / f"gradebook-{attempt}.db")
        processes = [context.Process(target=_open_gradebook, args=(path, barrier)) for _ in range(3)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=120)
            failures += process.exitcode != 0
    assert failures == 0
