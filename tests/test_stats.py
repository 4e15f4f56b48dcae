"""Is every stage told apart by its kind, are wrong answers grouped by kind, and does each student land where
the instructor looks for them?

The kind of a stage (record.stage_status) and the class statistics (outputs/stats.py) are first tried on
hand-made records; then a class with one student per kind is graded for real, and the report's sections, the
gradebook and `autograde stats` are read back.
"""

import json
import re
import sqlite3
import statistics
from html import unescape
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.admin.final_grade import final_grade
from autograder.admin.settings import DEFAULT_SETTINGS
from autograder.course.stages import STAGE_BY_ID, STAGES
from autograder.grading import sandbox
from autograder.grading.judging import fail_all, mistake
from autograder.grading.ungraded import ungraded_result
from autograder.outputs import stats
from autograder.outputs.gradebook import Gradebook
from autograder.outputs.report.views import class_report
from autograder.outputs.results import from_json, json_text, submission_result, to_json
from autograder.record import (
    GradingParameters,
    Lateness,
    Mistake,
    Outcome,
    StageKind,
    StageResult,
    SubmissionResult,
    TestResult,
    stage_status,
)
from tests.classes import grade, reference, starter, write_student

RULES = STAGE_BY_ID["01_rules"]
ISOLATION = sandbox.Isolation("bubblewrap", "for the test")


def ran(score: float, outcome: Outcome, tests=(), **fields) -> StageResult:
    return StageResult(RULES.id, score, RULES.points, outcome, fields.pop("message", ""), list(tests), **fields)


def a_test(outcome: Outcome, output: str = "", mistakes=()) -> TestResult:
    score = 2 if outcome == Outcome.PASSED else 0
    return TestResult(RULES.id, "winner/diagonals", "winner", "winner on diagonals", 2, score, outcome, True, output,
                      tuple(mistakes))  # fmt: skip


@pytest.mark.parametrize(
    "result, kind",
    [
        (fail_all(RULES, Outcome.MISSING, "rules.py was not submitted"), StageKind.NOT_SUBMITTED),
        (fail_all(RULES, Outcome.ERROR, "rules.py could not be read: it is a folder"), StageKind.UNREADABLE),
        (fail_all(RULES, Outcome.ERROR, "rules.py could not be imported: SyntaxError", "import"), StageKind.NO_LOAD),
        (fail_all(RULES, Outcome.CRASHED, "rules.py ended the program", "import"), StageKind.CRASHED),
        (fail_all(RULES, Outcome.TIMEOUT, "rules.py stopped: out of CPU time", "import"), StageKind.TIMED_OUT),
        (fail_all(RULES, Outcome.OUTPUT_LIMIT, "wrote too much", "import"), StageKind.SANDBOX),
        (fail_all(RULES, Outcome.TAMPERED, "the reply channel was tampered with", "calls"), StageKind.TAMPERED),
        (fail_all(RULES, Outcome.UNGRADED, "could not be graded: KeyError"), StageKind.UNGRADED),
        (ran(0, Outcome.ERROR, [a_test(Outcome.ERROR, "winner is not written yet")], starter=True), StageKind.STARTER),
        (ran(4, Outcome.MISSING, [a_test(Outcome.MISSING, "rules.py has no function winner")]), StageKind.NO_LOAD),
        (fail_all(RULES, Outcome.MEMORY_LIMIT, "could not be imported: MemoryError", "import"), StageKind.SANDBOX),
        (ran(4, Outcome.MEMORY_LIMIT, [a_test(Outcome.MEMORY_LIMIT, "killed: memory")]), StageKind.SANDBOX),
        (ran(4, Outcome.CRASHED, [a_test(Outcome.CRASHED, "the program stopped")]), StageKind.CRASHED),
        (
            ran(4, Outcome.TIMEOUT, [a_test(Outcome.TIMEOUT, "ran out of CPU")], message="out of CPU"),
            StageKind.TIMED_OUT,
        ),
        (ran(4, Outcome.ERROR, [a_test(Outcome.ERROR, "winner raised KeyError")]), StageKind.WRONG),
        (ran(4, Outcome.FAILED, [a_test(Outcome.FAILED, "returned None")]), StageKind.WRONG),
        (ran(RULES.points, Outcome.PASSED, [a_test(Outcome.PASSED)]), StageKind.FULL),
    ],
)
def test_each_way_a_stage_ends_has_its_own_kind(result, kind):
    status = stage_status(result)
    assert status.kind == kind and status.label == kind.label and status.css == kind.css
    assert kind.needs_look == (
        kind not in (StageKind.FULL, StageKind.WRONG, StageKind.STARTER, StageKind.NOT_SUBMITTED)
    )
    if kind not in (StageKind.FULL, StageKind.WRONG):
        assert status.reason  # every kind but a plain score says why


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=())) | st.sampled_from(["", " ", "a\x85b", "\u2028x", " \n\x1cy"]))
def test_a_stages_reason_is_the_first_line_of_its_message_with_more_than_blanks(message):
    """Whatever breaks the message's lines (any break str.splitlines knows), the reason is its first line that is
    not blank, cut at 200 characters."""
    line = next((line for line in message.splitlines() if line.strip()), "")
    expected = line if len(line) <= 200 else line[:199] + "…"
    result = fail_all(RULES, Outcome.TAMPERED, "x", "calls")
    result.message = message
    assert stage_status(result).reason == expected


