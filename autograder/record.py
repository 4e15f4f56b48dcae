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
    CRASHED = "crashed", 8
    TAMPERED = "tampered", 9  # something wrote to the grader's reply channel
    UNGRADED = "ungraded", 10  # the grader failed on the submission: the zeros are not a grade
    MEMORY_LIMIT = "memory-limit", 7  # the sandbox killed it at the memory limit (listed last: added later)

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


@dataclass(frozen=True)
class Mistake:
    """One wrong answer of a check, for the class statistics: what kind of wrong, on which board, what came back."""

    kind: str  # "returned None", "returned a taken square", "returned the wrong type", "raised KeyError"...
    board: str  # the board's 9 squares joined ('X', 'O', ' ')
    value: str  # what the call gave, shown short


@dataclass(frozen=True)
class Counterexample:
    """A failed hidden check's simplest board where it is wrong, as its output shows it: held back from the student
    until the grades are published, always the instructor's (the class report draws it)."""

    board: str  # the board's 9 squares joined ('X', 'O', ' ')
    call: str  # "score(board)", "winning_square(board, 'X')"
    returned: str  # "returned 5", "raised KeyError ...", "was never answered: ...", shown short
    expected: str  # "expected 1", "expected one of [2, 6]"


@dataclass(frozen=True)
class Diagnosis:
    """A known mistake that explains a wrong stage (grading/diagnosis.py): its variant's name, what it does in the
    lesson's words, and how many of the stage's wrong answers it gives too, out of how many."""

    name: str  # the variant, e.g. "wrong_max_for_both"
    says: str  # "Takes the largest child score for both players, as if O also wanted X to win"
    explained: int
    wrong: int

    @property
    def share(self) -> float:
        return self.explained / self.wrong if self.wrong else 0.0


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
    mistakes: tuple[Mistake, ...] = ()  # its wrong answers (at most MAX_MISTAKES), for the class statistics
    counterexample: Counterexample | None = None  # a failed hidden call check's simplest wrong board
    # The plan's steps of its cases that judging found wrong (never answered, raised, or a wrong value): the one
    # verdict per board, read by the diagnosis in the same run; not stored (results.json holds the words).
    wrong_steps: frozenset[int] = field(default=frozenset(), compare=False, repr=False)

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
    # How far the stage got: "intake" (no module to run: not submitted or unreadable), "import" (the module did
    # not load, or was stopped while it loaded), "calls" (its functions were called). See stage_status.
    phase: str = "calls"
    starter: bool = False  # the module is the released starter, or every call raised NotImplementedError
    # Why an instructor should read the module although it was graded as usual (tables.table_look), or "".
    look: str = ""
    # The known mistakes its wrong answers match (grading/diagnosis.py), best first; () for none or not a known one.
    diagnosis: tuple[Diagnosis, ...] = ()
    wrong_answers: int = 0  # how many of its answers were wrong (0 when nothing was compared)

    @property
    def status(self) -> "StageStatus":
        return stage_status(self)


class StageKind(StrEnum):
    """What became of a stage as a whole, the one word every output shows (report, feedback, console, gradebook).

    label: in words; css: the class the pages colour it with; icon: a sign that reads without colour;
    needs_look: it could not be graded normally, so an instructor should look (the report's "Needs a look").
    """

    FULL = "full-marks", "full marks", "full", "✓", False
    WRONG = "wrong-answers", "wrong answers", "wrong", "✗", False
    STARTER = "starter", "starter left as is", "starter", "○", False
    NOT_SUBMITTED = "not-submitted", "not submitted", "absent", "–", False
    UNREADABLE = "unreadable", "could not be read", "broken", "⊘", True
    NO_LOAD = "does-not-load", "does not load", "broken", "!", True
    CRASHED = "crashed", "crashed", "broken", "✶", True
    TIMED_OUT = "timed-out", "timed out", "broken", "◷", True
    SANDBOX = "stopped-by-sandbox", "stopped by the sandbox", "broken", "■", True
    TAMPERED = "tampered", "tampered with the grader", "broken", "⚠", True
    UNGRADED = "ungraded", "could not be graded", "broken", "?", True

    def __new__(cls, value: str, label: str, css: str, icon: str, needs_look: bool):
        member = str.__new__(cls, value)
        member._value_ = value
        member.label, member.css, member.icon, member.needs_look = label, css, icon, needs_look
        return member


@dataclass(frozen=True)
class StageStatus:
    kind: StageKind
    reason: str  # one short line: why, in the grader's words ("" for full marks and plain wrong answers)

    @property
    def label(self) -> str:
        return self.kind.label

    @property
    def css(self) -> str:
        return self.kind.css


# A stage that was stopped: which kind, by the outcome that stopped it (the worst of its tests').
_STOPPED = {
    Outcome.TIMEOUT: StageKind.TIMED_OUT,
    Outcome.OUTPUT_LIMIT: StageKind.SANDBOX,
    Outcome.MEMORY_LIMIT: StageKind.SANDBOX,
    Outcome.CRASHED: StageKind.CRASHED,
}


