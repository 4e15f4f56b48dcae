"""What the pages show, as plain records built from the graded submissions: the one place that reads them.

The results are the grader's typed records (autograder/record.py). Everything the templates and the
plots need is taken out of them here, so the templates read only what they show. Texts stay as they came (the
templates escape them; outputs and messages are Markdown, rendered by markdown_render).
"""

import statistics
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import quote

from autograder.course.stages import BONUS_POINTS, BONUS_STAGES, CORE_STAGES, STAGE_BY_ID, STAGES, TOTAL_POINTS, Stage
from autograder.outputs import name_order, stats
from autograder.outputs.folders import output_folders
from autograder.outputs.gradesheet import points  # penalties keep their two decimals
from autograder.outputs.stats import number
from autograder.record import (
    NO_TIME,
    UNCOUNTED,
    Change,
    Counterexample,
    Diagnosis,
    FinalGrade,
    Outcome,
    Regrade,
    StageGrade,
    StageKind,
    StageResult,
    SubmissionResult,
    TestResult,
    stage_status,
)

ORDINARY_KINDS = (StageKind.FULL, StageKind.WRONG)  # the score says it all: no word beside it
ACTION_WORDS = {"excuse": "excused", "set": "set to", "adjust": "adjusted by"}  # a Change's action, as its steps say
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
    counted: str = "core"  # StageGrade.counted: "not assigned" and "bonus off" are shown as not counted
    change: str = ""  # the instructor's change to it, in words ("excused (medical note)"), or ""

    @property
    def neutral(self) -> bool:
        """No part of the grade (not assigned, a bonus turned off, excused): never coloured as a failure."""
        return self.counted in (*UNCOUNTED, "excused")

    @property
    def title(self) -> str:
        """The cell's tooltip: why it is not a plain score, and the instructor's change to it."""
        return "; ".join(text for text in (self.reason, self.change) if text)

    @property
    def tag(self) -> str:
        """The word shown beside the score ("" for plain wrong answers and full marks: the score says it)."""
        if self.neutral:
            return "excused" if self.counted == "excused" else "not counted"
        return "" if self.kind in ORDINARY_KINDS else self.kind.label


@dataclass(frozen=True)
class GradeCell:
    """A student's grade as the report shows it: the final grade (record.FinalGrade), never a raw total.

    score: the final points out of the possible ones, None when there is no grade (not graded, not submitted,
    every stage excused: word says which); raw: the raw points of the assigned stages, shown beside it when they
    differ; why: what made the difference, short ("late −40; 03 excused"); steps: every step, the tooltip.
    """

    score: Score | None
    word: str = ""
    raw: Score | None = None
    why: str = ""
    steps: str = ""


@dataclass(frozen=True)
class StudentRow:
    name: str
    href: str  # "" for a roster student with no submission: there is no page to open
    cells: list[Cell]  # one per core stage, in order
    grade: GradeCell
    late: str = ""  # in words: which stages were late and what it cost ("03: 2 days late, -4"), or ""
    bonus_cells: tuple[Cell, ...] = ()  # one per bonus stage, shown after the grade as grades.csv has them
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
    href: str  # "" for a roster student with no submission
    reasons: tuple[str, ...]  # stats.needs_help's: not started, no submission, late, far below the class
    stages: list[stats.HelpStage]


@dataclass(frozen=True)
class ChangeRow:
    """One change the instructor made (an override, or a granted regrade), in the report and on the student's page."""

    student: str
    what: str  # "excused", "set to 18", "adjusted by -2"
    change: Change  # its stage, reason, by and on


@dataclass(frozen=True)
class RegradeRow:
    student: str
    regrade: Regrade  # its stage, request, outcome, response, by and on


@dataclass(frozen=True)
class ShownCounterexample:
    """A student's simplest board where a hidden check is wrong (TestResult.counterexample), for the instructor."""

    student: str
    href: str
    example: Counterexample


@dataclass(frozen=True)
class WrongCheck:
    """One check that some working modules failed, with the most common wrong answers and an example board."""

    name: str
    visible: bool
    passed: int
    working: int
    clusters: list[stats.Cluster]  # at most stats.CLUSTERS_SHOWN
    counterexamples: list[ShownCounterexample] = field(default_factory=list)  # a hidden check's, student by student


