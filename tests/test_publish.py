"""Does `autograde publish` hand each student their own feedback, with the hidden tests held back until --show-hidden?

The graded class is the example class's golden results (tests/golden/example_class/), each put where `autograde
grade` writes it (OUT/<student>/results.json): real results of the real grader, without grading again.
"""

import base64
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from autograder.admin import publish
from autograder.authoring import release
from autograder.course.checks import stage_checks
from autograder.course.stages import STAGES
from autograder.outputs.report import HIDDEN_NOTE
from tests import pages

GOLDEN = Path(__file__).parent / "golden" / "example_class"
STUDENTS = sorted(path.name.removesuffix(".results.json") for path in GOLDEN.glob("*.results.json"))


@pytest.fixture
def graded(tmp_path) -> Path:
    out = tmp_path / "out"
    for student in STUDENTS:
        (out / student).mkdir(parents=True)
        shutil.copy(GOLDEN / f"{student}.results.json", out / student / "results.json")
    shutil.copy(GOLDEN / "grades.csv", out / "grades.csv")
    return out


def hidden_case_boards() -> set[tuple[str, ...]]:
    """Every board a hidden case is called on, except those the visible examples show too."""
    hidden, visible = set(), set()
    for stage in STAGES:
        for check in stage_checks(stage.id):
            boards = {tuple(case.args[0]) for case in check.cases if case.args}
            (visible if check.visible else hidden).update(boards)
    return hidden - visible - {release.EMPTY_BOARD}


def boards_in_folder(folder: Path) -> set[tuple[str, ...]]:
    """Every board written in any file under folder, as the release's leak check reads them."""
    return {board for path in folder.rglob("*") if path.is_file() for _, board in release.boards_in(path.read_text())}


def test_a_published_folder_shows_no_hidden_board(graded, tmp_path):
    """Do the feedback page and results.json handed back hold no board of a hidden test, nor its outputs, nor the
    counterexample the class report draws?"""
    kept = json.loads((graded / "grace" / "results.json").read_text())["tests"]
    assert any("counterexample" in test["extra_data"] for test in kept)  # in OUT, the instructor's
    dest = tmp_path / "dest"
    assert publish.main([str(graded), str(dest)]) == 0
    assert sorted(path.name for path in dest.iterdir()) == STUDENTS
    secrets = hidden_case_boards()
    for student in STUDENTS:
        folder = dest / student
        assert sorted(path.name for path in folder.iterdir()) == ["feedback.html", "results.json"]
        assert not boards_in_folder(folder) & secrets, student
        data = json.loads((folder / "results.json").read_text())
        for test in data["tests"]:
            if test["visibility"] != "visible":
                assert test["output"] in ("", HIDDEN_NOTE), test["name"]
                assert test["extra_data"]["outcome"] in ("passed", "failed")
                assert "counterexample" not in test["extra_data"] and "mistakes" not in test["extra_data"]
    grace = (dest / "grace" / "feedback.html").read_text()
    assert HIDDEN_NOTE in grace and "winner on every reachable board won on one of the diagonals" in grace
    # The visible tests' details stay: grace still sees the boards of the examples she got wrong.
    assert boards_in_folder(dest / "grace")


def test_show_hidden_publishes_the_hidden_boards(graded, tmp_path):
    """Once the grades are published, does the student see the hidden boards their code got wrong?"""
    dest = tmp_path / "dest"
    assert publish.main([str(graded), str(dest), "--show-hidden"]) == 0
    assert boards_in_folder(dest / "grace") & hidden_case_boards()
    assert HIDDEN_NOTE not in (dest / "grace" / "feedback.html").read_text()
    assert json.loads((dest / "grace" / "results.json").read_text()) == json.loads(
        (graded / "grace" / "results.json").read_text()
    )


def test_a_student_receives_nobody_elses_name(graded, tmp_path):
    """Does what one student receives never name another student (no class table, no other names)?"""
    dest = tmp_path / "dest"
    assert publish.main([str(graded), str(dest), "--zip"]) == 0
    for student in STUDENTS:
        with zipfile.ZipFile(dest / f"{student}.zip") as archive:
            assert sorted(archive.namelist()) == [f"{student}/feedback.html", f"{student}/results.json"]
            text = "".join(archive.read(name).decode() for name in archive.namelist())
        for other in set(STUDENTS) - {student}:
            assert not re.search(rf"\b{other}\b", text, re.IGNORECASE), (student, other)


def test_zips_are_the_same_bytes_on_every_run(graded, tmp_path):
    assert publish.main([str(graded), str(tmp_path / "a"), "--zip"]) == 0
    assert publish.main([str(graded), str(tmp_path / "b"), "--zip"]) == 0
    for student in STUDENTS:
        assert (tmp_path / "a" / f"{student}.zip").read_bytes() == (tmp_path / "b" / f"{student}.zip").read_bytes()


