"""`autograde export`: every format and column mode carries the final grades the run stored, and nothing else.

A real class is graded once for the module with `autograde grade` (in this process, so one student can be made
to fail inside the grader): a course policy (late days, an extension, a submission too late to count), bonus
work under the rule "extra" with a cap, overrides (excuse, set, adjust), one student excused from every stage,
and a roster naming a student who handed nothing in. Then the same class again from the same gradebook (every
result reused) with the bonus reported "apart". Each export is checked against the FinalGrades the gradebook
holds, and a few against by-hand numbers and pinned samples (tests/fixtures/exports/, UPDATE_GOLDEN=1 rewrites
them). docs/exports.md says what each format follows in its LMS's documentation.
"""

import csv
import dataclasses
import io
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from autograder.admin import exports
from autograder.admin.roster import RosterError, load_roster
from autograder.outputs.gradebook import Gradebook
from autograder.record import FinalGrade
from tests.classes import reference, starter, write_student

SAMPLES = Path(__file__).parent / "fixtures" / "exports"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
DUE = datetime.fromisoformat("2025-03-07T23:59:00+01:00")
FAILS_HERE = "# the grader fails on this file\n"
ASSIGNED = ("01_rules", "05_winning_square", "07_quickest_move")  # 10 + 10 + 15 = 35 points possible

POLICY = """
time_zone = "Europe/Berlin"
grace_minutes = 15

[due]
01_rules = 2025-03-07T23:59:00
05_winning_square = 2025-03-07T23:59:00
07_quickest_move = 2025-03-07T23:59:00
09_best_squares = 2025-03-07T23:59:00

[late]
per = "day"
percent = 10
zero_after = 7

[[extensions]]
student = "linus"
stage = "07_quickest_move"
days = 2

[grade]
assigned = ["01_rules", "05_winning_square", "07_quickest_move"]
"""
EXTRA = 'bonus = "extra"\nbonus_cap = 5\n'
APART = 'bonus = "apart"\n'

OVERRIDES = "".join(
    f'[[overrides]]\nstudent = "{student}"\nstage = "{stage}"\n{change}\nreason = "{reason}"\nby = "J. Smith"\n'
    "on = 2025-03-20\n\n"
    for student, stage, change, reason in [
        ("grace", "01_rules", "adjust = -2", "copied the helper without credit"),
        ("grace", "05_winning_square", "set = 7", "graded by hand"),
        ("grace", "07_quickest_move", "excuse = true", "medical note"),
        *(("hedy", stage, "excuse = true", "joined late") for stage in ASSIGNED),
    ]
)

ROSTER = (
    "folder,id,login,name,email,section\n"
    'ada,S1001,ada,"Lovelace, Ada",ada@example.edu,Tuesday\n'
    'linus,S1005,linus,"Torvalds, Linus",linus@example.edu,Thursday\n'
    'alan,S1002,alan,"=Turing, Alan",alan@example.edu,Tuesday\n'
    'grace,S1003,grace,"Hopper, Grace",grace@example.edu,Thursday\n'
    'katherine,S1004,katherine,"Johnson, Katherine",katherine@example.edu,Thursday\n'
    'hedy,S1007,hedy,"Lamarr, Hedy",hedy@example.edu,Tuesday\n'
    'mallory,S1008,mallory,"Mallory, Eve",mallory@example.edu,Tuesday\n'
    'barbara,S1006,barbara,"Liskov, Barbara",barbara@example.edu,Tuesday\n'
)
STUDENTS = ["ada", "linus", "alan", "grace", "katherine", "hedy", "mallory", "barbara"]  # the roster's order

# Canvas's gradebook export of the same class (Grades > Export): the posting-notes row, "Points Possible" with
# Canvas's leading spaces, its own ids, and the Test Student last.
CANVAS_EXPORT = (
    '"Student","ID","SIS User ID","SIS Login ID","Section","Minimax (4242)","Current Score"\n'
    ',,,,,"Manual Posting",\n'
    '"    Points Possible",,,,,"35","(read only)"\n'
    '"Lovelace, Ada","501","S1001","ada","Tuesday",,"0"\n'
    '"Torvalds, Linus","505","S1005","linus","Thursday",,"0"\n'
    '"Hopper, Grace","503","","grace","Thursday",,"0"\n'
    '"Liskov, Barbara","506","S1006","barbara","Tuesday",,"0"\n'
    '"Student, Test","999","","","Tuesday",,"0"\n'
)


