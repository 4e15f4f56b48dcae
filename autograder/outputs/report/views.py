"""What the pages show, as plain records built from the graded submissions: the one place that reads them.

The results are the grader's typed records (autograder/grading/record.py). Everything the templates and the
plots need is taken out of them here, so the templates read only what they show. Texts stay as they came (the
templates escape them; outputs and messages are Markdown, rendered by markdown_render).
"""

import statistics
from dataclasses import dataclass
from urllib.parse import quote

from autograder.course.stages import BONUS_POINTS, BONUS_STAGES, CORE_STAGES, STAGE_BY_ID, STAGES, TOTAL_POINTS, Stage
from autograder.grading.record import (
    NO_TIME,
    Outcome,
    StageKind,
    StageResult,
    SubmissionResult,
    TestResult,
    stage_status,
)
from autograder.outputs import name_order, stats
from autograder.outputs.folders import output_folders
from autograder.outputs.gradesheet import points  # penalties keep their two decimals
from autograder.outputs.stats import number

ORDINARY_KINDS = (StageKind.FULL, StageKind.WRONG)  # the score says it all: no word beside it
HIDDEN_NOTE = "Details are shown after the grades are published."
FULL_SANDBOX = "bubblewrap"


def feedback_href(student: str, folders: dict[str, str] | None = None) -> str:
    """The relative link from report.html to a student's page (names may hold spaces, '#', '?', ...); folders:
    the class's folders (outputs/folders.py), without which the student is taken to be alone in the class."""
    folder = (folders or {}).get(student) or output_folders([student])[student]
    return f"{quote(folder, safe='')}/feedback.html"


# ---------------------------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class Score:
    score: float
    max_score: float

    @property
    def full(self) -> bool:
        return bool(self.max_score) and self.score >= self.max_score


@dataclass(frozen=True)
class Cell(Score):
    """One stage of one student in the class table, with its kind (record.StageKind) and why, in one line."""

    kind: StageKind = StageKind.WRONG
    reason: str = ""

    @property
    def tag(self) -> str:
        """The word shown beside the score ("" for plain wrong answers and full marks: the score says it)."""
        return "" if self.kind in ORDINARY_KINDS else self.kind.label


@dataclass(frozen=True)
class StudentRow:
    name: str
    href: str
    cells: list[Cell]  # one per core stage, in order
    total: Score
    final: Score | None = None  # after the course policy (--policy), or None without one
    late: str = ""  # in words: which stages were late and what it cost ("03: 2 days late, -4"), or ""
    bonus_cells: tuple[Cell, ...] = ()  # one per bonus stage, shown after the total as grades.csv has them
    bonus: Score | None = None  # the bonus points, when the course has bonus stages


@dataclass(frozen=True)
class DeadlineRow:
    """One stage under the course policy, on the student's page."""

    stage: str
    submitted: str  # when, and where that came from: "2025-03-08T10:00:00+01:00 (git commit)", or "–"
    due: str  # "–" when the stage has no due date
    extension: str
    late: str  # "2 days", or "" when on time
    penalty: str  # "-4 (20 %)", or ""
    score: Score


@dataclass(frozen=True)
class PassRate:
    """One test of the class: how many of the students whose module for its stage worked passed it."""

    stage: str
    name: str
    label: str  # the name without its stage
    check: str
    visible: bool
    passed: int
    position: tuple[int, int]  # stage order, then the test's place in a student's results
    working: int = 0  # the students whose module for the stage loaded and answered (stats.WORKING)

    @property
    def rate(self) -> float:
        return self.passed / self.working if self.working else 0.0


@dataclass(frozen=True)
class Look:
    """A submission, or a stage of it, that could not be graded normally (stats.needs_a_look), with its link."""

    student: str
    href: str
    stage: str  # a stage id, or "all stages"
    kind: StageKind
    reason: str


@dataclass(frozen=True)
class Helped:
    student: str
    href: str
    stages: list[stats.HelpStage]


