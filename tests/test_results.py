"""Is the record of a graded submission written as results.json in one place and read back exactly?

Made in this process from canned replies (tests/replies.py): no sandbox, no subprocess.
"""

import dataclasses
import json
import re
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.course.stages import STAGES, TOTAL_POINTS
from autograder.grading import sandbox
from autograder.grading.judging import fail_all
from autograder.grading.ungraded import ungraded_result
from autograder.outputs import clean, clean_tree, gradesheet
from autograder.outputs.gradebook import Gradebook
from autograder.outputs.results import (
    MAX_NOTE,
    MAX_NOTES,
    MAX_TEST_OUTPUT,
    cleaned,
    cleaned_with_json,
    from_json,
    json_text,
    submission_result,
    to_json,
)
from autograder.record import GradingParameters, Outcome
from tests.replies import RULES, UNSAFE, encoded, judged, right_lines

ISOLATION = sandbox.Isolation("rlimits", "resource limits only", "none")
PARAMETERS = GradingParameters("0123abcd", "1.0", 60.0, "rlimits", "none")


def a_record(notes=("01_rules: one note", "a note\n\nof two paragraphs")):
    """ada: 01_rules judged from canned replies with one wrong answer, every other stage not submitted."""
    lines = right_lines(RULES.id)
    lines[1]["values"][0] = "sQ"
    stages = {RULES.id: judged(RULES, encoded(lines))}
    stages |= {stage.id: fail_all(stage, Outcome.MISSING, "not submitted") for stage in STAGES[1:]}
    return submission_result("ada", stages, ISOLATION, list(notes), 3.14159, PARAMETERS)


def test_results_json_reads_back_to_the_same_record_and_bytes():
    """Does a results.json read back give the same record, and writing that again the same bytes?"""
    record = a_record()
    data = to_json(record)
    again = from_json(json.loads(json_text(data)))
    assert again == record
    assert json_text(to_json(again)) == json_text(data)
    ungraded = ungraded_result("bob", "the grader failed while grading it: KeyError", ISOLATION, 0.0, PARAMETERS)
    assert from_json(json.loads(json_text(to_json(ungraded)))) == ungraded


JSON_LEAVES = (
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.just(float("nan")) | st.just(float("inf"))
)
JSON_TREES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text() | st.integers() | st.booleans() | st.none(), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(JSON_TREES)
def test_results_json_text_is_exactly_what_json_writes(value):
    """Is json_text's own indented writer, for any JSON-like value (nested lists, tuples and dicts, keys of every
    kind json takes, any str, int or float, NaN and infinity among them), the text of json.dumps with an indent of
    two and ensure_ascii off?"""
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def test_results_json_text_of_a_record_is_what_json_writes():
    """Is a whole results.json (a record with notes, a wrong answer, unsafe text, an ungraded one) written as
    json.dumps writes it?"""
    capped_ungraded = ungraded_result(UNSAFE * 3, "the grader failed: " + UNSAFE, ISOLATION, 0.0, PARAMETERS)
    for record in (a_record(), capped_ungraded):
        data = to_json(record)
        assert json_text(data) == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_results_json_holds_what_gradescope_and_the_course_read():
    """Are the score, the stage entries, each test's status and outcome, and the notes where results.json keeps them?"""
    record = a_record()
    data = to_json(record)
    assert data["score"] == record.total == data["extra_data"]["total"] and 0 < record.total < RULES.points
    assert data["execution_time"] == 3.142 and data["extra_data"]["max_total"] == TOTAL_POINTS
    assert data["extra_data"]["grading"] == PARAMETERS.as_dict()
    assert data["extra_data"]["stages"]["02_count_games"]["outcome"] == "missing"
    assert [test["number"] for test in data["tests"]][:2] == ["1.1", "1.2"]
    failed = [test for test in data["tests"] if test["extra_data"]["stage"] == RULES.id and test["status"] == "failed"]
    assert failed and {test["extra_data"]["outcome"] for test in failed} == {"failed"}
    assert data["output"].startswith(
        "01_rules: one note\n\na note\n\nof two paragraphs\n\nYour code ran under **rlimits**"
    )
    assert "ungraded" not in data["extra_data"]