def _sources(*stages: str) -> dict[str, str]:
    return {stage: reference(stage) for stage in stages}


def _class(folder: Path) -> None:
    """Each student hands in a few of the cheapest stages to grade; the file times say when."""
    when = {
        "ada": (_sources(*ASSIGNED, "09_best_squares"), DUE - timedelta(days=1)),
        # 1 day 11 hours late: 2 started days, 20 % off; 07 has a 2-day extension: on time
        "linus": (_sources(*ASSIGNED, "09_best_squares"), DUE + timedelta(days=1, hours=11)),
        "alan": (_sources("01_rules", "05_winning_square"), DUE + timedelta(days=10)),  # past zero_after: 0
        "grace": (_sources(*ASSIGNED), DUE - timedelta(hours=2)),
        "katherine": (_sources("01_rules", "09_best_squares"), DUE),
        "hedy": ({"01_rules": starter("01_rules")}, DUE),
        "mallory": ({"01_rules": FAILS_HERE + reference("01_rules")}, DUE),
        "zoe": (_sources("01_rules"), DUE),  # not in the roster
    }
    for name, (sources, time) in when.items():
        write_student(folder / name, sources)
        for path in (folder / name).rglob("*"):
            os.utime(path, (time.timestamp(), time.timestamp()))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, Path]:
    """OUT of the class graded with the bonus as extra credit (capped at 5) and, from the same gradebook, with
    the bonus apart; mallory's submission makes the grader fail both times."""
    from autograder.grading import grade as barrier
    from autograder.grading.judge import grade_stage
    from autograder.verbs import grade as grading

    base = tmp_path_factory.mktemp("exports")
    _class(base / "class")
    (base / "roster.csv").write_text(ROSTER)
    (base / "overrides.toml").write_text(OVERRIDES)

    def failing_on_one(stage, source, *args, **kwargs):
        if FAILS_HERE in source:
            raise RuntimeError("the grader failed here")
        return grade_stage(stage, source, *args, **kwargs)

    outs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(barrier, "grade_stage", failing_on_one)
        for rule, table in (("extra", EXTRA), ("apart", APART)):
            (base / f"{rule}.toml").write_text(POLICY + table)
            out = outs[rule] = base / rule
            if rule == "apart":  # the same files: every result is reused, only the course's rules change
                out.mkdir()
                shutil.copy(outs["extra"] / "gradebook.db", out / "gradebook.db")
            course = ["--policy", str(base / f"{rule}.toml"), "--overrides", str(base / "overrides.toml")]
            args = [str(base / "class"), "--out", str(out), "--roster", str(base / "roster.csv"), *course]
            assert grading.main([*args, "--time-limit", "10", "--quiet"]) == 1  # 1: mallory could not be graded
    outs["roster"] = base / "roster.csv"
    return outs


def _stored(out: Path, everyone: bool = False) -> dict[str, FinalGrade]:
    """The final grades the run stored for the roster's students (everyone: zoe's too), read from the gradebook."""
    book = Gradebook(out / "gradebook.db")
    try:
        run = book.last_run_id()
        finals = {**book.run_absent(run), **{name: r.final for name, r in book.run_results(run).items()}}
    finally:
        book.close()
    return {name: final for name, final in finals.items() if everyone or name in STUDENTS}


def _export(graded, tmp_path, capsys, rule: str, *options: str, roster: Path | None = None):
    """(the file's rows, stderr) of one export of the run graded with the bonus rule."""
    target = tmp_path / f"{rule}-{len(list(tmp_path.iterdir()))}.csv"
    argv = [str(graded[rule]), str(target), "--roster", str(roster or graded["roster"]), *options]
    assert exports.main(argv) == 0, capsys.readouterr().err
    return list(csv.reader(io.StringIO(target.read_text()))), capsys.readouterr().err