def test_the_kind_and_the_facts_it_rests_on_survive_results_json():
    """results.json keeps the phase and the starter mark, says the kind in words, and reads back the same."""
    stages = {stage.id: fail_all(stage, Outcome.MISSING, f"{stage.filename} was not submitted") for stage in STAGES}
    stages[RULES.id] = ran(0, Outcome.ERROR, [a_test(Outcome.FAILED, "x", [Mistake("returned None", "X X X", "None")])],
                           starter=True)  # fmt: skip
    data = to_json(submission_result("ada", stages, ISOLATION, [], 1.0))
    entry = data["extra_data"]["stages"][RULES.id]
    assert entry["starter"] is True and entry["phase"] == "calls"
    assert entry["status"] == {"kind": "starter", "label": "starter left as is", "reason": "the starter, unchanged"}
    assert data["extra_data"]["stages"]["02_count_games"]["status"]["kind"] == "not-submitted"
    assert data["tests"][0]["extra_data"]["mistakes"] == [{"kind": "returned None", "board": "X X X", "value": "None"}]
    assert to_json(from_json(json.loads(json_text(data)))) == data


def test_a_check_of_two_functions_has_a_tag_for_each():
    minimax = STAGE_BY_ID["03_minimax"]
    stages = {stage.id: fail_all(stage, Outcome.MISSING, "not submitted") for stage in STAGES}
    tags = [test["tags"] for test in to_json(submission_result("ada", stages, ISOLATION, [], 1.0))["tests"]]
    assert [minimax.id, "score", "choose_move"] in tags and all(", " not in tag for each in tags for tag in each)


@pytest.mark.parametrize(
    "function, value, board, kind",
    [
        ("winner", None, "XXXOO    ", "returned None"),
        ("winner", "x", "XXXOO    ", "returned 'x'"),
        ("winner", [1], "XXXOO    ", "returned the wrong type"),
        ("choose_move", 0, "X   O    ", "returned a taken square"),
        ("choose_move", 9, "X   O    ", "returned a square off the board"),
        ("choose_move", 2, "X   O    ", "chose a square that is not best"),
        ("count_games", 12, "X   O    ", "returned a wrong count"),
        ("score", True, "X   O    ", "returned the wrong type"),
    ],
)
def test_a_wrong_answer_is_named_by_its_kind(function, value, board, kind):
    from autograder.grading.judging import type_problem

    squares = list(board)
    assert mistake(function, value, squares, type_problem(function, value, squares)).kind == kind


def test_boards_are_described_by_how_they_stand():
    assert stats.board_class("XO OXO  X") == "boards won on a diagonal"
    assert stats.board_class("XXXOO    ") == "boards won on a row"
    assert stats.board_class("XO XO X  ") == "boards won on a column"
    assert stats.board_class("XOXXOOOXX") == "drawn boards"
    assert stats.board_class("X        ") == "boards with O to move"
    assert stats.cluster_label("returned 'O'", "X        ") == "returned 'O' on boards with O to move"
    assert stats.cluster_label("returned a wrong count", "X        ") == "returned a wrong count on unfinished boards"
    assert stats.cluster_label("raised KeyError", "XXXOO    ") == "raised KeyError"