@dataclass(frozen=True)
class WrongStage:
    stage: Stage
    working: int
    submitted: int
    checks: list[WrongCheck]
    mistakes: list[stats.KnownMistake] = field(default_factory=list)  # its wrong modules by the mistake they match


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
    students: list[StudentRow]  # every student of the class: graded, and the roster's with no submission
    kpis: list[Kpi]
    isolation: Isolation | None  # None: no student at all
    ungraded: list[Ungraded]
    notes: list[str]
    grades: list[float]  # the final grades of the students graded (the headline figures and the histogram)
    possible: int  # the points the grades are out of
    headline: str  # which students the headline figures cover, in words
    stages: list[StageScores]
    pass_rates: list[PassRate]
    looks: list[Look]  # "Needs a look"
    look_students: int
    helped: list[Helped]  # "Who needs help"
    help_rule: str
    wrong: list[WrongStage]  # "What the class got wrong", by stage
    policy: bool = False  # some student was graded under a course policy: the table shows late work
    untimed_looks: int = 0  # of looks, the graded stages with no submission time (counted on time)
    changes: list[ChangeRow] = ()  # "Changes by the instructor"
    regrades: list[RegradeRow] = ()
    bonus_rule: str = ""  # the course's bonus rule ("apart", "extra", "off"), "" when no grade says
    left_out: frozenset[str] = frozenset()  # stages nobody was assigned and nobody worked on: no column


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
    tests: tuple[TestView, ...]
    hints: tuple[str, ...]  # Markdown, shown only without full marks
    counted: str = "core"  # StageGrade.counted; "not assigned" and "bonus off" are shown as not counted
    counts: str = ""  # how the stage counts in the grade, when that is not simply its score, in words
    chip: Score | None = None  # what the stage counts in the grade (after lateness and changes), for the strip
    chip_note: str = ""  # why that differs from its score: "late", "changed"
    # The known mistakes its wrong answers look like, in the lesson's words, each with its share ("" when none)
    looks_like: tuple[str, ...] = ()

    @property
    def neutral(self) -> bool:
        """No part of the grade (not assigned, a bonus turned off, excused): shown in grey, never as a failure."""
        return self.counted in (*UNCOUNTED, "excused")

    @property
    def tag(self) -> str:
        if not self.neutral:
            return ""
        return "excused" if self.counted == "excused" else "not counted"


@dataclass(frozen=True)
class GradeHeading:
    """The feedback page's heading: "Your grade: X of Y", or why there is none."""

    score: Score | None  # None: no grade (could not be graded, every stage excused)
    text: str  # the heading's words after "Your grade: "
    note: str  # one line under it: the raw points when they differ, extra credit, why there is no grade


@dataclass(frozen=True)
class FeedbackPage:
    student: str
    grade: GradeHeading
    notes: str  # Markdown: the grader's notes on the whole submission
    stages: list[StageSection]
    deadlines: list[DeadlineRow] = ()  # under a course policy, one per stage; empty without one
    penalty: float | None = None  # the late penalty in all (FinalGrade.penalty), None without a final grade
    commit: str = ""  # which commit of the student's repository was graded (--at), or ""
    steps: tuple[str, ...] = ()  # "How your grade was made", one line each (FinalGrade.steps)
    changes: list[ChangeRow] = ()
    regrades: list[RegradeRow] = ()


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


def _stage_grade(final: FinalGrade | None, stage_id: str) -> StageGrade | None:
    return None if final is None else final.stages.get(stage_id)


def _cell(result: SubmissionResult, stage: Stage) -> Cell:
    entry = result.stages.get(stage.id)
    counted, change = _counted(_stage_grade(result.final, stage.id), stage)
    if entry is None:
        return Cell(0, stage.points, StageKind.NOT_SUBMITTED, counted=counted, change=change)
    status = entry.status
    return Cell(entry.score, entry.max_score, status.kind, status.reason, counted, change)


def _absent_cell(final: FinalGrade, stage: Stage) -> Cell:
    counted, change = _counted(_stage_grade(final, stage.id), stage)
    return Cell(0, stage.points, StageKind.NOT_SUBMITTED, "in the roster, no submission", counted, change)