def _by_student(rows: list[list[str]], key: int, skip: int = 1) -> dict[str, list[str]]:
    return {row[key]: row for row in rows[skip:]}


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


# ---------------------------------------------------------------------------------------------------------------
# What the run stored (checked by hand once, so that the exports below are checked against the right numbers)


def test_the_stored_final_grades_are_the_policy_bonus_and_overrides_by_hand(graded):
    extra, apart = _stored(graded["extra"], everyone=True), _stored(graded["apart"])
    assert {name: (final.status, final.points, final.possible) for name, final in extra.items()} == {
        "ada": ("graded", 40, 35),  # 35, and 10 bonus points capped at 5
        "linus": ("graded", 36, 35),  # 8 + 8 + 15 (extended), and 8 bonus points capped at 5
        "alan": ("graded", 0, 35),  # ten days late
        "grace": ("graded", 26.25, 35),  # 8 + 7 of the 20 counted (07 excused), scaled to 35
        "katherine": ("graded", 15, 35),  # 10, and 5 of 10 bonus points
        "hedy": ("excused", 0, 35),
        "barbara": ("not submitted", 0, 35),
        "zoe": ("graded", 10, 35),  # graded, though the roster does not name her
    }  # mallory could not be graded: nothing of hers was stored
    assert {name: final.points for name, final in apart.items()}["ada"] == 35
    assert extra["linus"].stages["09_best_squares"].points == 8 and extra["linus"].bonus == 5
    assert extra["linus"].stages["07_quickest_move"].penalty == 0  # the extension
    assert extra["ada"].stages["02_count_games"].counted == "not assigned"


# ---------------------------------------------------------------------------------------------------------------
# Totals


@pytest.mark.parametrize("rule", ["extra", "apart"])
def test_the_total_is_the_stored_final_grade_out_of_the_assigned_points_in_every_format(rule, graded, tmp_path, capsys):
    stored = _stored(graded[rule])
    canvas, err = _export(graded, tmp_path, capsys, rule, "--format", "canvas", "--assignment", "Minimax")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Minimax"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "35"]  # final.possible: the assigned stages only
    by_login = _by_student(canvas, 3, skip=2)
    assert list(by_login) == STUDENTS  # the roster's order
    for name, final in stored.items():
        expected = "EX" if final.status == "excused" else _points(final.points)
        assert by_login[name][5] == expected, name
    assert by_login["mallory"][5] == ""  # the grader failed on her: no grade, not a zero
    assert by_login["barbara"][5] == "0"  # not submitted: a zero by default
    assert by_login["alan"][0] == "'=Turing, Alan"  # a name a spreadsheet would run stays text
    assert by_login["ada"][1:4] == ["", "S1001", "ada"]  # the roster has no canvas_id: ID stays empty

    plain, _ = _export(graded, tmp_path, capsys, rule, "--format", "csv")
    assert plain[0] == ["folder", "id", "name", "email", "section", "total"]
    assert {row[0]: row[-1] for row in plain[1:]} == {
        name: "" if name == "mallory" or stored[name].status == "excused" else _points(stored[name].points)
        for name in STUDENTS
    }
    moodle, _ = _export(graded, tmp_path, capsys, rule, "--format", "moodle", "--moodle-items", "existing")
    assert moodle[0] == ["ID number", "Email address", "Full name", "Tic-tac-toe minimax"]
    assert {row[0]: row[-1] for row in moodle[1:]} == {row[1]: row[-1] for row in plain[1:]}

    assert "left out, not in the roster: zoe" in err
    assert "blank, no grade in the latest run (not graded, or not in its roster): mallory" in err
    assert "zeros, not submitted: barbara" in err
    assert "EX, every stage excused: hedy" in err


