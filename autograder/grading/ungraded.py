"""The record of a submission the grader failed on: every stage failed for the one reason, no claim to a grade."""

from autograder.course.stages import STAGES
from autograder.grading.judging import fail_all
from autograder.outputs import clean_line
from autograder.outputs.results import MAX_MESSAGE, submission_result
from autograder.record import GradingParameters, Outcome, SubmissionResult


def ungraded_result(
    student: str, reason: str, isolation, seconds: float = 0.0, grading: GradingParameters | None = None
) -> SubmissionResult:
    """The record of a submission the grader failed on: zeros everywhere, the reason, and no claim to be a grade."""
    reason = clean_line(reason, MAX_MESSAGE)
    message = f"could not be graded: {reason}"
    stages = {stage.id: fail_all(stage, Outcome.UNGRADED, message) for stage in STAGES}
    note = (
        f"**This submission could not be graded**: {reason}. The zeros below are not a grade: the grader failed "
        "on this submission; please tell the course staff."
    )
    result = submission_result(student, stages, isolation, [note], seconds, grading)
    result.ungraded = reason
    return result
