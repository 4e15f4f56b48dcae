"""One student's results in Gradescope's results.json format (see docs/results-format.md).

This dict is the record of a graded submission: the gradebook stores it, and grades.csv, the
summary table and the pages are all made from it.
"""

from autograder.course import STAGES, TOTAL_POINTS
from autograder.judge import StageResult

HIDDEN_VISIBILITY = "after_published"


def results_json(student: str, stages: dict[str, StageResult], isolation, notes: list[str], seconds: float) -> dict:
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
                    "output": test.output,
                    "output_format": "md",
                    "tags": [stage.id, test.function],
                    "extra_data": {"stage": stage.id, "check": test.check, "outcome": test.outcome},
                }
            )
    total = sum(result.score for result in stages.values())
    isolation_note = f"Your code ran under **{isolation.level}** isolation: {isolation.detail}."
    if isolation.level != "bubblewrap":
        isolation_note += " (The full sandbox was not available on the grading machine; limits still applied.)"
    return {
        "score": total,
        "execution_time": round(seconds, 3),
        "output": "\n\n".join([*notes, isolation_note]),
        "output_format": "md",
        "test_output_format": "md",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "extra_data": {
            "student": student,
            "isolation": {"level": isolation.level, "detail": isolation.detail},
            "total": total,
            "max_total": TOTAL_POINTS,
            "stages": {
                stage_id: {
                    "score": result.score,
                    "max_score": result.max_score,
                    "outcome": result.outcome,
                    "message": result.message,
                    "seconds": round(result.seconds, 3),
                }
                for stage_id, result in stages.items()
            },
        },
        "tests": tests,
    }