def _first_line(text: str) -> str:
    """The first line with more than blanks, cut at 200 characters. A printable text has no line break of any kind
    str.splitlines knows, so it is its own first line: the common case, read many times over for every result."""
    if text.isprintable():
        line = text if text.strip() else ""
    else:
        line = next((line for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= 200 else line[:199] + "…"


def stage_status(result: StageResult) -> StageStatus:
    """The one place a stage's kind is decided, from its record; every output reads it from here."""
    outcome, message = result.outcome, _first_line(result.message)
    if outcome == Outcome.UNGRADED:
        return StageStatus(StageKind.UNGRADED, message)
    if outcome == Outcome.TAMPERED:
        return StageStatus(StageKind.TAMPERED, message)
    if result.phase == "intake":
        kind = StageKind.NOT_SUBMITTED if outcome == Outcome.MISSING else StageKind.UNREADABLE
        return StageStatus(kind, message)
    if result.phase == "import":
        return StageStatus(_STOPPED.get(outcome, StageKind.NO_LOAD), message)
    if result.max_score and result.score >= result.max_score:
        return StageStatus(StageKind.FULL, "")
    if result.starter and result.score <= 0:
        return StageStatus(StageKind.STARTER, message or "the starter, unchanged")
    absent = next((test for test in result.tests if test.outcome == Outcome.MISSING), None)
    if absent is not None:  # it loaded, but a function is not there (a wrong name): it cannot be graded whole
        return StageStatus(StageKind.NO_LOAD, _first_line(absent.output))
    if outcome in _STOPPED:
        stopped = next((test for test in result.tests if test.outcome == outcome), None)
        return StageStatus(_STOPPED[outcome], message or (_first_line(stopped.output) if stopped else ""))
    return StageStatus(StageKind.WRONG, "")


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


# Lateness.source of a stage that was graded but whose submission time could not be read: counted on time, flagged.
NO_TIME = "no time found"


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
class Change:
    """One change the instructor made to a stage's points (an override, or the outcome of a regrade request)."""

    stage: str
    action: str  # "excuse" (the stage does not count), "set" (the points become value), "adjust" (value added)
    value: float | None  # the points set or added; None for "excuse"
    reason: str
    by: str
    on: str  # the date it was decided, ISO 8601
    request: str = ""  # the student's regrade request this change answers, or "" for a plain override

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Regrade:
    """A regrade request and what came of it ("granted": its change is among the stage's changes)."""

    stage: str
    request: str
    outcome: str  # "granted", "denied" or "pending"
    response: str
    by: str
    on: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


# StageGrade.counted of a stage that is no part of the grade: every output shows it as "not counted", not a failure
UNCOUNTED = ("not assigned", "bonus off")


@dataclass(frozen=True)
class StageGrade:
    """What one stage contributes to the final grade, step by step (autograder/admin/final_grade.py decides it)."""

    stage: str
    raw: float  # the points the grader gave
    possible: int
    penalty: float  # points the course policy took off for lateness
    counted: str  # "core", "bonus", "excused", "not assigned" or "bonus off": whether and how it counts
    points: float  # after the policy and the changes: what the stage adds to the final grade
    changes: tuple[Change, ...] = ()

    def as_dict(self) -> dict:
        return {**self.__dict__, "changes": [change.as_dict() for change in self.changes]}


@dataclass(frozen=True)
class FinalGrade:
    """A student's one grade, made once (autograder/admin/final_grade.py), stored, and read by every output.

    points is out of possible (the assigned core stages' points); extra credit can take it above possible.
    """

    status: str  # "graded", "ungraded" (the grader failed: not a grade), or "not submitted"
    points: float
    possible: int
    raw: float  # the assigned core stages' raw points
    penalty: float  # taken off for lateness, in all
    bonus: float  # bonus points counted in points (extra credit, capped); 0 unless the bonus rule is "extra"
    bonus_earned: float  # the bonus stages' points after the policy and changes, counted or not
    bonus_rule: str  # "apart", "extra" or "off" (autograder/admin/settings.py)
    steps: tuple[str, ...]  # how points was reached, one line per step, for the report and the student
    stages: dict[str, StageGrade] = field(default_factory=dict)
    regrades: tuple[Regrade, ...] = ()
    bonus_cap: float | None = None  # "extra": at most this many bonus points count (None: all), for the student

    @property
    def percent(self) -> float:
        return round(100 * self.points / self.possible, 2) if self.possible else 0.0

    @property
    def changes(self) -> list[Change]:
        return [change for stage in self.stages.values() for change in stage.changes]

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "points": self.points,
            "possible": self.possible,
            "percent": self.percent,
            "raw": self.raw,
            "penalty": self.penalty,
            "bonus": self.bonus,
            "bonus_earned": self.bonus_earned,
            "bonus_rule": self.bonus_rule,
            "steps": list(self.steps),
            "stages": {stage_id: stage.as_dict() for stage_id, stage in self.stages.items()},
            "regrades": [regrade.as_dict() for regrade in self.regrades],
            "bonus_cap": self.bonus_cap,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "FinalGrade":
        stages = {
            stage_id: StageGrade(**{**entry, "changes": tuple(Change(**c) for c in entry["changes"])})
            for stage_id, entry in data["stages"].items()
        }
        fields = {key: value for key, value in data.items() if key not in ("percent", "stages", "regrades", "steps")}
        return cls(
            **fields,
            steps=tuple(data["steps"]),
            stages=stages,
            regrades=tuple(Regrade(**entry) for entry in data["regrades"]),
        )


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
    final: FinalGrade | None = None  # the one final grade (admin/final_grade.py), once the run has made it

    @property
    def total(self) -> float:
        """The core stages' points, out of max_total (TOTAL_POINTS); bonus points are counted apart."""
        return sum(stage.score for stage_id, stage in self.stages.items() if not _bonus(stage_id))

    @property
    def bonus(self) -> float:
        return sum(stage.score for stage_id, stage in self.stages.items() if _bonus(stage_id))

    @property
    def untimed(self) -> list[str]:
        """The stages graded without a submission time (NO_TIME): each counted on time and flagged."""
        return [stage_id for stage_id, entry in (self.lateness or {}).items() if entry.source == NO_TIME]

    @property
    def tests(self) -> list[TestResult]:
        return [test for stage in self.stages.values() for test in stage.tests]


def _bonus(stage_id: str) -> bool:
    stage = STAGE_BY_ID.get(stage_id)
    return stage is not None and stage.bonus