def test_what_a_submission_controls_is_capped_when_the_record_is_made():
    """Are a huge name, too many notes, long notes and long test outputs cut as the record is made?"""
    record = a_record(notes=["n" * 5000] * 100)
    assert len(record.output) < (MAX_NOTES + 2) * (MAX_NOTE + 100)
    assert f"({100 - MAX_NOTES} more notes not shown)" in record.output
    stages = dict(record.stages)
    stages[RULES.id].tests[0].output = UNSAFE * 10_000
    stages[RULES.id].message = UNSAFE * 10_000
    capped = submission_result(UNSAFE * 1000, stages, ISOLATION, [], 1.0)
    assert len(capped.stages[RULES.id].tests[0].output) < MAX_TEST_OUTPUT + 100
    assert len(capped.student) < 600 and "\n" not in capped.student
    assert "\ud800" not in capped.stages[RULES.id].message
    assert cleaned(capped) == from_json(json.loads(json_text(to_json(capped))))


def test_a_stage_written_before_is_written_for_each_student_as_their_own_record_says():
    """Each stage's entries are made once per content and shared by the students who have it: is every student's
    results.json still exactly json.dumps of their own record, with a score of 1 and one of 1.0 (equal, but
    written apart) each written as it is, and a change of one character in an output its own?"""
    record = a_record()
    stage = record.stages[RULES.id]
    at, first = next((at, test) for at, test in enumerate(stage.tests) if test.score == 1)
    assert type(first.score) is int

    def with_first(test):
        tests = [*stage.tests[:at], test, *stage.tests[at + 1 :]]
        return dataclasses.replace(record, stages={**record.stages, RULES.id: dataclasses.replace(stage, tests=tests)})

    as_float = with_first(dataclasses.replace(first, score=1.0))
    other_output = with_first(dataclasses.replace(first, output=first.output + "."))
    texts = []
    for each in (record, as_float, other_output, record, as_float):
        result, data = cleaned_with_json(each)
        assert data == clean_tree(to_json(each)) and result == cleaned(each)
        texts.append(json_text(data))
        assert texts[-1] == json.dumps(clean_tree(to_json(each)), indent=2, ensure_ascii=False) + "\n"
    assert len(set(texts)) == 3 and '"score": 1.0,' in texts[1] and '"score": 1.0,' not in texts[0]


def test_grades_csv_and_the_gradebook_take_the_record(tmp_path):
    """Do grades.csv and the gradebook store the record's points and outcomes, and give the record back?"""
    record = a_record()
    gradesheet.write_grades(tmp_path / "grades.csv", {"ada": record})
    header, row = (line.split(",") for line in (tmp_path / "grades.csv").read_text().splitlines()[:2])
    assert row[0] == "ada" and row[header.index("total")] == gradesheet.points(record.total)
    book = Gradebook(tmp_path / "gradebook.db")
    run = book.start_run(PARAMETERS, str(tmp_path))
    book.record(run, "ada", "files", PARAMETERS, record)
    submission_id, stored = book.stored("ada", "files", PARAMETERS)
    assert stored == record
    book.close()
    db = sqlite3.connect(tmp_path / "gradebook.db")
    outcomes = dict(db.execute("SELECT stage, outcome FROM stage_scores WHERE submission_id = ?", (submission_id,)))
    assert outcomes == {stage_id: str(stage.outcome) for stage_id, stage in record.stages.items()}
    names = [row[0] for row in db.execute("SELECT name FROM test_results WHERE stage = '01_rules' ORDER BY rowid")]
    assert names == [f"01_rules: {test.name}" for test in record.stages[RULES.id].tests]


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=())))
def test_clean_leaves_printable_text_alone_and_cleans_the_rest_as_before(text):
    """clean() skips its substitutions for printable text: is the answer still the substitutions' on any text?"""
    expected = re.sub("[\x00-\x08\x0b-\x1f\x7f-\x9f]", "", re.sub("[\ud800-\udfff]", "\ufffd", text))
    assert clean(text) == expected