def test_moodles_new_items_are_out_of_100_so_the_total_is_a_percent_and_the_header_says_so(graded, tmp_path, capsys):
    rows, err = _export(graded, tmp_path, capsys, "extra", "--format", "moodle")
    assert rows[0][-1] == "Tic-tac-toe minimax (% of 35 points)"
    stored = _stored(graded["extra"])
    by_id = _by_student(rows, 1)  # by email
    assert by_id["grace@example.edu"][-1] == "75"  # 26.25 of 35
    assert by_id["ada@example.edu"][-1] == "114.29"  # 40 of 35: extra credit above the possible points
    assert by_id["ada@example.edu"][-1] == _points(round(100 * stored["ada"].points / 35, 2))
    assert "some grades are above 100: Moodle refuses them unless the site allows more" in err


# ---------------------------------------------------------------------------------------------------------------
# One column per stage


def test_canvas_per_stage_has_the_assigned_stages_ex_for_excused_and_a_zero_point_bonus(graded, tmp_path, capsys):
    rows, _ = _export(graded, tmp_path, capsys, "extra", "--format", "canvas", "--columns", "stages")
    assert rows[0][5:] == [f"Tic-tac-toe minimax {stage}" for stage in (*ASSIGNED, "bonus")]
    assert rows[1][5:] == ["10", "10", "15", "0"]  # the bonus is a 0-point assignment: extra credit in Canvas
    by_login = _by_student(rows, 3, skip=2)
    assert by_login["linus"][5:] == ["8", "8", "15", "5"]  # 20 % off 01 and 05; 07 extended; the bonus capped
    assert by_login["grace"][5:] == ["8", "7", "EX", "0"]  # adjusted -2, set to 7, excused
    assert by_login["hedy"][5:] == ["EX", "EX", "EX", ""]
    assert by_login["barbara"][5:] == ["0", "0", "0", "0"]
    assert by_login["mallory"][5:] == ["", "", "", ""]
    stored = _stored(graded["extra"])
    for name, final in stored.items():
        cells = by_login[name][5:]
        stages = [final.stages[stage] for stage in ASSIGNED]
        assert cells[:3] == ["EX" if s.counted == "excused" else _points(s.points) for s in stages], name
        if final.status in ("graded", "not submitted") and "EX" not in cells:
            assert sum(float(cell) for cell in cells) == final.points, name  # the columns add up to the total
    # Canvas leaves EX out of its total: 15 of the 20 points counted is the 75 % that 26.25 of 35 is
    grace = by_login["grace"][5:7]
    assert sum(map(float, grace)) / 20 == stored["grace"].points / stored["grace"].possible


def test_with_the_bonus_apart_there_is_no_bonus_column_and_the_stages_add_up_to_the_total(graded, tmp_path, capsys):
    rows, _ = _export(graded, tmp_path, capsys, "apart", "--format", "csv", "--columns", "stages")
    assert rows[0] == ["folder", "id", "name", "email", "section", *ASSIGNED]
    by_folder = _by_student(rows, 0)
    assert by_folder["ada"][5:] == ["10", "10", "15"]  # 35: the bonus is not part of the grade
    assert by_folder["grace"][5:] == ["8", "7", ""]
    for name, final in _stored(graded["apart"]).items():
        if final.status == "graded" and "" not in by_folder[name][5:]:
            assert sum(float(cell) for cell in by_folder[name][5:]) == final.points, name


def test_moodle_per_stage_new_items_are_percents_and_existing_items_are_points(graded, tmp_path, capsys):
    new, _ = _export(graded, tmp_path, capsys, "extra", "--format", "moodle", "--columns", "stages")
    assert new[0][3:] == [
        "Tic-tac-toe minimax 01_rules (% of 10 points)",
        "Tic-tac-toe minimax 05_winning_square (% of 10 points)",
        "Tic-tac-toe minimax 07_quickest_move (% of 15 points)",
        "Tic-tac-toe minimax bonus (extra credit points)",
    ]
    by_id = _by_student(new, 0)
    assert by_id["S1005"][3:] == ["80", "80", "100", "5"]  # linus: 8 of 10 reads 80 % of a new item's 100
    assert by_id["S1003"][3:] == ["80", "70", "", "0"]  # grace: excused is blank in Moodle
    existing, _ = _export(
        graded, tmp_path, capsys, "extra", "--format", "moodle", "--columns", "stages", "--moodle-items", "existing"
    )
    assert existing[0][3:] == [
        *(f"Tic-tac-toe minimax {stage}" for stage in ASSIGNED),
        "Tic-tac-toe minimax bonus (extra credit points)",  # points in either way
    ]
    assert _by_student(existing, 0)["S1005"][3:] == ["8", "8", "15", "5"]