def _counted(grade: StageGrade | None, stage: Stage) -> tuple[str, str]:
    """How a stage counts, and the instructor's changes to it in words (the cell's tooltip)."""
    if grade is None:
        return ("bonus" if stage.bonus else "core"), ""
    return grade.counted, "; ".join(f"{change_words(change)} ({change.reason})" for change in grade.changes)


def change_words(change: Change) -> str:
    """What a change did, in words: "excused", "set to 18", "adjusted by +2" (a regrade says so)."""
    what = ACTION_WORDS.get(change.action, change.action)
    if change.value is not None:
        sign = "+" if change.action == "adjust" and change.value >= 0 else ""
        what = f"{what} {sign}{points(change.value)}"
    return f"{what} after a regrade request" if change.request else what


def grade_cell(result: SubmissionResult) -> GradeCell:
    """The grade of a graded student as every table shows it: their final grade, never the raw total.

    A record without a final grade (made by hand, or read from a grader older than the final grade) shows its raw
    total: with no course policy, bonus rule or change, that is what its final grade would be."""
    if result.ungraded is not None:
        return GradeCell(None, "not graded", steps=f"Could not be graded: {result.ungraded}. This is not a grade.")
    if result.final is None:
        return GradeCell(Score(result.total, result.max_total))
    return final_cell(result.final)


def final_cell(final: FinalGrade) -> GradeCell:
    """The grade cell of a final grade: its points, or the word for its status when it is no grade."""
    steps = " ".join(final.steps)
    if final.status != "graded":
        word = {"ungraded": "not graded"}.get(final.status, final.status)  # "not submitted", "excused"
        return GradeCell(None, word, steps=steps)
    raw = Score(final.raw, final.possible) if final.raw != final.points else None
    return GradeCell(Score(final.points, final.possible), "", raw, grade_why(final), steps)


def grade_why(final: FinalGrade) -> str:
    """What made the grade differ from the raw points, short: "late −40; 03 excused; bonus +5"."""
    parts = [f"late −{points(final.penalty)}"] if final.penalty else []
    parts += [f"{change.stage[:2]} {change_words(change)}" for change in final.changes]
    if final.bonus:
        parts.append(f"bonus +{points(final.bonus)}")
    return "; ".join(parts)


def _grade_points(result: SubmissionResult) -> float | None:
    """The grade counted in the headline figures, or None for a student with no grade (not graded, excused)."""
    cell = grade_cell(result)
    return None if cell.score is None else cell.score.score


def change_rows(student: str, final: FinalGrade | None) -> list[ChangeRow]:
    return [ChangeRow(student, change_words(change), change) for change in ([] if final is None else final.changes)]


def regrade_rows(student: str, final: FinalGrade | None) -> list[RegradeRow]:
    return [RegradeRow(student, regrade) for regrade in (() if final is None else final.regrades)]


def _wrong(
    facts: stats.Facts, visible: dict[tuple[str, str], bool], examples: dict[tuple[str, str], list] | None = None
) -> list[WrongStage]:
    """examples: (stage id, check id) -> the ShownCounterexamples of the students whose hidden check failed."""
    stages, known, examples = [], stats.mistakes_by_stage(facts), examples or {}
    for entry in stats.wrong_by_stage(facts):
        checks = [
            WrongCheck(row.name, visible.get((row.stage, row.check), True), row.passed, row.working,
                       row.clusters[: stats.CLUSTERS_SHOWN], examples.get((row.stage, row.check), []))
            for row in entry.checks
            if row.passed < row.working
        ]  # fmt: skip
        stages.append(
            WrongStage(STAGE_BY_ID[entry.stage], entry.working, entry.submitted, checks, known.get(entry.stage, []))
        )
    return stages


def _late_words(entry) -> str:
    return f"{entry.late} {entry.unit}{'s' * (entry.late != 1)}" if entry.late else ""