def test_a_non_empty_destination_is_refused_without_force(graded, tmp_path, capsys):
    """Is DEST left alone unless --force, and then every student's folder replaced whole?"""
    dest = tmp_path / "dest"
    (dest / "ada").mkdir(parents=True)
    (dest / "ada" / "old.txt").write_text("from last time")
    assert publish.main([str(graded), str(dest)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert (dest / "ada" / "old.txt").exists()
    assert publish.main([str(graded), str(dest), "--force"]) == 0
    assert sorted(path.name for path in (dest / "ada").iterdir()) == ["feedback.html", "results.json"]
    assert not [path for path in dest.iterdir() if path.name.startswith(".")]  # no half-written leftovers


@pytest.mark.parametrize("where", ["same", "inside"])
def test_dest_must_not_be_out(graded, where, capsys):
    dest = graded if where == "same" else graded / "handback"
    assert publish.main([str(graded), str(dest), "--force"]) == 2
    assert "must be outside" in capsys.readouterr().err
    assert (graded / "ada" / "results.json").exists() and not (graded / "ada" / "feedback.html").exists()


def test_an_ungraded_or_unreadable_student_gets_nothing_and_is_named(graded, tmp_path, capsys):
    """Does one bad results.json cost that student alone, with the reason, and exit 1?"""
    (graded / "alan" / "results.json").write_text("{not json")
    dest = tmp_path / "dest"
    assert publish.main([str(graded), str(dest)]) == 1
    assert "alan: not published: " in capsys.readouterr().err
    assert sorted(path.name for path in dest.iterdir()) == [s for s in STUDENTS if s != "alan"]


def test_a_hidden_board_left_in_a_visible_output_stops_that_student(graded, tmp_path, capsys):
    """Would the leak check stop a student's folder if a hidden board ever reached a text handed back?"""
    data = json.loads((graded / "ada" / "results.json").read_text())
    board = "".join(sorted(release.hidden_boards())[0])
    visible = next(test for test in data["tests"] if test["visibility"] == "visible")
    visible["output"] = f"your function returned {list(board)!r}"
    (graded / "ada" / "results.json").write_text(json.dumps(data))
    assert publish.main([str(graded), str(tmp_path / "dest")]) == 1
    assert "ada: not published: its files would show a hidden test's board (ada/feedback.html:" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "dest" / "ada").exists()


@pytest.mark.parametrize(
    "written",
    [
        lambda board: f"raised ValueError: {base64.b64encode(('ab' + board).encode()).decode()}",  # any alignment
        lambda board: f"returned 's{board.encode().hex()}'",
        lambda board: f"raised ValueError: <{board}> was asked",
    ],
    ids=["base64", "hex", "bare"],
)
def test_an_encoded_hidden_board_in_a_visible_output_stops_that_student(graded, tmp_path, capsys, written):
    """Does the leak check also read a hidden board written as base64, hex or nine bare squares (a second line:
    the child whose texts are shown never sees a hidden board)?"""
    data = json.loads((graded / "ada" / "results.json").read_text())
    board = "".join(sorted(release.hidden_boards())[0])
    visible = next(test for test in data["tests"] if test["visibility"] == "visible")
    visible["output"] = written(board)
    (graded / "ada" / "results.json").write_text(json.dumps(data))
    assert publish.main([str(graded), str(tmp_path / "dest")]) == 1
    assert "ada: not published: its files would show a hidden test's board (ada/" in capsys.readouterr().err
    assert not (tmp_path / "dest" / "ada").exists()
    assert (tmp_path / "dest" / "alan").is_dir()  # a classmate is published as before


def test_an_out_without_results_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    assert publish.main([str(tmp_path / "out"), str(tmp_path / "dest")]) == 2
    assert "no graded students" in capsys.readouterr().err


def test_a_results_json_without_a_final_grade_heads_with_its_raw_total(graded, tmp_path):
    """A results.json from a grader older than the final grade (no extra_data.final) had its raw total as its
    grade: the page handed back says so, and says nothing of how a grade was made."""
    path = graded / "grace" / "results.json"
    data = json.loads(path.read_text())
    data["extra_data"].pop("final", None)
    data["score"] = data["extra_data"]["total"]
    path.write_text(json.dumps(data))
    dest = tmp_path / "dest"
    assert publish.main([str(graded), str(dest)]) == 0
    page = pages.text((dest / "grace" / "feedback.html").read_text())
    assert f"Your grade: {data['extra_data']['total']} of 100" in page
    assert "How your grade was made" not in page
    assert json.loads((dest / "grace" / "results.json").read_text())["score"] == data["extra_data"]["total"]
