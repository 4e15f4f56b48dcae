"""One student's results in Gradescope's results.json format (see docs/results-format.md), and back.

The record of a graded submission is a SubmissionResult (autograder/record.py). It is made here, where every text
in it that a submission can influence is capped, so what the grader writes per student stays under a fixed
size whatever the code did; to_json is the one place it becomes results.json, from_json the one place a stored
results.json (the gradebook's, when an unchanged submission is reused) becomes a record again.
"""

import dataclasses
import json

from autograder.course.stages import BONUS_POINTS, STAGES, TOTAL_POINTS, Stage
from autograder.outputs import clean, clean_line, clean_tree
from autograder.record import (
    Commit,
    Counterexample,
    Diagnosis,
    FinalGrade,
    GradingParameters,
    Lateness,
    Mistake,
    Outcome,
    StageResult,
    SubmissionResult,
    TestResult,
)

HIDDEN_VISIBILITY = "after_published"
BONUS_TAG = "bonus"  # the last tag of a bonus stage's tests: Gradescope extra credit, never a function name

# Caps on what one student's record can hold (41 tests): about 250 KB of results.json at the very most.
MAX_TEST_OUTPUT = 4_000
MAX_MESSAGE = 2_000
MAX_NOTE = 1_000
MAX_NOTES = 30
MAX_NAME = 500
MAX_KIND = 100  # a wrong answer's kind and value, as the class statistics group them