# ---------------------------------------------------------------------------------------------------------------
# Not submitted, raw points


@pytest.mark.parametrize("columns", ["total", "stages"])
def test_not_submitted_can_be_blank_instead_of_zero(columns, graded, tmp_path, capsys):
    rows, err = _export(graded, tmp_path, capsys, "extra", "--format", "csv", "--columns", columns,
                        "--not-submitted", "blank")  # fmt: skip
    by_folder = _by_student(rows, 0)
    assert set(by_folder["barbara"][5:]) == {""}
    assert by_folder["alan"][5] == "0"  # zeroed by the policy: a grade, never blank
    assert "blank, not submitted: barbara" in err


def test_raw_scores_are_the_points_before_the_policy_and_the_overrides(graded, tmp_path, capsys):
    rows, _ = _export(graded, tmp_path, capsys, "extra", "--format", "csv", "--columns", "stages", "--scores", "raw")
    assert rows[0][5:] == list(ASSIGNED)  # no bonus column: raw points are the assigned stages'
    by_folder = _by_student(rows, 0)
    assert by_folder["linus"][5:] == ["10", "10", "15"]
    assert by_folder["grace"][5:] == ["10", "10", "15"]
    assert by_folder["alan"][5:] == ["10", "10", "0"]
    total, _ = _export(graded, tmp_path, capsys, "extra", "--format", "csv", "--scores", "raw")
    assert _by_student(total, 0)["linus"][5] == "35" == _points(_stored(graded["extra"])["linus"].raw)


# ---------------------------------------------------------------------------------------------------------------
# Canvas's gradebook export as the roster


def test_a_canvas_gradebook_export_is_a_roster_and_its_ids_go_back_as_they_came(graded, tmp_path, capsys):
    roster = tmp_path / "canvas-gradebook.csv"
    roster.write_text("\ufeff" + CANVAS_EXPORT)  # Canvas writes a byte-order mark
    rows, err = _export(graded, tmp_path, capsys, "extra", "--format", "canvas", roster=roster)
    assert [row[:5] for row in rows[2:]] == [
        ["Lovelace, Ada", "501", "S1001", "ada", "Tuesday"],
        ["Torvalds, Linus", "505", "S1005", "linus", "Thursday"],
        ["Hopper, Grace", "503", "", "grace", "Thursday"],
        ["Liskov, Barbara", "506", "S1006", "barbara", "Tuesday"],
    ]  # the posting notes, the points row and the Test Student are not students
    assert [row[5] for row in rows[2:]] == ["40", "36", "26.25", "0"]
    assert "left out, not in the roster: alan, hedy, katherine, zoe" in err

    by_sis = tmp_path / "by-sis.csv"  # the folders named by another column: --folder-column
    with_sis = CANVAS_EXPORT.replace('"S1001","ada"', '"ada","S1001"')
    by_sis.write_text(with_sis)
    with pytest.raises(RosterError, match="line 6: no folder name in 'SIS User ID': every student needs one"):
        load_roster(by_sis, "SIS User ID")  # grace has no SIS User ID
    by_sis.write_text(with_sis.replace('"503","","grace"', '"503","grace","g3"'))
    loaded = load_roster(by_sis, "SIS User ID")
    assert list(loaded.students) == ["ada", "S1005", "grace", "S1006"]
    assert (loaded.students["ada"].sis_user_id, loaded.students["ada"].login) == ("ada", "S1001")