@dataclass(frozen=True)
class WrongCheck:
    """One check that some working modules failed, with the most common wrong answers and an example board."""

    name: str
    visible: bool
    passed: int
    working: int
    clusters: list[stats.Cluster]  # at most stats.CLUSTERS_SHOWN


@dataclass(frozen=True)
class WrongStage:
    stage: Stage
    working: int
    submitted: int
    checks: list[WrongCheck]


@dataclass(frozen=True)
class Ungraded:
    student: str
    href: str
    reason: str


@dataclass(frozen=True)
class Isolation:
    """How the class's submissions were run: weak lists (level, detail) of every level short of the sandbox."""

    weak: list[tuple[str, str]]
    sandbox_detail: str  # when nothing was weak


@dataclass(frozen=True)
class Kpi:
    value: str
    label: str


@dataclass(frozen=True)
class StageScores:
    stage: Stage
    scores: list[float]  # one per student

    @property
    def median(self) -> str:
        return number(statistics.median(self.scores)) if self.scores else "–"


@dataclass(frozen=True)
class ClassReport:
    students: list[StudentRow]
    kpis: list[Kpi]
    isolation: Isolation | None  # None: no student at all
    ungraded: list[Ungraded]
    notes: list[str]
    totals: list[float]
    stages: list[StageScores]
    pass_rates: list[PassRate]
    looks: list[Look]  # "Needs a look"
    look_students: int
    helped: list[Helped]  # "Who needs help"
    help_rule: str
    wrong: list[WrongStage]  # "What the class got wrong", by stage
    policy: bool = False  # some student was graded under a course policy: the table shows late work
    untimed_looks: int = 0  # of looks, the graded stages with no submission time (counted on time)


@dataclass(frozen=True)
class TestView:
    name: str  # without its stage
    passed: bool
    hidden: bool
    held_back: bool  # a hidden test's output before the grades are published: HIDDEN_NOTE instead
    output: str  # Markdown, "" when there is nothing to show
    score: Score


@dataclass(frozen=True)
class StageSection:
    id: str
    title: str
    score: Score
    outcome: str  # its kind in words, or "" (plain wrong answers, full marks)
    kind: StageKind
    message: str  # Markdown: why the stage as a whole went wrong
    tests: list[TestView]
    hints: tuple[str, ...]  # Markdown, shown only without full marks


@dataclass(frozen=True)
class FeedbackPage:
    student: str
    total: Score
    notes: str  # Markdown: the grader's notes on the whole submission
    stages: list[StageSection]
    deadlines: list[DeadlineRow] = ()  # under a course policy, one per stage; empty without one
    final: Score | None = None  # the total after the course policy
    commit: str = ""  # which commit of the student's repository was graded (--at), or ""


# ---------------------------------------------------------------------------------------------------------------
# From the records


def pass_rates(results: dict[str, SubmissionResult]) -> list[PassRate]:
    """Every test of the class with how many of the working modules passed it, the lowest rate first.

    Only the students whose module for the test's stage worked count (not the missing, the starters, the ones
    that did not load or were stopped): a stage few handed in does not look like many wrong answers.
    """
    rows: dict[tuple[str, str], dict] = {}
    order = {stage.id: index for index, stage in enumerate(STAGES)}
    for result in results.values():
        working = {stage_id for stage_id, stage in result.stages.items() if stage.status.kind in stats.WORKING}
        for place, test in enumerate(result.tests):
            # The check id is stable across students; the same id can appear in two stages.
            key = (test.stage, test.check or test.name)
            row = rows.setdefault(
                key,
                {
                    "stage": test.stage,
                    "name": f"{test.stage}: {test.name}",
                    "label": test.name,
                    "check": key[1],
                    "visible": test.visible,
                    "passed": 0,
                    "position": (order.get(test.stage, len(order)), place),
                    "working": 0,
                },
            )
            if test.stage in working:
                row["working"] += 1
                row["passed"] += test.outcome == Outcome.PASSED
    found = [PassRate(**row) for row in rows.values() if row["working"]]  # a test nobody's module reached says nothing
    return sorted(found, key=lambda row: (not row.working, row.rate, row.position))