def canned_facts() -> stats.Facts:
    """Five students on 01_rules: two forgot the diagonals, one returns a taken square... plus one starter and
    one who did not submit: those two must count nowhere in the pass rates."""
    kinds = {"ann": "wrong-answers", "bob": "wrong-answers", "cy": "full-marks", "dee": "wrong-answers",
             "eve": "starter", "fay": "not-submitted"}  # fmt: skip
    scores = {"ann": 2, "bob": 3, "cy": 10, "dee": 9, "eve": 0, "fay": 0}
    stages = [stats.StageFact(name, RULES.id, StageKind(kind), "", scores[name], 10) for name, kind in kinds.items()]
    wrong = {"ann": False, "bob": False, "cy": True, "dee": True, "eve": False, "fay": False}
    tests = [
        stats.TestFact(name, RULES.id, "winner/diagonals", "winner on diagonals", ok) for name, ok in wrong.items()
    ]
    mistakes = [
        stats.MistakeFact("ann", RULES.id, "winner/diagonals", "returned None", "XO OXO  X"),
        stats.MistakeFact("ann", RULES.id, "winner/diagonals", "returned None", "OX XOX  O"),  # same kind: counted once
        stats.MistakeFact("bob", RULES.id, "winner/diagonals", "returned None", "XO OXO  X"),
        stats.MistakeFact("bob", RULES.id, "winner/diagonals", "returned 'x'", "XXXOO    "),
        stats.MistakeFact("eve", RULES.id, "winner/diagonals", "raised NotImplementedError", "X        "),
    ]
    return stats.Facts(stages, tests, mistakes)


def test_wrong_answers_are_grouped_by_kind_over_working_modules():
    rules = stats.wrong_by_stage(canned_facts())[0]
    assert (rules.stage, rules.working, rules.submitted) == (RULES.id, 4, 5)
    (check,) = rules.checks
    assert (check.passed, check.working) == (2, 4)  # eve's starter and fay's absence are not wrong answers
    assert [(c.label, c.students) for c in check.clusters] == [
        ("returned None on boards won on a diagonal", 2),
        ("returned 'x' on boards won on a row", 1),
    ]
    assert check.clusters[0].board == "XO OXO  X" and check.clusters[0].student == "ann"


def test_who_needs_help_and_what_needs_a_look():
    facts = canned_facts()
    # Median of the four working modules: 6, under three quarters of 10: nobody is far below the class on the
    # stage; eve (the starter) and fay (nothing handed in) have not started, and that is a reason of its own.
    not_started = ("not started: every assigned stage is the starter or not submitted",)
    assert [(entry.student, entry.reasons, entry.stages) for entry in stats.needs_help(facts)] == [
        ("eve", not_started, []),
        ("fay", not_started, []),
    ]
    facts.stages[2:4] = [stats.StageFact("cy", RULES.id, StageKind.FULL, "", 10, 10),
                         stats.StageFact("dee", RULES.id, StageKind.FULL, "", 10, 10)]  # fmt: skip
    facts.stages.append(stats.StageFact("gus", RULES.id, StageKind.FULL, "", 10, 10))
    helped = stats.needs_help(facts)
    assert [entry.student for entry in helped] == ["ann", "bob", "eve", "fay"]
    assert helped[0].stages[0].class_median == 10 and helped[0].reasons == ()  # far below on 01 alone
    assert stats.help_text(helped[0]) == "01_rules 2/10 (class median 10)"
    broken = [stats.StageFact("hal", stage.id, StageKind.UNGRADED, "KeyError", 0, stage.points) for stage in STAGES]
    broken.append(stats.StageFact("ivy", RULES.id, StageKind.NO_LOAD, "SyntaxError", 0, 10))
    looks = stats.needs_a_look(stats.Facts(broken, [], []))
    assert [(look.student, look.stage, look.kind) for look in looks] == [
        ("hal", "all stages", StageKind.UNGRADED),
        ("ivy", RULES.id, StageKind.NO_LOAD),
    ]
    assert stats.look_counts(stats.Facts(broken, [], [])) == (2, len(STAGES) + 1)  # hal's one row is every stage
    assert stats.number(12.5) == "12.5" and stats.number(12.0) == "12" and stats.number(57.46) == "57.5"