def _late_summary(result: SubmissionResult) -> str:
    parts = []
    for stage_id, entry in (result.lateness or {}).items():
        if _never_handed_in(result, stage_id):
            continue  # nothing was handed in: no lateness to speak of
        if entry.late or entry.extension:
            cost = f", -{points(entry.penalty)}" if entry.penalty else ""
            extension = f" (extension {entry.extension})" if entry.extension else ""
            late = f"{_late_words(entry)} late" if entry.late else "on time"
            parts.append(f"{stage_id[:2]}: {late}{cost}{extension}")
    return "; ".join(parts)


def _never_handed_in(result: SubmissionResult, stage_id: str) -> bool:
    stage = result.stages.get(stage_id)
    return stage is None or stage.status.kind == StageKind.NOT_SUBMITTED


def deadline_rows(result: SubmissionResult) -> list[DeadlineRow]:
    rows = []
    for stage_id, entry in (result.lateness or {}).items():
        if _unassigned_untouched(result, stage_id):
            continue
        submitted = f"{entry.submitted} ({entry.source})" if entry.submitted else (entry.source or "–")
        penalty = f"-{points(entry.penalty)} ({points(entry.penalty_percent)} %)" if entry.penalty else ""
        late = _late_words(entry) or "on time"
        if _never_handed_in(result, stage_id):
            submitted, late, penalty = "not handed in", "–", ""
        max_score = result.stages[stage_id].max_score if stage_id in result.stages else 0
        rows.append(
            DeadlineRow(
                stage_id,
                submitted,
                entry.due or "–",
                entry.extension,
                late,
                penalty,
                Score(entry.score, max_score),
            )  # fmt: skip
        )
    return rows


def student_row(name: str, result: SubmissionResult, href: str) -> StudentRow:
    """A graded student's row of the class report (href: their feedback page)."""
    return StudentRow(
        name,
        href,
        [_cell(result, stage) for stage in CORE_STAGES],
        grade_cell(result),
        _late_summary(result),
        tuple(_cell(result, stage) for stage in BONUS_STAGES),
        Score(result.bonus, BONUS_POINTS) if BONUS_STAGES else None,
    )


def class_report(
    results: dict[str, SubmissionResult],
    notes: list[str] | tuple = (),
    folders: dict[str, str] | None = None,
    absent: dict[str, FinalGrade] | None = None,
) -> ClassReport:
    """The class report of these results (student -> record), with notes about the run as a whole; folders: each
    student's folder under OUT (by default those of the students in results); absent: the roster's students with
    no submission, with their final grades ("not submitted"), who count among the class's students."""
    folders = folders or output_folders(results)
    absent = {name: final for name, final in (absent or {}).items() if name not in results}
    graded = sorted(results, key=name_order)
    everyone = sorted([*graded, *absent], key=name_order)
    href = {name: feedback_href(name, folders) for name in graded}
    rows = [
        student_row(name, results[name], href[name])
        if name in results
        else StudentRow(
            name,
            "",
            [_absent_cell(absent[name], stage) for stage in CORE_STAGES],
            final_cell(absent[name]),
            bonus_cells=tuple(_absent_cell(absent[name], stage) for stage in BONUS_STAGES),
            bonus=Score(0, BONUS_POINTS) if BONUS_STAGES else None,
        )
        for name in everyone
    ]
    finals = [results[name].final for name in graded if results[name].final] + list(absent.values())
    possible = _most_common([final.possible for final in finals], TOTAL_POINTS)  # the course's: the same for all
    grades = [grade for name in graded if (grade := _grade_points(results[name])) is not None]
    facts = stats.facts_of(results, absent)
    looks = [
        Look(look.student, feedback_href(look.student, folders), look.stage, look.kind, look.reason)
        for look in stats.needs_a_look(facts)
    ]
    untimed = _untimed_looks(results, graded, folders)
    looks += untimed
    look_students = len({look.student for look in looks})
    helped = [
        Helped(entry.student, href.get(entry.student, ""), entry.reasons, entry.stages)
        for entry in stats.needs_help(facts)
    ]
    visible = {(test.stage, test.check): test.visible for result in results.values() for test in result.tests}
    ungraded = [
        Ungraded(name, feedback_href(name, folders), results[name].ungraded)
        for name in graded
        if results[name].ungraded is not None
    ]
    final_of = {**{name: results[name].final for name in graded}, **absent}
    # A stage nobody was assigned and nobody worked on has nothing to show: its sections are left out.
    left_out = {
        stage.id
        for stage in STAGES
        if graded and all(_unassigned_untouched(results[name], stage.id) for name in graded)
    }
    kpis = [
        Kpi(str(len(everyone)), "students"),
        Kpi(f"{number(statistics.median(grades))} / {possible}" if grades else "–", "median grade"),
        Kpi(number(statistics.mean(grades)) if grades else "–", "mean grade"),
        Kpi(str(sum(grade >= possible for grade in grades)), "full marks"),
        Kpi(str(look_students), "need a look"),
        Kpi(str(len(helped)), "need help"),
        *([Kpi(str(len(absent)), "no submission")] if absent else []),
        *([Kpi(str(len(ungraded)), "could not be graded")] if ungraded else []),
    ]
    return ClassReport(
        students=rows,
        kpis=kpis,
        isolation=_isolation(results),
        ungraded=ungraded,
        notes=[str(note) for note in notes],
        grades=grades,
        possible=possible,
        headline=_headline(len(grades), len(everyone) - len(grades)),
        stages=[
            StageScores(stage, [_cell(results[name], stage).score for name in graded])
            for stage in STAGES
            if stage.id not in left_out
        ],
        pass_rates=[row for row in pass_rates(results) if row.stage not in left_out],
        looks=looks,
        look_students=look_students,
        helped=helped,
        help_rule=stats.HELP_RULE,
        wrong=[
            entry
            for entry in _wrong(facts, visible, _counterexamples(results, facts, href))
            if entry.stage.id not in left_out
        ],
        left_out=frozenset(left_out),
        policy=any(results[name].lateness is not None for name in graded),
        untimed_looks=len(untimed),
        changes=[row for name in everyone for row in change_rows(name, final_of[name])],
        regrades=[row for name in everyone for row in regrade_rows(name, final_of[name])],
        bonus_rule=_most_common([final.bonus_rule for final in finals], ""),
    )


