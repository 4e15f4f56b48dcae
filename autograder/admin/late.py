"""What the course policy makes of one graded submission: each stage's submission time, lateness and final score."""

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from autograder.admin.policy import Policy, late_units, penalty_percent, penalty_points
from autograder.admin.submitted import Submitted, submission_time
from autograder.course.stages import STAGES
from autograder.grading.record import Lateness, SubmissionResult
from autograder.grading.submissions import read_student


def stage_lateness(
    policy: Policy, student: str, stage_id: str, raw: float, possible: int, submitted: Submitted | None
) -> Lateness:
    """The policy's verdict on one stage: late units, penalty and final score (see policy.py for the rules)."""
    due, extension = policy.due_for(student, stage_id)
    when = None if submitted is None else submitted.when
    units = 0 if when is None or due is None else late_units(when, due, policy.grace, policy.late.per)
    percent = penalty_percent(units, policy.late)
    penalty = penalty_points(raw, possible, percent)
    return Lateness(
        submitted=None if when is None else _shown(when, due),
        source="" if submitted is None else submitted.source,
        due=None if due is None else due.isoformat(timespec="minutes"),
        extension="" if extension is None else extension.describe(),
        late=units,
        unit=policy.late.per,
        penalty_percent=float(percent),
        penalty=float(penalty),
        score=float(Decimal(str(raw)) - penalty),
    )


def apply_policy(policy: Policy, student: str, path: Path, result: SubmissionResult) -> dict[str, Lateness]:
    """Every stage's verdict for the student whose submission is at path (a folder or a .zip).

    The time is that of the file the intake grades for the stage (read again here by the intake itself, so a
    near-miss name is timed like an exact one); with --at, that of the commit graded, for every stage graded.
    """
    files = {} if result.commit is not None else read_student(student, path).files
    verdicts = {}
    for stage in STAGES:
        entry = result.stages[stage.id]
        if result.commit is not None:
            graded = entry.phase != "intake"
            commit_time = datetime.fromisoformat(result.commit.time)
            submitted = Submitted(commit_time, "git commit graded (--at)") if graded else None
        else:
            submitted = submission_time(path, stage, files.get(stage.id), policy.collected_by)
        verdicts[stage.id] = stage_lateness(policy, student, stage.id, entry.score, entry.max_score, submitted)
    return verdicts


def _shown(when: datetime, due: datetime | None) -> str:
    """A submission time in the due date's zone (so the two read alike), to the second."""
    return (when.astimezone(due.tzinfo) if due is not None else when).isoformat(timespec="seconds")
