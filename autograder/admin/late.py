"""What the course policy makes of one graded submission: each stage's submission time, lateness and final score."""

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from autograder.admin.policy import Policy, late_units, penalty_percent, penalty_points
from autograder.admin.submitted import NO_TIME, Submitted, submission_times
from autograder.course.stages import STAGES
from autograder.grading.submissions import read_student
from autograder.record import Lateness, SubmissionResult


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


def apply_policy(
    policy: Policy, student: str, path: Path, result: SubmissionResult, files: dict[str, str] | None = None
) -> dict[str, Lateness]:
    """Every stage's verdict for the student whose submission is at path (a folder or a .zip).

    files: the intake's record of the file it graded for each stage (Submission.files), so the time is that of
    the very file graded, a near-miss name included; None when this run did not read the student (a result
    reused as it stands), and then the intake reads it again. With --at, the time is that of the commit
    graded, for every stage graded. A stage that was graded but whose file is not known has no time (NO_TIME,
    flagged), never "not submitted".
    """
    if files is None and result.commit is None:
        files = read_student(student, path).files
    graded = {stage.id: (files or {}).get(stage.id) for stage in STAGES if result.stages[stage.id].phase != "intake"}
    known = {stage_id: file for stage_id, file in graded.items() if file is not None}
    times = {} if result.commit is not None else submission_times(path, known, policy.collected_by)
    verdicts = {}
    for stage in STAGES:
        entry = result.stages[stage.id]
        if stage.id not in graded:
            submitted = None
        elif result.commit is not None:
            submitted = Submitted(datetime.fromisoformat(result.commit.time), "git commit graded (--at)")
        else:
            submitted = times.get(stage.id, Submitted(None, NO_TIME))
        verdicts[stage.id] = stage_lateness(policy, student, stage.id, entry.score, entry.max_score, submitted)
    return verdicts


def _shown(when: datetime, due: datetime | None) -> str:
    """A submission time in the due date's zone (so the two read alike), to the second."""
    return (when.astimezone(due.tzinfo) if due is not None else when).isoformat(timespec="seconds")