def _counterexamples(results: dict[str, SubmissionResult], facts: stats.Facts, href: dict[str, str]) -> dict:
    """(stage id, check id) -> each working module's simplest board where that hidden check is wrong, by name."""
    working = {(fact.student, fact.stage) for fact in facts.stages if fact.kind in stats.WORKING}
    found: dict[tuple[str, str], list[ShownCounterexample]] = {}
    for name in sorted(results, key=name_order):
        for test in results[name].tests:
            if test.counterexample is not None and (name, test.stage) in working:
                shown = ShownCounterexample(name, href.get(name, ""), test.counterexample)
                found.setdefault((test.stage, test.check), []).append(shown)
    return found


def _most_common(values: list, default):
    return Counter(values).most_common(1)[0][0] if values else default


def _headline(graded: int, without: int) -> str:
    """Which students the headline figures are of: those with a grade; not the others, who would count as 0."""
    shown = f"The final grades of the {graded} student{'s' * (graded != 1)} graded"
    if without:
        left = "is" if without == 1 else "are"
        shown += f"; {without} without a grade (no submission, could not be graded, excused) {left} left out"
    return shown + "."


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


def _section(stage_id: str, entry: StageResult, show_hidden: bool, final: FinalGrade | None) -> StageSection:
    stage = STAGE_BY_ID.get(stage_id)
    score = Score(entry.score, entry.max_score)
    kind = entry.status.kind
    grade = _stage_grade(final, stage_id)
    counted = grade.counted if grade is not None else "core"
    neutral = counted in (*UNCOUNTED, "excused")
    return StageSection(
        id=stage_id,
        title=f"{stage_id} · {stage.title}" if stage else stage_id,
        score=score,
        outcome="" if kind in ORDINARY_KINDS else kind.label,
        kind=kind,
        message=entry.message,
        # A stage outside the grade that was never worked on: its failed tests say nothing worth reading.
        tests=()
        if neutral and kind in stats.NOT_STARTED
        else tuple(_test_view(test, show_hidden, entry.message) for test in entry.tests),
        hints=stage.hints if stage and score.score < score.max_score and not neutral else (),
        counted=counted,
        counts="" if grade is None or final is None else _counts(grade, final),
        chip=Score(grade.points, grade.possible) if grade is not None and not neutral else score,
        chip_note=_chip_note(grade) if grade is not None and not neutral else "",
        looks_like=tuple(looks_like(found) for found in entry.diagnosis),
    )