def test_a_canvas_roster_without_the_folder_column_is_one_line(graded, tmp_path, capsys):
    roster = tmp_path / "canvas-gradebook.csv"
    roster.write_text(CANVAS_EXPORT)
    target = tmp_path / "out.csv"
    argv = [str(graded["extra"]), str(target), "--format", "canvas", "--roster", str(roster)]
    assert exports.main([*argv, "--folder-column", "Folder"]) == 2
    error = capsys.readouterr().err
    assert "has no 'Folder' column for the folder names (give --folder-column" in error and error.count("\n") == 1
    assert not target.exists()


@pytest.mark.parametrize(
    "text, complaint",
    [
        ("name,email\nAda,ada@example.edu\n", "has no 'folder' column"),
        ("folder,name\nada,Ada\n", "has no id column: give id (SIS User ID), canvas_id, login or email"),
        ("folder,id\nada,S1\nalan,S1\n", "line 3: the id 'S1' is also 'ada''s"),
        ("folder,id,login\nada,S1,a\nalan,S2,a\n", "line 3: the login 'a' is also 'ada''s"),
        ("folder,id,sis_user_id\nada,S1,S1\n", "has both 'id' and 'sis_user_id'"),
        ("folder,id,email\nada,,\n", "line 2: 'ada' has no id"),
        ("folder,id\nada,S1\nada,S2\n", "the folder 'ada' is listed twice"),
    ],
)
def test_a_roster_that_cannot_be_used_is_one_line_and_nothing_is_written(text, complaint, graded, tmp_path, capsys):
    roster, target = tmp_path / "roster.csv", tmp_path / "grades.csv"
    roster.write_text(text)
    assert exports.main([str(graded["extra"]), str(target), "--format", "moodle", "--roster", str(roster)]) == 2
    error = capsys.readouterr().err
    assert complaint in error and error.count("\n") == 1, error
    assert not target.exists()


def test_a_roster_with_the_explicit_columns_fills_each_field(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Folder,SIS_User_ID,Canvas_ID,Login,Email\nada,S1,501,ada1,ada@example.edu\n")
    student = load_roster(roster).students["ada"]
    assert (student.sis_user_id, student.canvas_id, student.login, student.email) == (
        "S1", "501", "ada1", "ada@example.edu"
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# The gradebook


def test_no_gradebook_or_one_without_final_grades_is_one_line(graded, tmp_path, capsys):
    target = tmp_path / "grades.csv"
    argv = [str(target), "--format", "canvas", "--roster", str(graded["roster"])]
    assert exports.main([str(tmp_path), *argv]) == 2
    assert "no gradebook at" in capsys.readouterr().err
    old = tmp_path / "old"  # a run stored before final grades were kept
    old.mkdir()
    source, book = Gradebook(graded["extra"] / "gradebook.db"), Gradebook(old / "gradebook.db")
    run_id = source.last_run_id()
    stored = source.run_results(run_id)
    parameters = next(result.grading for result in stored.values())
    run = book.start_run(parameters, "submissions")
    for name, result in stored.items():
        book.record(run, name, "hash", parameters, dataclasses.replace(result, final=None))
    book.finish_run(run)
    source.close(), book.close()
    assert exports.main([str(old), *argv]) == 2
    assert "no student of the latest run has a final grade" in capsys.readouterr().err
    assert not target.exists()


# ---------------------------------------------------------------------------------------------------------------
# The files themselves

CASES = {
    "canvas-total.csv": ("extra", ["--format", "canvas"]),
    "canvas-stages.csv": ("extra", ["--format", "canvas", "--columns", "stages", "--assignment", "Minimax"]),
    "moodle-stages.csv": ("extra", ["--format", "moodle", "--columns", "stages"]),
    "csv-stages-apart-blank.csv": ("apart", ["--format", "csv", "--columns", "stages", "--not-submitted", "blank"]),
}


@pytest.mark.parametrize("sample", sorted(CASES))
def test_each_export_matches_its_pinned_sample(sample, graded, tmp_path, capsys):
    rule, options = CASES[sample]
    target = tmp_path / sample
    assert exports.main([str(graded[rule]), str(target), "--roster", str(graded["roster"]), *options]) == 0
    if UPDATE:
        (SAMPLES / sample).write_text(target.read_text())
    assert target.read_text() == (SAMPLES / sample).read_text()
