"""Does `autograde override` add exactly one valid entry to the overrides file, refuse what grading would refuse
(leaving the file as it was), and does grading apply what it wrote next to what was written by hand?"""

import getpass
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import pytest

from autograder.admin.override_cli import main
from autograder.admin.overrides import load_overrides
from autograder.course.stages import ROOT
from tests.classes import grade, read_grades, reference, write_student

HAND_WRITTEN = """\
# Kept in the course repository; `autograde grade --overrides course-overrides.toml` reads it on every run.

[[overrides]]
student = "alan"
stage = "01_rules"
adjust = -2          # hand-written, with a comment
reason = "the diagonal was copied from the lecture notes"
by = "J. Smith"
on = 2025-02-25
"""
ROSTER = "folder,id,name\nada,S1,Ada\nalan,S2,Alan\n"


def override(path: Path, *argv: str) -> int:
    return main([str(path), *argv])


def test_an_entry_goes_after_the_hand_written_ones_which_stay_byte_for_byte(tmp_path, capsys):
    path = tmp_path / "course-overrides.toml"
    path.write_text(HAND_WRITTEN)
    argv = ["--student", "ada", "--stage", "3", "--excuse", "--reason", "medical note", "--by", "T. A."]
    assert override(path, *argv, "--on", "2025-03-01") == 0
    assert "Added to" in capsys.readouterr().out
    text = path.read_text()
    assert text.startswith(HAND_WRITTEN + "\n[[overrides]]\n")
    changes = load_overrides(path).changes
    assert changes[("alan", "01_rules")].value == -2
    excused = changes[("ada", "03_minimax")]
    assert (excused.action, excused.reason, excused.by, excused.on) == ("excuse", "medical note", "T. A.", "2025-03-01")


def test_a_missing_file_is_created_with_today_and_the_login_name(tmp_path):
    path = tmp_path / "new" / "course-overrides.toml"
    assert override(path, "--student", "grace", "--stage", "minimax", "--set", "18", "--reason", "partial credit") == 0
    (change,) = load_overrides(path).changes.values()
    assert (change.stage, change.action, change.value) == ("03_minimax", "set", 18)
    assert (change.by, change.on) == (getpass.getuser(), date.today().isoformat())


def test_regrade_requests_with_each_outcome(tmp_path):
    path = tmp_path / "course-overrides.toml"
    request = ["--regrade", "--student", "grace", "--request", "either square completes a line"]
    assert override(path, *request, "--stage", "5", "--outcome", "granted", "--adjust", "4", "--response", "yes") == 0
    assert override(path, *request, "--stage", "6", "--outcome", "denied", "--response", "the check is right") == 0
    assert override(path, *request, "--stage", "7", "--outcome", "pending") == 0
    loaded = load_overrides(path)
    assert [(who, r.stage, r.outcome, r.response) for who, r in loaded.regrades] == [
        ("grace", "05_winning_square", "granted", "yes"),
        ("grace", "06_count_results", "denied", "the check is right"),
        ("grace", "07_quickest_move", "pending", ""),
    ]
    (change,) = loaded.changes.values()  # only the granted one changes points
    assert (change.stage, change.action, change.value, change.request) == (
        "05_winning_square",
        "adjust",
        4,
        "either square completes a line",
    )


@pytest.mark.parametrize(
    "text",
    [
        'she said "see me", then \\ left',
        "two\nlines\r\nand a tab\there",
        "controls \x00 \x01 \x1b[31m red \x7f \x85 \u2028 end",
        '[[overrides]]\nstudent = "mallory"\nstage = "01_rules"\nset = 10',  # an entry smuggled in a reason
        "emoji 🎓 and é",
    ],
)
def test_any_text_gives_a_valid_file_that_reads_back_the_same(tmp_path, text):
    path = tmp_path / "course-overrides.toml"
    assert override(path, "--student", "ada", "--stage", "1", "--excuse", "--reason", text, "--by", text) == 0
    argv = ["--regrade", "--student", "ada", "--stage", "2", "--outcome", "denied", "--request", text]
    assert override(path, *argv, "--response", text, "--by", text) == 0
    loaded = load_overrides(path)
    (change,) = loaded.changes.values()
    assert (change.reason, change.by) == (text.strip(), text.strip())
    ((who, regrade),) = loaded.regrades
    assert (who, regrade.request, regrade.response) == ("ada", text.strip(), text.strip())