# ---------------------------------------------------------------------------------------------------------------
# One student per kind, graded for real

RULES_ONLY = {
    "full": reference(RULES.id),
    "wrong": reference(RULES.id).replace("(0, 4, 8), (2, 4, 6),", "(0, 4, 8),"),
    "starter": starter(RULES.id),
    "syntax": reference(RULES.id) + "\ndef broken(:\n",
    "imports_numpy": "import numpy\n" + reference(RULES.id),
    "wrong_names": reference(RULES.id).replace("def winner(", "def Winner("),
    "crashes": "import os\nos._exit(3)\n",
    "loops": reference(RULES.id) + "\nwhile True:\n    pass\n",
    "hogs_memory": "hog = bytearray(2 << 30)\n" + reference(RULES.id),
    "tampers": 'import os\nos.write(3, b\'{"import": "ok"}\\n{"done": true}\\n\')\n' + reference(RULES.id),
}
EXPECTED = {
    "full": StageKind.FULL,
    "wrong": StageKind.WRONG,
    "starter": StageKind.STARTER,
    "syntax": StageKind.NO_LOAD,
    "imports_numpy": StageKind.NO_LOAD,
    "wrong_names": StageKind.NO_LOAD,
    "crashes": StageKind.CRASHED,
    "loops": StageKind.TIMED_OUT,
    "hogs_memory": StageKind.SANDBOX,
    "tampers": StageKind.TAMPERED,
    "folder": StageKind.UNREADABLE,
}