def looks_like(found: Diagnosis) -> str:
    """A known mistake as a student reads it: what it does, and how many of their wrong answers it gives too."""
    share = "all" if found.explained == found.wrong else f"{found.share:.0%}".replace("%", " %")
    return f"{found.says} ({share} of your {found.wrong} wrong answers)" if found.wrong != 1 else found.says


def _chip_note(grade: StageGrade) -> str:
    if grade.changes:
        return "changed"
    return "late" if grade.penalty else ""


def _counts(grade: StageGrade, final: FinalGrade) -> str:
    """How one stage counts in the student's grade, when that is not simply its score."""
    if grade.counted == "not assigned":
        return "This stage is not assigned in this course: it is not counted in your grade."
    if grade.counted == "bonus off":
        return "This course does not count the bonus stages: this stage is not counted in your grade."
    if grade.counted == "excused":
        return "Excused: this stage does not count in your grade, neither for it nor against it."
    if grade.counted == "bonus" and final.bonus_rule == "apart":
        return "A bonus stage: reported apart, not in your grade."
    if grade.counted == "bonus":  # "extra"
        cap = "" if final.bonus_cap is None else f" (at most {points(final.bonus_cap)} count)"
        return f"A bonus stage: its points are extra credit{cap}; your bonus stages add {points(final.bonus)} in all."
    why = [f"late −{points(grade.penalty)}"] if grade.penalty else []
    why += [change_words(change) for change in grade.changes]
    if not why:
        return ""
    return f"It counts {points(grade.points)} of {grade.possible} in your grade ({'; '.join(why)})."


def grade_heading(result: SubmissionResult) -> GradeHeading:
    """ "Your grade: X of Y" from the final grade, or why there is none."""
    final = result.final
    if result.ungraded is not None or (final is not None and final.status == "ungraded"):
        note = "This submission could not be graded: the zeros below are not a grade. The course staff will look."
        return GradeHeading(None, "not given yet", note)
    if final is None:
        return GradeHeading(Score(result.total, result.max_total), f"{points(result.total)} of {result.max_total}", "")
    if final.status == "excused":
        return GradeHeading(None, "excused", "Every assigned stage is excused: there is no grade to give.")
    notes = []
    if final.raw != final.points:
        notes.append(f"As graded, before the course's rules and changes: {points(final.raw)} of {final.possible}.")
    if final.bonus:
        notes.append(f"It includes {points(final.bonus)} points of extra credit from the bonus stages.")
    text = f"{points(final.points)} of {final.possible}"
    return GradeHeading(Score(final.points, final.possible), text, " ".join(notes))


def _unassigned_untouched(result: SubmissionResult, stage_id: str) -> bool:
    """A stage outside the grade (not assigned, a bonus turned off) that was never worked on: nothing to show."""
    grade = _stage_grade(result.final, stage_id)
    stage = result.stages.get(stage_id)
    untouched = stage is None or stage.status.kind in stats.NOT_STARTED
    return grade is not None and grade.counted in UNCOUNTED and untouched


def feedback_page(result: SubmissionResult, show_hidden: bool = False) -> FeedbackPage:
    """One student's page; show_hidden: the outputs of hidden tests too (after the grades are published)."""
    final = result.final
    ids = [stage.id for stage in STAGES if stage.id in result.stages]
    ids += [stage_id for stage_id in result.stages if stage_id not in ids]
    heading = grade_heading(result)
    return FeedbackPage(
        student=result.student,
        grade=heading,
        notes=result.output if result.output.strip() else "",
        stages=[_section(stage_id, result.stages[stage_id], show_hidden, final) for stage_id in ids],
        deadlines=deadline_rows(result),
        penalty=None if final is None else final.penalty,
        commit=f"Graded as of commit {result.commit.hash[:12]} ({result.commit.time})" if result.commit else "",
        steps=() if final is None else final.steps,
        changes=change_rows(result.student, final),
        regrades=regrade_rows(result.student, final),
    )