REFUSED = [
    (["--stage", "99", "--excuse", "--reason", "r"], "no stage called '99'"),
    (["--stage", "2", "--set", "11", "--reason", "r"], "set = 11 is outside 0 to 10"),
    (["--stage", "2", "--adjust", "-11", "--reason", "r"], "adjust = -11 is outside -10 to 10"),
    (["--stage", "1", "--set", "nan", "--reason", "r"], "--set must be a number of points, not 'nan'"),
    (["--stage", "1", "--set", "ten", "--reason", "r"], "--set must be a number of points, not 'ten'"),
    (["--stage", "1", "--excuse", "--reason", "   "], "--reason is empty"),
    (["--stage", "2", "--excuse", "--reason", "x" * 1001], "reason is longer than 1000 characters"),
    (["--stage", "1", "--excuse", "--reason", "r", "--on", "25 Feb"], "--on must be a date as YYYY-MM-DD"),
    (["--stage", "1", "--excuse", "--reason", "r", "--on", "2025-W09-2"], "--on must be a date as YYYY-MM-DD"),
    (["--stage", "1", "--excuse"], "--reason TEXT is required"),
    (["--stage", "1", "--reason", "r"], "say what changes: --excuse, --set POINTS or --adjust POINTS"),
    (["--stage", "1", "--excuse", "--set", "3", "--reason", "r"], "not allowed with argument"),
    (["--stage", "1", "--excuse", "--reason", "r", "--outcome", "denied"], "--outcome is for a regrade request"),
    (["--regrade", "--stage", "1", "--request", "q", "--outcome", "granted"], "a granted request changes the stage"),
    (["--regrade", "--stage", "1", "--request", "q", "--outcome", "denied", "--excuse"], "leave out --excuse"),
    (["--regrade", "--stage", "1", "--request", "q", "--outcome", "denied", "--reason", "r"], "is --response"),
    (["--regrade", "--stage", "1", "--outcome", "denied"], "--regrade needs --request TEXT"),
    (["--regrade", "--stage", "1", "--request", "q", "--outcome", "maybe"], "invalid choice: 'maybe'"),
    # alan's 01_rules is changed by the hand-written entry: a second change would make the file unusable.
    (["--stage", "1", "--set", "5", "--reason", "r"], "already changes 01_rules of 'alan' (adjust, by J. Smith"),
    (["--regrade", "--stage", "1", "--request", "q", "--outcome", "granted", "--set", "9"], "already changes 01_rules"),
    (["--stage", "2", "--excuse", "--reason", "r", "--roster", "{roster}"], "'alan' is not in the roster"),
]


@pytest.mark.parametrize(("argv", "message"), REFUSED)
def test_a_refused_entry_leaves_the_file_as_it_was(tmp_path, capsys, argv, message):
    path = tmp_path / "course-overrides.toml"
    path.write_text(HAND_WRITTEN)
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER.replace("alan", "alan2"))
    argv = [part.replace("{roster}", str(roster)) for part in argv]
    with pytest.raises(SystemExit) as raised:  # argparse's own refusals exit; the rest return
        raise SystemExit(override(path, "--student", "alan", *argv))
    assert raised.value.code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1, error
    assert path.read_text() == HAND_WRITTEN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course-overrides.toml", "roster.csv"], "a temporary left"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[[overrides]\nstudent = 'x'\n", "has a problem already (Expected ']]'"),
        (b"[[overrides]]\nstudent = 'x'\nstage = '01_rules'\n", "has a problem already (overrides entry 1"),
        (b"[oops]\n", "has a problem already (unknown table 'oops'"),
        (b"reason = '\xe9'\n", "is not UTF-8 text"),
    ],
)
def test_a_file_that_is_broken_already_is_not_touched(tmp_path, capsys, content, message):
    path = tmp_path / "course-overrides.toml"
    path.write_bytes(content)
    assert override(path, "--student", "ada", "--stage", "1", "--excuse", "--reason", "r") == 2
    error = capsys.readouterr().err
    assert message in error and "nothing was added" in error and error.count("\n") == 1, error
    assert path.read_bytes() == content


def test_a_command_line_that_is_not_utf8_is_refused(tmp_path):
    """Bytes a UTF-8 locale cannot decode reach Python as lone surrogates, which no file can hold: refused."""
    path = tmp_path / "course-overrides.toml"
    command = [sys.executable, "-m", "autograder", "override", str(path), "--student", "ada", "--stage", "1"]
    command = [part.encode() for part in command] + [b"--excuse", b"--reason", b"caf\xe9 (Latin-1)"]
    env = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("autograde override: --reason is not UTF-8 text (byte 0xe9): write it in UTF-8")
    assert done.stderr.count("\n") == 1
    assert not path.exists()


