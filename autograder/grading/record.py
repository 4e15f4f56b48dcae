"""The typed record of grading: how a test ended, a test's and a stage's result, one graded submission.

The judge makes TestResult and StageResult; grade.py gathers them into a SubmissionResult; the gradebook,
grades.csv and the console read that record, and outputs/results.py is the one place it becomes Gradescope's
results.json (and is read back from it). Nothing here imports the rest of the grader, so both grading and
outputs can use it.
"""

from dataclasses import dataclass, field
from enum import StrEnum

from autograder.course.stages import STAGE_BY_ID, TOTAL_POINTS


class Outcome(StrEnum):
    """How a test ended, and a stage's worst; the values are the words results.json and the gradebook hold.

    Each has a severity: a stage takes its worst test's outcome, and a check with several failing boards the
    worst of theirs. A stage that did not run to its end (a timeout, a crash) ranks above the mistakes it hides.
    """

    PASSED = "passed", 0
    NOT_RUN = "not-run", 1  # counted only once another check of the stage passed
    FAILED = "failed", 2
    ERROR = "error", 3  # raised, did not import, or could not be read
    MISSING = "missing", 4  # not submitted, or the function is not there
    TIMEOUT = "timeout", 5
    OUTPUT_LIMIT = "output-limit", 6
    CRASHED = "crashed", 7
    TAMPERED = "tampered", 8  # something wrote to the grader's reply channel
    UNGRADED = "ungraded", 9  # the grader failed on the submission: the zeros are not a grade

    def __new__(cls, value: str, severity: int):
        member = str.__new__(cls, value)
        member._value_ = value
        member.severity = severity
        return member

    def worse(self, other: "Outcome") -> "Outcome":
        return max(self, Outcome(other), key=_severity)

    @classmethod
    def worst(cls, outcomes) -> "Outcome":
        return max(map(cls, outcomes), key=_severity, default=cls.PASSED)


def _severity(outcome: Outcome) -> int:
    return outcome.severity


@dataclass
class TestResult:
    stage: str
    check: str
    function: str
    name: str
    points: int
    score: float
    outcome: Outcome
    visible: bool
    output: str  # Markdown for the student, bounded and clean

    __test__ = False  # not a pytest test class, whatever its name


@dataclass
class StageResult:
    stage: str
    score: float
    max_score: int
    outcome: Outcome  # the worst outcome of its tests, or one for the file itself (missing, error, tampered...)
    message: str
    tests: list[TestResult] = field(default_factory=list)
    seconds: float = 0.0  # wall clock, for the record
    cpu_seconds: float = 0.0  # CPU time of all the stage's processes, as the sandbox measured it


@dataclass(frozen=True)
class GradingParameters:
    """Everything besides the files that a grade depends on (results.json's extra_data.grading)."""

    suite: str  # the hash of the grader, its hidden checks, the references and the visible examples
    grader_version: str
    time_limit: float  # CPU seconds per stage
    isolation: str  # the sandbox's level
    cgroups: str

    def as_dict(self) -> dict:
        return {
            "suite": self.suite,
            "grader_version": self.grader_version,
            "time_limit": self.time_limit,
            "isolation": self.isolation,
            "cgroups": self.cgroups,
        }


@dataclass(frozen=True)
class Lateness:
    """What the course policy made of one stage of one submission (autograder/admin/policy.py decides it)."""

    submitted: str | None  # when, ISO 8601 with its offset; None when the stage was not submitted
    source: str  # where that time came from: "timestamp file", "git commit", "file times", or ""
    due: str | None  # the due date that applied, the student's extension included; None: the stage has none
    extension: str  # the extension used, in words ("2 days"), or ""
    late: int  # started days (or hours, see unit) after the due date; 0 when on time or within the grace
    unit: str  # "day" or "hour"
    penalty_percent: float  # of the stage's points
    penalty: float  # points taken off the stage's raw score
    score: float  # the stage's score after the policy

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Commit:
    """The commit of a student's git repository that was graded (autograde grade --at): results.json's
    extra_data.commit. time is the committer's date as git records it, ISO 8601 with its zone."""

    hash: str
    time: str


@dataclass
class SubmissionResult:
    """One graded submission (or one the grader failed on: then ungraded says why and every outcome is UNGRADED).

    Every text a submission can influence is already capped and clean (see outputs.results.submission_result).
    """

    student: str
    stages: dict[str, StageResult]  # stage id -> its result, for every stage
    output: str  # the notes about the submission as a whole (Markdown paragraphs), the isolation's last
    isolation_level: str
    isolation_detail: str
    seconds: float
    grading: GradingParameters | None = None
    ungraded: str | None = None  # why the grader could not grade it, or None when it was graded
    max_total: int = TOTAL_POINTS
    lateness: dict[str, Lateness] | None = None  # stage id -> the course policy's verdict, when one was given
    commit: Commit | None = None  # the repository's commit graded (--at), or None

    @property
    def total(self) -> float:
        """The core stages' points, out of max_total (TOTAL_POINTS); bonus points are counted apart."""
        return sum(stage.score for stage_id, stage in self.stages.items() if not _bonus(stage_id))

    @property
    def bonus(self) -> float:
        return sum(stage.score for stage_id, stage in self.stages.items() if _bonus(stage_id))

    @property
    def final_total(self) -> float:
        """The total after the course policy (the raw total when no policy was given)."""
        if self.lateness is None:
            return self.total
        return round(sum(entry.score for entry in self.lateness.values()), 2)

    @property
    def tests(self) -> list[TestResult]:
        return [test for stage in self.stages.values() for test in stage.tests]


def _bonus(stage_id: str) -> bool:
    stage = STAGE_BY_ID.get(stage_id)
    return stage is not None and stage.bonus