@pytest.fixture(scope="module")
def graded_kinds(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kinds")
    submissions = root / "submissions"
    for name, source in RULES_ONLY.items():
        write_student(submissions / name, {RULES.id: source})
    (submissions / "folder" / RULES.id / RULES.filename).mkdir(parents=True)  # a folder where the module should be
    out = root / "out"
    ran = grade(submissions, out, "--time-limit", "2")
    assert ran.returncode in (0, 1), ran.stderr
    return out


@pytest.mark.slow
def test_each_student_lands_in_the_right_kind_and_section(graded_kinds):
    out = graded_kinds
    results = {path.parent.name: from_json(json.loads(path.read_text())) for path in out.glob("*/results.json")}
    kinds = {name: result.stages[RULES.id].status.kind for name, result in results.items()}
    assert kinds == EXPECTED
    assert {result.stages["02_count_games"].status.kind for result in results.values()} == {StageKind.NOT_SUBMITTED}
    page = (out / "report.html").read_text(encoding="utf-8")
    looks = unescape(page[page.index('id="needs-look"') : page.index("</section>", page.index('id="needs-look"'))])
    listed = set(re.findall(r'<a href="([^/"]+)/feedback.html">', looks))
    assert listed == {name for name, kind in EXPECTED.items() if kind.needs_look}
    wrong = page[page.index('id="wrong"') : page.index("</section>", page.index('id="wrong"'))]
    assert "2 working of 11 handed in" in wrong  # full and wrong only; the other nine did not work
    assert "returned None on boards won on a diagonal: <b>1 student</b>" in wrong
    # The gradebook holds the kinds and the wrong answers, and `autograde stats` reads them from there.
    db = sqlite3.connect(out / "gradebook.db")
    stored = dict(db.execute("SELECT s.student, t.kind FROM stage_scores t JOIN submissions s ON s.id = t.submission_id"
                             " WHERE t.stage = ?", (RULES.id,)).fetchall())  # fmt: skip
    assert stored == {name: str(kind) for name, kind in EXPECTED.items()}
    assert db.execute("SELECT COUNT(*) FROM mistakes").fetchone()[0] > 0
    db.close()
    shown = subprocess_stats(out)
    assert shown.returncode == 0, shown.stderr
    assert "Needs a look: 8 of 11 students (8 stages)" in shown.stdout
    assert "returned None on boards won on a diagonal: 1" in shown.stdout


def subprocess_stats(out: Path):
    import subprocess
    import sys

    from autograder.course.stages import ROOT

    return subprocess.run([sys.executable, "-m", "autograder", "stats", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})  # fmt: skip


def test_stats_without_a_gradebook_is_a_clear_error(tmp_path):
    shown = subprocess_stats(tmp_path)
    assert shown.returncode == 2 and shown.stderr.startswith("autograde stats: no gradebook at")


def test_the_gradebook_stores_kinds_and_mistakes_and_stats_reads_them(tmp_path):
    """Recorded through Gradebook.record, read back by facts_from_gradebook: the same facts as from the records."""
    from autograder.record import GradingParameters

    parameters = GradingParameters("suite", "1", 60.0, "bubblewrap", "v2")
    book = Gradebook(tmp_path / "gradebook.db")
    run = book.start_run(parameters, "subs")
    results = {}
    for name, score, found in (("ann", 0, [Mistake("returned None", "XO OXO  X", "None")]), ("cy", 2, [])):
        stages = {stage.id: fail_all(stage, Outcome.MISSING, "not submitted") for stage in STAGES}
        stages[RULES.id] = ran(score, Outcome.FAILED, [a_test(Outcome.PASSED if score else Outcome.FAILED, "", found)])
        results[name] = submission_result(name, stages, ISOLATION, [], 1.0)
        book.record(run, name, name, parameters, results[name])
    book.close()
    stored, made = stats.facts_from_gradebook(tmp_path / "gradebook.db"), stats.facts_of(results)
    assert stored.stages == made.stages and stored.mistakes == made.mistakes
    assert set(stored.tests) == set(made.tests)  # the gradebook keeps a stage's tests by check id


def test_stats_counts_who_needs_a_look_in_students_of_the_class_and_in_stages(tmp_path):
    """Does `autograde stats` count "Needs a look" as the report does (students, of the class), with the stages
    beside it, rather than counting stages alone under the students' heading?"""
    from autograder.record import GradingParameters

    parameters = GradingParameters("suite", "1", 60.0, "bubblewrap", "v2")
    book = Gradebook(tmp_path / "gradebook.db")
    run, results = book.start_run(parameters, "subs"), {}
    for name in ("ann", "bob", "cy"):
        stages = {stage.id: fail_all(stage, Outcome.MISSING, f"{stage.filename} was not submitted") for stage in STAGES}
        if name == "ann":  # two stages that did not load: one student, two stages to look at
            for stage in STAGES[:2]:
                stages[stage.id] = fail_all(stage, Outcome.ERROR, f"{stage.filename}: SyntaxError", "import")
        results[name] = submission_result(name, stages, ISOLATION, [], 1.0)
        book.record(run, name, name, parameters, results[name])
    book.close()
    shown = subprocess_stats(tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Needs a look: 1 of 3 students (2 stages)" in shown.stdout, shown.stdout
    assert shown.stdout.count("does not load") == 2
    report = class_report(results)  # the report's heading: "Needs a look — 1 of 3 students"
    assert (report.look_students, len(report.students)) == (1, 3)


def test_an_older_gradebook_gets_the_kinds_and_the_mistakes_table_when_opened(tmp_path):
    """A gradebook written before the kinds were stored (no mistakes table, no kind column) opens and records."""
    from autograder.outputs.gradebook import problem
    from autograder.record import GradingParameters

    path = tmp_path / "gradebook.db"
    Gradebook(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE mistakes")
    db.execute("ALTER TABLE stage_scores DROP COLUMN kind")
    db.execute("ALTER TABLE stage_scores DROP COLUMN reason")
    db.commit()
    db.close()
    assert problem(path) is None
    book = Gradebook(path)
    parameters = GradingParameters("suite", "1", 60.0, "bubblewrap", "v2")
    stages = {stage.id: fail_all(stage, Outcome.MISSING, "not submitted") for stage in STAGES}
    book.record(book.start_run(parameters, "subs"), "ann", "files", parameters,
                submission_result("ann", stages, ISOLATION, [], 1.0))  # fmt: skip
    book.close()
    facts = stats.facts_from_gradebook(path)
    assert {fact.kind for fact in facts.stages} == {StageKind.NOT_SUBMITTED}


# ---------------------------------------------------------------------------------------------------------------
# Who needs help, by the final grades


def graded_record(name: str, scores: dict[str, float], late: dict[str, float] | None = None) -> SubmissionResult:
    """A record scoring scores (stage -> points; the other stages not submitted), the late policy taking late's
    points off its stages, and its final grade as admin/final_grade.py makes it (every core stage assigned, out
    of 100)."""
    stages = {stage.id: fail_all(stage, Outcome.MISSING, "not submitted") for stage in STAGES}
    for stage_id, score in scores.items():
        stage = STAGE_BY_ID[stage_id]
        outcome = Outcome.PASSED if score == stage.points else Outcome.FAILED
        stages[stage_id] = StageResult(stage_id, score, stage.points, outcome, "", [])
    result = submission_result(name, stages, ISOLATION, [], 1.0)
    if late:
        result.lateness = {
            stage_id: Lateness("2025-03-10T00:00:00+00:00", "file times", "2025-03-07T23:59:00+00:00", "", 3, "day",
                               100 * off / scores[stage_id], off, scores[stage_id] - off)
            for stage_id, off in late.items()
        }  # fmt: skip
    result.final = final_grade(result, DEFAULT_SETTINGS)
    return result


CORE_POINTS = {stage.id: stage.points for stage in STAGES if not stage.bonus}
EIGHTY = {**CORE_POINTS, "02_count_games": 0, "03_minimax": 10}  # 80 of 100


def test_who_needs_help_reads_the_final_grades_with_each_threshold():
    """Late: a cut of at least a quarter of the raw points (20 of 80 is one, 9 of 80 is not); far below the
    class: a final grade under half the class median (39 is, 40 is not, against a median of 80); a roster
    student with no submission; nobody whose grade is not a grade (ungraded)."""
    results = {name: graded_record(name, CORE_POINTS) for name in ("ann", "bob")}
    results |= {name: graded_record(name, EIGHTY) for name in ("mid", "mid2", "mid3")}
    results["cut"] = graded_record("cut", EIGHTY, late={"04_memoization": 20})  # 04 zeroed: 60
    results["nip"] = graded_record("nip", EIGHTY, late={"04_memoization": 9})  # 71
    results["low"] = graded_record("low", {"01_rules": 10, "03_minimax": 20, "05_winning_square": 9})  # 39
    results["edge"] = graded_record("edge", {"01_rules": 10, "03_minimax": 20, "05_winning_square": 10})  # 40
    results["oops"] = ungraded_result("oops", "KeyError", ISOLATION)
    results["oops"].final = final_grade(results["oops"], DEFAULT_SETTINGS)
    absent = {"zed": final_grade(None, DEFAULT_SETTINGS)}
    assert statistics.median(r.final.points for r in results.values() if r.final.status == "graded") == 80
    helped = {entry.student: entry.reasons for entry in stats.needs_help(stats.facts_of(results, absent))}
    assert helped == {
        "cut": ("late: −20 of 80 raw points",),
        "low": ("far below the class: 39 of 100 (class median 80)",),
        "zed": ("in the roster, no submission",),
    }


def test_stats_reads_the_final_grades_and_the_absent_students_from_the_gradebook(tmp_path):
    """`autograde stats` sees what the report sees: the run's final grades, and the roster's students with no
    submission (counted among the students, with "no submission" as their reason)."""
    results = {"ann": graded_record("ann", CORE_POINTS), "bob": graded_record("bob", CORE_POINTS),
               "cy": graded_record("cy", {"01_rules": 10})}  # fmt: skip
    absent = {"dee": final_grade(None, DEFAULT_SETTINGS)}
    parameters = GradingParameters("suite", "1", 60.0, "bubblewrap", "v2")
    book = Gradebook(tmp_path / "gradebook.db")
    run = book.start_run(parameters, "subs")
    for name, result in results.items():
        book.record(run, name, name, parameters, result)
    book.record_absent(run, "dee", absent["dee"])
    book.finish_run(run)
    book.close()
    stored, made = stats.facts_from_gradebook(tmp_path / "gradebook.db"), stats.facts_of(results, absent)
    assert stored.finals == made.finals and stored.stages == made.stages
    assert stats.needs_help(stored) == stats.needs_help(made)
    assert [(entry.student, entry.reasons) for entry in stats.needs_help(stored)] == [
        ("cy", ("far below the class: 10 of 100 (class median 100)",)),
        ("dee", ("in the roster, no submission",)),
    ]
    shown = subprocess_stats(tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "4 students" in shown.stdout and "Who needs help: 2 of 4 students." in shown.stdout
    assert "  dee: in the roster, no submission" in shown.stdout