def test_windows_line_endings_and_a_linked_file_are_kept(tmp_path):
    real = tmp_path / "repo" / "course-overrides.toml"
    real.parent.mkdir()
    real.write_bytes(HAND_WRITTEN.replace("\n", "\r\n").encode())
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    assert override(link, "--student", "ada", "--stage", "1", "--excuse", "--reason", "r") == 0
    assert link.is_symlink(), "the link was replaced by a copy"
    data = real.read_bytes()
    assert data.startswith(HAND_WRITTEN.replace("\n", "\r\n").encode()) and b"\n" not in data.replace(b"\r\n", b"")
    assert len(load_overrides(real).changes) == 2


def test_entries_added_at_once_are_all_kept(tmp_path, monkeypatch, capsys):
    """Six TAs add an entry each at the same moment, each command slowed between reading the file and replacing it
    (as a busy server may): does the file end with all six, none of them lost to another's replace?"""
    from autograder.admin import override_cli

    check_loads = override_cli._check_loads

    def slow_check(text, shown):
        time.sleep(0.05)
        check_loads(text, shown)

    monkeypatch.setattr(override_cli, "_check_loads", slow_check)
    path = tmp_path / "course-overrides.toml"
    path.write_text(HAND_WRITTEN)
    students = [f"ta{n}" for n in range(6)]
    start = threading.Barrier(len(students))

    def add(student: str) -> int:
        start.wait()
        return override(path, "--student", student, "--stage", "1", "--excuse", "--reason", "r", "--by", student)

    with ThreadPoolExecutor(len(students)) as pool:
        assert list(pool.map(add, students)) == [0] * len(students)
    assert {student for student, _ in load_overrides(path).changes} == {"alan", *students}
    assert path.read_text().startswith(HAND_WRITTEN)


def finals(out: Path) -> dict[str, dict]:
    return {
        name: json.loads((out / name / "results.json").read_text())["extra_data"]["final"] for name in ("ada", "alan")
    }


@pytest.mark.slow
def test_grading_applies_the_hand_written_file_then_what_the_command_added(tmp_path):
    """A hand-written file graded; the command appends to it; the next run gives the change, the first one still."""
    class_folder = tmp_path / "class"
    write_student(class_folder / "ada", {stage: reference(stage) for stage in ("01_rules", "02_count_games")})
    write_student(class_folder / "alan", {"01_rules": reference("01_rules")})
    path = tmp_path / "course-overrides.toml"
    path.write_text(HAND_WRITTEN)
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    course = ["--overrides", str(path), "--roster", str(roster)]
    first = grade(class_folder, tmp_path / "out", *course)
    assert first.returncode == 0, first.stderr
    before = finals(tmp_path / "out")
    assert (before["alan"]["points"], before["ada"]["points"]) == (8, 20)
    (change,) = before["alan"]["stages"]["01_rules"]["changes"]
    assert change["reason"] == "the diagonal was copied from the lecture notes"

    ask = ["--regrade", "--student", "ada", "--stage", "02_count_games", "--request", 'my "count" was right']
    argv = [*ask, "--outcome", "granted", "--excuse", "--response", "ill that week", "--roster", str(roster)]
    assert override(path, *argv, "--by", "J. Smith", "--on", "2025-03-10") == 0
    assert override(path, "--student", "alan", "--stage", "2", "--set", "5", "--reason", "late enrolment") == 0
    second = grade(class_folder, tmp_path / "out", *course)
    assert second.returncode == 0, second.stderr
    after = finals(tmp_path / "out")
    assert after["alan"]["points"] == 8 + 5  # the hand-written adjustment still, and the new set
    # ada's 02_count_games excused: her 10 of the other 90 assigned points, scaled to 100 points.
    assert after["ada"]["points"] == 11.11 and after["ada"]["stages"]["02_count_games"]["counted"] == "excused"
    assert after["ada"]["regrades"][0]["request"] == 'my "count" was right'
    assert any("regrade request granted: ill that week" in step for step in after["ada"]["steps"])
    grades = read_grades(tmp_path / "out")
    assert (grades["ada"]["final"], grades["alan"]["final"]) == ("11.11", "13")