def _isolation(results: dict[str, SubmissionResult]) -> Isolation | None:
    levels: dict[str, str] = {}
    for result in results.values():
        levels.setdefault(result.isolation_level, result.isolation_detail)
    if not levels:
        return None
    weak = sorted((level, detail) for level, detail in levels.items() if level != FULL_SANDBOX)
    return Isolation(weak, levels.get(FULL_SANDBOX, ""))


def _cell(result: SubmissionResult, stage: Stage) -> Cell:
    entry = result.stages.get(stage.id)
    if entry is None:
        return Cell(0, stage.points, StageKind.NOT_SUBMITTED)
    status = entry.status
    return Cell(entry.score, entry.max_score, status.kind, status.reason)


def _wrong(facts: stats.Facts, visible: dict[tuple[str, str], bool]) -> list[WrongStage]:
    stages = []
    for entry in stats.wrong_by_stage(facts):
        checks = [
            WrongCheck(row.name, visible.get((row.stage, row.check), True), row.passed, row.working,
                       row.clusters[: stats.CLUSTERS_SHOWN])
            for row in entry.checks
            if row.passed < row.working
        ]  # fmt: skip
        stages.append(WrongStage(STAGE_BY_ID[entry.stage], entry.working, entry.submitted, checks))
    return stages


def _late_words(entry) -> str:
    return f"{entry.late} {entry.unit}{'s' * (entry.late != 1)}" if entry.late else ""


def _late_summary(result: SubmissionResult) -> str:
    parts = []
    for stage_id, entry in (result.lateness or {}).items():
        if entry.late or entry.extension:
            cost = f", -{points(entry.penalty)}" if entry.penalty else ""
            extension = f" (extension {entry.extension})" if entry.extension else ""
            late = f"{_late_words(entry)} late" if entry.late else "on time"
            parts.append(f"{stage_id[:2]}: {late}{cost}{extension}")
    return "; ".join(parts)


def _final(result: SubmissionResult) -> Score | None:
    return None if result.final is None else Score(result.final.points, result.final.possible)


def deadline_rows(result: SubmissionResult) -> list[DeadlineRow]:
    rows = []
    for stage_id, entry in (result.lateness or {}).items():
        submitted = f"{entry.submitted} ({entry.source})" if entry.submitted else (entry.source or "–")
        penalty = f"-{points(entry.penalty)} ({points(entry.penalty_percent)} %)" if entry.penalty_percent else ""
        max_score = result.stages[stage_id].max_score if stage_id in result.stages else 0
        rows.append(
            DeadlineRow(
                stage_id,
                submitted,
                entry.due or "–",
                entry.extension,
                _late_words(entry),
                penalty,
                Score(entry.score, max_score),
            )  # fmt: skip
        )
    return rows


