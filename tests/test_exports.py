"""`autograde export`: each LMS's import file against a pinned sample of its format.

The gradebook is a real one, filled with the example class's results (tests/golden/example_class/*.results.json)
and, for one student, what a course policy made of them; the roster names five of the six and one student who
handed nothing in. The samples in tests/fixtures/exports/ follow the documentation cited in
autograder/admin/exports.py: Canvas's Gradebook import (identity columns Student, ID, SIS User ID, SIS Login ID,
Section; a "Points Possible" row; https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-
the-Gradebook/ta-p/807) and Moodle's CSV grade import (a header row, a column mapped to "useridnumber" or
"useremail"; https://docs.moodle.org/en/Grade_import).
"""

import json
import os
from pathlib import Path

import pytest

from autograder.admin import exports
from autograder.grading.record import GradingParameters, Lateness
from autograder.outputs.gradebook import Gradebook
from autograder.outputs.results import from_json

GOLDEN = Path(__file__).parent / "golden" / "example_class"
SAMPLES = Path(__file__).parent / "fixtures" / "exports"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
ROSTER = (
    "folder,id,name,email,section\n"
    'ada,S1001,"Lovelace, Ada",ada@example.edu,Tuesday\n'
    'linus,S1005,"Torvalds, Linus",linus@example.edu,Thursday\n'
    'grace,S1003,"Hopper, Grace",grace@example.edu,Thursday\n'
    'barbara,S1006,"Liskov, Barbara",barbara@example.edu,Tuesday\n'
    'alan,S1002,"=Turing, Alan",alan@example.edu,Tuesday\n'
)


def _late(stage: str, score: float, late: int = 0, penalty: float = 0.0) -> Lateness:
    return Lateness("2025-03-09T11:00:00+01:00", "timestamp file", "2025-03-07T23:59+01:00", "", late, "day",
                    20.0 if late else 0.0, penalty, score)  # fmt: skip


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """OUT with a gradebook whose last run holds the example class; linus was graded 2 days late (47 of 55)."""
    out = tmp_path_factory.mktemp("export")
    book = Gradebook(out / "gradebook.db")
    parameters = GradingParameters("suite", "1", 10.0, "bubblewrap", "v2")
    run = book.start_run(parameters, "submissions")
    for path in sorted(GOLDEN.glob("*.results.json")):
        student = path.name.removesuffix(".results.json")
        result = from_json(json.loads(path.read_text()))
        book.record(run, student, "hash", parameters, result)
        if student == "linus":  # raw 10, 10, 0, 20, 0, 0, 15
            finals = {"01_rules": (8, 2, 2), "02_count_games": (8, 2, 2), "04_memoization": (16, 2, 4)}
            lateness = {
                stage: _late(stage, *finals.get(stage, (entry.score, 0, 0))) for stage, entry in result.stages.items()
            }
            book.record_lateness(run, student, lateness)
    book.finish_run(run)
    book.close()
    (out / "roster.csv").write_text(ROSTER)
    return out


CASES = {
    "canvas-total.csv": ["--format", "canvas"],
    "canvas-stages.csv": ["--format", "canvas", "--columns", "stages", "--assignment", "Minimax"],
    "moodle-total.csv": ["--format", "moodle"],
    "moodle-stages-raw.csv": ["--format", "moodle", "--columns", "stages", "--scores", "raw"],
    "plain-total-raw.csv": ["--format", "csv", "--scores", "raw"],
}


@pytest.mark.parametrize("sample", sorted(CASES))
def test_each_export_matches_its_pinned_sample(sample, out, tmp_path, capsys):
    target = tmp_path / sample
    assert exports.main([str(out), str(target), "--roster", str(out / "roster.csv"), *CASES[sample]]) == 0
    if UPDATE:
        (SAMPLES / sample).write_text(target.read_text())
    assert target.read_text() == (SAMPLES / sample).read_text()
    err = capsys.readouterr().err
    assert "left out, not in the roster: katherine, mallory" in err
    assert "zeros, no graded submission: barbara" in err


def test_canvas_sample_has_the_identity_columns_and_points_possible():
    lines = (SAMPLES / "canvas-total.csv").read_text().splitlines()
    assert lines[0] == "Student,ID,SIS User ID,SIS Login ID,Section,Tic-tac-toe minimax"
    assert lines[1] == "Points Possible,,,,,100"
    assert lines[3] == '"Torvalds, Linus",,S1005,linus@example.edu,Thursday,47'  # after the policy
    assert lines[5] == '"Liskov, Barbara",,S1006,barbara@example.edu,Tuesday,0'  # no submission: zeros
    assert lines[6].startswith('"\'=Turing, Alan"')  # a name a spreadsheet would run stays text


def test_no_gradebook_or_a_bad_roster_is_one_line_and_nothing_written(tmp_path, out, capsys):
    target = tmp_path / "grades.csv"
    assert exports.main([str(tmp_path), str(target), "--format", "canvas", "--roster", str(out / "roster.csv")]) == 2
    assert "no gradebook at" in capsys.readouterr().err
    bad = tmp_path / "roster.csv"
    bad.write_text("name,email\nAda,ada@example.edu\n")
    assert exports.main([str(out), str(target), "--format", "moodle", "--roster", str(bad)]) == 2
    assert "has no 'folder' column" in capsys.readouterr().err
    bad.write_text("folder,id\nada,S1\nalan,S1\n")
    assert exports.main([str(out), str(target), "--format", "moodle", "--roster", str(bad)]) == 2
    assert "the id 'S1' is also 'ada''s" in capsys.readouterr().err
    assert not target.exists()