def submission_result(
    student: str,
    stages: dict[str, StageResult],
    isolation,
    notes: list[str],
    seconds: float,
    grading: GradingParameters | None = None,
) -> SubmissionResult:
    """The record of a graded submission, every text a submission can influence capped and clean, times in ms.

    isolation: the sandbox.Isolation it ran under; grading: the parameters the result depends on.
    """
    shown_notes = [clean(note, MAX_NOTE) for note in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        shown_notes.append(f"({len(notes) - MAX_NOTES} more notes not shown)")
    # One plain line for the student; the sandbox's terms (namespaces, limits) are the instructor's, in
    # extra_data.isolation and the report.
    if isolation.level == "bubblewrap":
        isolation_note = f"Your code ran under **{isolation.level}** isolation: apart from the grader and the network."
    else:
        isolation_note = (
            f"Your code ran under **{isolation.level}** isolation: with limits on its time and memory."
            " (The full sandbox was not available on the grading machine.)"
        )
    capped = {
        stage_id: dataclasses.replace(
            result,
            message=clean(result.message, MAX_MESSAGE),
            seconds=round(result.seconds, 3),
            cpu_seconds=round(result.cpu_seconds, 3),
            tests=[_capped_test(test) for test in result.tests],
        )
        for stage_id, result in stages.items()
    }
    return SubmissionResult(
        student=clean_line(student, MAX_NAME),
        stages=capped,
        output="\n\n".join([*shown_notes, isolation_note]),
        isolation_level=isolation.level,
        isolation_detail=clean(isolation.detail, MAX_NOTE),
        seconds=round(seconds, 3),
        grading=grading,
    )


def _capped_test(test: TestResult) -> TestResult:
    """The test with its output and mistakes capped and clean; the same test when they are already (most are)."""
    output = clean(test.output, MAX_TEST_OUTPUT)
    if output is test.output and type(test.mistakes) is tuple and not test.mistakes:
        return test
    mistakes = tuple(
        Mistake(clean_line(m.kind, MAX_KIND), clean_line(m.board, 9), clean_line(m.value, MAX_KIND))
        for m in test.mistakes
    )
    return dataclasses.replace(test, output=output, mistakes=mistakes)


def test_name(test: TestResult) -> str:
    """A test's name in results.json and the gradebook: its stage, then its title."""
    return f"{test.stage}: {test.name}"


def function_names(function: str) -> list[str]:
    """A check's functions, one tag each ("score, choose_move" is two)."""
    return [name.strip() for name in function.split(",") if name.strip()]


def visibility(test: TestResult) -> str:
    return "visible" if test.visible else HIDDEN_VISIBILITY


def to_json(result: SubmissionResult, stage_tests=None) -> dict:
    """The record as Gradescope's results.json (a dict, before clean_tree and json.dumps).

    stage_tests: what makes a stage's entries of "tests" (tests_json, or cleaned_json's memo of it)."""
    stage_tests = stage_tests or tests_json
    tests = []
    for number, stage in enumerate(STAGES, start=1):
        tests += stage_tests(number, stage, result.stages[stage.id].tests)
    extra = {
        "student": result.student,
        "isolation": {"level": result.isolation_level, "detail": result.isolation_detail},
        "total": result.total,
        "max_total": result.max_total,
        **({"bonus": result.bonus, "max_bonus": BONUS_POINTS} if BONUS_POINTS else {}),
        "stages": {
            stage_id: {
                "score": stage.score,
                "max_score": stage.max_score,
                "outcome": str(stage.outcome),
                "message": stage.message,
                "seconds": stage.seconds,
                "cpu_seconds": stage.cpu_seconds,
                "phase": stage.phase,
                "starter": stage.starter,
                **({"look": stage.look} if stage.look else {}),
                **({"wrong_answers": stage.wrong_answers} if stage.wrong_answers else {}),
                **({"diagnosis": [dataclasses.asdict(d) for d in stage.diagnosis]} if stage.diagnosis else {}),
                "status": {"kind": str(stage.status.kind), "label": stage.status.label, "reason": stage.status.reason},
            }
            for stage_id, stage in result.stages.items()
        },
    }
    if result.grading is not None:
        extra["grading"] = result.grading.as_dict()
    if result.ungraded is not None:
        extra["ungraded"] = result.ungraded
    if result.lateness is not None:  # graded under a course policy (--policy): the raw points above stay as they are
        extra["late"] = {"stages": {stage_id: entry.as_dict() for stage_id, entry in result.lateness.items()}}
    if result.final is not None:  # the one final grade (admin/final_grade.py): score below is its points
        extra["final"] = result.final.as_dict()
    if result.commit is not None:
        extra["commit"] = {"hash": result.commit.hash, "time": result.commit.time}
    return {
        "score": result.final.points if result.final is not None else result.total,
        "execution_time": result.seconds,
        "output": result.output,
        "output_format": "md",
        "test_output_format": "md",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": extra,
        "tests": tests,
    }


def tests_json(number: int, stage: Stage, tests: list[TestResult]) -> list[dict]:
    """A stage's entries of results.json's "tests" (number: the stage's place in the course, from 1)."""
    return [
        {
            "name": test_name(test),
            "number": f"{number}.{index}",
            "score": test.score,
            "max_score": test.points,
            "status": "passed" if test.outcome == Outcome.PASSED else "failed",
            "visibility": visibility(test),
            "output": test.output,
            "output_format": "md",
            "tags": [stage.id, *function_names(test.function), *([BONUS_TAG] if stage.bonus else [])],
            "extra_data": {
                "stage": stage.id,
                "check": test.check,
                "outcome": str(test.outcome),
                **({"mistakes": [dataclasses.asdict(m) for m in test.mistakes]} if test.mistakes else {}),
                **({"counterexample": dataclasses.asdict(test.counterexample)} if test.counterexample else {}),
            },
        }
        for index, test in enumerate(tests, start=1)
    ]


def cleaned_json(result: SubmissionResult) -> dict:
    """clean_tree(to_json(result)), with each stage's test entries made and cleaned once per content: a class hands
    in the same stage results again and again (a stage not handed in yet, a stage with full marks), and they are
    most of a student's results.json. The entries are shared between the dicts this returns: never change one."""
    data = to_json(result, _cleaned_tests)
    return {key: value if key == "tests" else clean_tree(value) for key, value in data.items()}


_CLEANED_TESTS: dict[tuple, tuple[dict, ...]] = {}  # _test_key of a stage's tests -> their cleaned entries
_CLEANED_TESTS_HELD = 512  # distinct stage contents kept at once (a few KB each); the memo starts over past that
# id of such an entry -> (the entry, its text as an item of results.json's "tests"): json_text writes it as it is.
_ENTRY_TEXTS: dict[int, tuple[dict, str]] = {}
_ITEM_NEWLINE = "\n    "  # the line break and indent of an item of the top level's "tests" list


def _cleaned_tests(number: int, stage: Stage, tests: list[TestResult]) -> tuple[dict, ...]:
    key = (number, stage.id, tuple(map(_test_key, tests)))
    entries = _CLEANED_TESTS.get(key)
    if entries is None:
        entries = tuple(clean_tree(entry) for entry in tests_json(number, stage, tests))
        if len(_CLEANED_TESTS) >= _CLEANED_TESTS_HELD:
            _CLEANED_TESTS.clear()
            _ENTRY_TEXTS.clear()
        _CLEANED_TESTS[key] = entries
        for entry in entries:
            parts: list[str] = []
            try:
                _indented(entry, _ITEM_NEWLINE, parts)
            except (_Unusual, RecursionError):
                continue  # json_text leaves the whole file to json.dumps
            _ENTRY_TEXTS[id(entry)] = (entry, "".join(parts))
    return entries


def _test_key(test: TestResult) -> tuple:
    """Everything of a test that tests_json writes, with the score's exact type and repr (1 == 1.0 == True, and
    0.0 == -0.0, but each is written differently)."""
    return (
        test.stage, test.check, test.function, test.name, test.points, type(test.points), repr(test.score),
        str(test.outcome), test.visible, test.output, test.mistakes, test.counterexample,
    )  # fmt: skip


COURSE_MADE = ("late", "final")  # what the course step adds to extra_data (to_json writes them in this order)


def raw_json(data: dict) -> dict:
    """to_json of the record without its lateness and final grade (what the gradebook keeps for reuse), made from
    to_json of the record with them: the score is the raw total again, and the course's entries are left out."""
    extra = data["extra_data"]
    if not any(key in extra for key in COURSE_MADE):
        return data
    raw_extra = {key: value for key, value in extra.items() if key not in COURSE_MADE}
    return {**data, "score": extra["total"], "extra_data": raw_extra}


def from_json(data: dict) -> SubmissionResult:
    """The record of a results.json that to_json wrote: to_json(from_json(data)) == data, key order included.

    Only results of this very grader are read back (the gradebook reuses a result only under the same suite
    hash), so the shape is the one to_json writes.
    """
    extra = data["extra_data"]
    tests: dict[str, list[TestResult]] = {}
    for test in data["tests"]:
        stage_id, meta = test["tags"][0], test["extra_data"]
        tests.setdefault(stage_id, []).append(
            TestResult(
                stage=meta["stage"],
                check=meta["check"],
                function=", ".join(tag for tag in test["tags"][1:] if tag != BONUS_TAG),
                name=test["name"].removeprefix(f"{stage_id}: "),
                points=test["max_score"],
                score=test["score"],
                outcome=Outcome(meta["outcome"]),
                visible=test["visibility"] == "visible",
                output=test["output"],
                mistakes=tuple(Mistake(**entry) for entry in meta.get("mistakes", ())),
                counterexample=Counterexample(**meta["counterexample"]) if "counterexample" in meta else None,
            )
        )
    stages = {
        stage_id: StageResult(
            stage_id,
            entry["score"],
            entry["max_score"],
            Outcome(entry["outcome"]),
            entry["message"],
            tests.get(stage_id, []),
            entry["seconds"],
            entry["cpu_seconds"],
            entry.get("phase", "calls"),  # results written before these fields: as a stage that ran
            entry.get("starter", False),
            entry.get("look", ""),
            tuple(Diagnosis(**found) for found in entry.get("diagnosis", ())),
            entry.get("wrong_answers", 0),
        )
        for stage_id, entry in extra["stages"].items()
    }
    grading = GradingParameters(**extra["grading"]) if "grading" in extra else None
    late = extra.get("late")
    lateness = {stage_id: Lateness(**entry) for stage_id, entry in late["stages"].items()} if late else None
    return SubmissionResult(
        student=extra["student"],
        stages=stages,
        output=data["output"],
        isolation_level=extra["isolation"]["level"],
        isolation_detail=extra["isolation"]["detail"],
        seconds=data["execution_time"],
        grading=grading,
        ungraded=extra.get("ungraded"),
        max_total=extra["max_total"],
        lateness=lateness,
        commit=Commit(**extra["commit"]) if "commit" in extra else None,
        final=FinalGrade.from_dict(extra["final"]) if "final" in extra else None,
    )


def cleaned(result: SubmissionResult) -> SubmissionResult:
    """The record with every string passed through clean_tree, as its results.json is written."""
    return cleaned_with_json(result)[0]


def cleaned_with_json(result: SubmissionResult) -> tuple[SubmissionResult, dict]:
    """cleaned(result) and its results.json tree (cleaned_json: its test entries are shared, never change them),
    which from_json's round trip makes to_json of it."""
    data = cleaned_json(result)
    return from_json(data), data


def failure_json(error: str, seconds: float) -> dict:
    """Gradescope's results.json when the grader itself failed before it had a record: no score is implied."""
    return {
        "score": 0,
        "execution_time": round(seconds, 3),
        "output": (
            "The autograder failed before it could grade this submission. This is not a grade: please tell the "
            f"course staff.\n\n({error})"
        ),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {"error": error, "max_total": TOTAL_POINTS},
        "tests": [],
    }


RESULTS_START = b'{\n  "score": '  # how every results.json json_text writes begins: intake knows one by it


def json_text(data: dict) -> str:
    """results.json's text, as every results.json is written (it begins with RESULTS_START): the characters of
    json.dumps(data, indent=2, ensure_ascii=False) and a line break.

    Written by _indented rather than json.dumps: json indents only in pure Python (its C encoder has no indent),
    and that was the largest piece of the grader's main-thread work on a student (0.81 ms for a stage-one
    student's results.json; 0.38 ms here). Anything _indented does not know as json.dumps writes it (another
    type, a key that is not a str, a float that is not finite) goes to json.dumps after all.
    """
    parts: list[str] = []
    try:
        _indented(data, "\n", parts)
    except (_Unusual, RecursionError):
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    parts.append("\n")
    return "".join(parts)


class _Unusual(Exception):
    """A value _indented leaves to json.dumps."""


_STRING = json.encoder.encode_basestring  # json.dumps's escaping of a str with ensure_ascii=False (C when built)
_INFINITY = float("inf")


def _indented(value, newline: str, parts: list[str]) -> None:
    """Append the text json.dumps(value, indent=2, ensure_ascii=False) writes for value at the depth whose line
    break and indent are newline."""
    kind = type(value)
    if kind is str:
        parts.append(_STRING(value))
    elif kind is dict and newline == _ITEM_NEWLINE and (known := _ENTRY_TEXTS.get(id(value))) and known[0] is value:
        parts.append(known[1])  # a test entry of cleaned_json's memo, written before
    elif kind is dict or kind is list or kind is tuple:
        if not value:
            parts.append("{}" if kind is dict else "[]")
            return
        inner = newline + "  "
        opening, closing = ("{", "}") if kind is dict else ("[", "]")
        for index, item in enumerate(value.items() if kind is dict else value):
            parts.append(("," if index else opening) + inner)
            if kind is dict:
                key, item = item
                if type(key) is not str:
                    raise _Unusual
                parts.append(_STRING(key))
                parts.append(": ")
            _indented(item, inner, parts)
        parts.append(newline + closing)
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif kind is int:
        parts.append(int.__repr__(value))
    elif kind is float and -_INFINITY < value < _INFINITY:
        parts.append(float.__repr__(value))
    else:
        raise _Unusual
