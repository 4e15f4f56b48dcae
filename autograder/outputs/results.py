"""One student's results in Gradescope's results.json format (see docs/results-format.md).

This dict is the record of a graded submission: the gradebook stores it, and grades.csv, the
summary table and the pages are all made from it. Every text in it that a submission can influence is
capped here, so what the grader writes per student stays under a fixed size whatever the code did.
"""

from autograder.course.stages import STAGES, TOTAL_POINTS
from autograder.grading.judge import StageResult, fail_all
from autograder.outputs import clean, clean_line

HIDDEN_VISIBILITY = "after_published"
UNGRADED = "ungraded"  # the outcome of every stage and test of a submission the grader failed on

# Caps on what one student's record can hold (41 tests): about 250 KB of results.json at the very most.
MAX_TEST_OUTPUT = 4_000
MAX_MESSAGE = 2_000
MAX_NOTE = 1_000
MAX_NOTES = 30
MAX_NAME = 500


def results_json(
    student: str,
    stages: dict[str, StageResult],
    isolation,
    notes: list[str],
    seconds: float,
    grading: dict | None = None,
) -> dict:
    """grading: the parameters the result depends on (suite, grader_version, time_limit, isolation, cgroups)."""
    tests = []
    for number, stage in enumerate(STAGES, start=1):
        result = stages[stage.id]
        for index, test in enumerate(result.tests, start=1):
            tests.append(
                {
                    "name": f"{stage.id}: {test.name}",
                    "number": f"{number}.{index}",
                    "score": test.score,
                    "max_score": test.points,
                    "status": "passed" if test.outcome == "passed" else "failed",
                    "visibility": "visible" if test.visible else HIDDEN_VISIBILITY,
                    "output": clean(test.output, MAX_TEST_OUTPUT),
                    "output_format": "md",
                    "tags": [stage.id, test.function],
                    "extra_data": {"stage": stage.id, "check": test.check, "outcome": test.outcome},
                }
            )
    total = sum(result.score for result in stages.values())
    isolation_note = f"Your code ran under **{isolation.level}** isolation: {isolation.detail}."
    if isolation.level != "bubblewrap":
        isolation_note += " (The full sandbox was not available on the grading machine.)"
    shown_notes = [clean(note, MAX_NOTE) for note in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        shown_notes.append(f"({len(notes) - MAX_NOTES} more notes not shown)")
    extra = {
        "student": clean_line(student, MAX_NAME),
        "isolation": {"level": isolation.level, "detail": clean(isolation.detail, MAX_NOTE)},
        "total": total,
        "max_total": TOTAL_POINTS,
        "stages": {
            stage_id: {
                "score": result.score,
                "max_score": result.max_score,
                "outcome": result.outcome,
                "message": clean(result.message, MAX_MESSAGE),
                "seconds": round(result.seconds, 3),
                "cpu_seconds": round(result.cpu_seconds, 3),
            }
            for stage_id, result in stages.items()
        },
    }
    if grading is not None:
        extra["grading"] = dict(grading)
    return {
        "score": total,
        "execution_time": round(seconds, 3),
        "output": "\n\n".join([*shown_notes, isolation_note]),
        "output_format": "md",
        "test_output_format": "md",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": extra,
        "tests": tests,
    }


def ungraded_json(student: str, reason: str, isolation, seconds: float = 0.0, grading: dict | None = None) -> dict:
    """The record of a submission the grader failed on: zeros everywhere, the reason, and no claim to be a grade."""
    reason = clean_line(reason, MAX_MESSAGE)
    message = f"could not be graded: {reason}"
    stages = {stage.id: fail_all(stage, UNGRADED, message) for stage in STAGES}
    note = (
        f"**This submission could not be graded**: {reason}. The zeros below are not a grade: the grader failed "
        "on this submission; please tell the course staff."
    )
    result = results_json(student, stages, isolation, [note], seconds, grading)
    result["extra_data"]["ungraded"] = reason
    return result


def ungraded_reason(result: dict) -> str | None:
    """Why this submission could not be graded, or None when it was graded."""
    reason = result.get("extra_data", {}).get("ungraded")
    return str(reason) if reason is not None else None