def class_report(
    results: dict[str, SubmissionResult],
    notes: list[str] | tuple = (),
    folders: dict[str, str] | None = None,
    absent: dict | None = None,
) -> ClassReport:
    """The class report of these results (student -> record), with notes about the run as a whole; folders: each
    student's folder under OUT (by default those of the students in results)."""
    folders = folders or output_folders(results)
    students = sorted(results, key=name_order)
    totals = [results[name].total for name in students]
    rows = [
        StudentRow(
            name,
            feedback_href(name, folders),
            [_cell(results[name], stage) for stage in CORE_STAGES],
            Score(total, TOTAL_POINTS),
            _final(results[name]),
            _late_summary(results[name]),
            tuple(_cell(results[name], stage) for stage in BONUS_STAGES),
            Score(results[name].bonus, BONUS_POINTS) if BONUS_STAGES else None,
        )
        for name, total in zip(students, totals, strict=True)
    ]
    facts = stats.facts_of(results)
    looks = [
        Look(look.student, feedback_href(look.student, folders), look.stage, look.kind, look.reason)
        for look in stats.needs_a_look(facts)
    ]
    untimed = _untimed_looks(results, students, folders)
    looks += untimed
    look_students = len({look.student for look in looks})
    helped = [
        Helped(entry.student, feedback_href(entry.student, folders), entry.stages) for entry in stats.needs_help(facts)
    ]
    visible = {(test.stage, test.check): test.visible for result in results.values() for test in result.tests}
    ungraded = [
        Ungraded(name, feedback_href(name, folders), results[name].ungraded)
        for name in students
        if results[name].ungraded is not None
    ]
    kpis = [
        Kpi(str(len(students)), "students"),
        Kpi(f"{number(statistics.median(totals))} / {TOTAL_POINTS}" if totals else "–", "median total"),
        Kpi(number(statistics.mean(totals)) if totals else "–", "mean total"),
        Kpi(str(sum(total >= TOTAL_POINTS for total in totals)), "full marks"),
        Kpi(str(look_students), "need a look"),
        Kpi(str(len(helped)), "need help"),
        *([Kpi(str(len(ungraded)), "could not be graded")] if ungraded else []),
    ]
    return ClassReport(
        students=rows,
        kpis=kpis,
        isolation=_isolation(results),
        ungraded=ungraded,
        notes=[str(note) for note in notes],
        totals=totals,
        stages=[StageScores(stage, [_cell(results[name], stage).score for name in students]) for stage in STAGES],
        pass_rates=pass_rates(results),
        looks=looks,
        look_students=look_students,
        helped=helped,
        help_rule=stats.HELP_RULE,
        wrong=_wrong(facts, visible),
        policy=any(results[name].lateness is not None for name in students),
        untimed_looks=len(untimed),
    )


def _untimed_looks(results: dict[str, SubmissionResult], students: list[str], folders) -> list[Look]:
    """A graded stage whose submission time could not be read was counted on time: an instructor should check."""
    return [
        Look(
            name,
            feedback_href(name, folders),
            stage_id,
            stage_status(results[name].stages[stage_id]).kind,
            f"{NO_TIME}: its submission time could not be read, so it was counted on time; check when it was handed in",
        )
        for name in students
        for stage_id in results[name].untimed
    ]


def _test_view(test: TestResult, show_hidden: bool, stage_message: str) -> TestView:
    hidden = not test.visible
    output = test.output
    if stage_message and output.strip() == stage_message.strip():
        output = ""  # the stage's own message (it did not import, it crashed) is shown once above its tests
    held_back = hidden and not show_hidden and bool(output)
    return TestView(
        name=test.name,
        passed=test.outcome == Outcome.PASSED,
        hidden=hidden,
        held_back=held_back,
        output="" if held_back or not output.strip() else output,
        score=Score(test.score, test.points),
    )


def _section(stage_id: str, entry: StageResult, show_hidden: bool) -> StageSection:
    stage = STAGE_BY_ID.get(stage_id)
    score = Score(entry.score, entry.max_score)
    kind = entry.status.kind
    return StageSection(
        id=stage_id,
        title=f"{stage_id} · {stage.title}" if stage else stage_id,
        score=score,
        outcome="" if kind in ORDINARY_KINDS else kind.label,
        kind=kind,
        message=entry.message,
        tests=[_test_view(test, show_hidden, entry.message) for test in entry.tests],
        hints=stage.hints if stage and score.score < score.max_score else (),
    )


def feedback_page(result: SubmissionResult, show_hidden: bool = False) -> FeedbackPage:
    """One student's page; show_hidden: the outputs of hidden tests too (after the grades are published)."""
    ids = [stage.id for stage in STAGES if stage.id in result.stages]
    ids += [stage_id for stage_id in result.stages if stage_id not in ids]
    return FeedbackPage(
        student=result.student,
        total=Score(result.total, result.max_total),
        notes=result.output if result.output.strip() else "",
        stages=[_section(stage_id, result.stages[stage_id], show_hidden) for stage_id in ids],
        deadlines=deadline_rows(result),
        final=_final(result),
        commit=f"Graded as of commit {result.commit.hash[:12]} ({result.commit.time})" if result.commit else "",
    )
