"""What the pages show, as plain records built from the results: the one place that reads a results dict.

The results are results.json dicts (autograder/outputs/results.py). Everything the templates and the plots
need is taken out of them here, so the rest of the package reads records, not dicts. Texts stay as they
came (the templates escape them; outputs and messages are Markdown, rendered by markdown_render).
"""

import statistics
from dataclasses import dataclass
from urllib.parse import quote

from autograder.course.stages import STAGE_BY_ID, STAGES, TOTAL_POINTS, Stage
from autograder.grading.submissions import output_folder
from autograder.outputs.gradesheet import points

# The child did not finish, or wrote to the grader's reply channel itself: worth an instructor's look.
FLAG_OUTCOMES = ("timeout", "crashed", "output-limit", "tampered")
OUTCOME_TEXT = {
    "timeout": "timed out",
    "crashed": "crashed",
    "output-limit": "printed too much",
    "tampered": "tampered with the grader",
    "ungraded": "not graded",  # the grader failed on the submission: see the report's "Could not be graded"
}
HIDDEN_NOTE = "Details are shown after the grades are published."
FULL_SANDBOX = "bubblewrap"


def feedback_href(student: str) -> str:
    """The relative link from report.html to a student's page (names may hold spaces, '#', '?', ...)."""
    return f"{quote(output_folder(student), safe='')}/feedback.html"


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
    """One stage of one student in the class table; tag: why it is not a grade (timed out, not graded), or ""."""

    tag: str = ""


@dataclass(frozen=True)
class StudentRow:
    name: str
    href: str
    cells: list[Cell]  # one per stage of STAGES, in order
    total: Score


@dataclass(frozen=True)
class PassRate:
    """One test of the class: how many students passed it."""

    stage: str
    name: str
    label: str  # the name without its stage
    check: str
    visible: bool
    passed: int
    position: tuple[int, int]  # stage order, then the test's place in a student's results


@dataclass(frozen=True)
class Flag:
    """A stage whose child timed out, crashed, printed too much or tampered with the reply channel."""

    student: str
    href: str
    stage: str
    outcome: str  # in words: "timed out"
    message: str


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
        return points(statistics.median(self.scores)) if self.scores else "–"


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
    flags: list[Flag]
    flagged_students: int


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
    outcome: str  # in words, or ""
    message: str  # Markdown: why the stage as a whole went wrong
    tests: list[TestView]
    hints: tuple[str, ...]  # Markdown, shown only without full marks


@dataclass(frozen=True)
class FeedbackPage:
    student: str
    total: Score
    notes: str  # Markdown: the grader's notes on the whole submission
    stages: list[StageSection]


# ---------------------------------------------------------------------------------------------------------------
# From the results dicts


def _extra(result: dict) -> dict:
    return result.get("extra_data", {})


def _stage_entries(result: dict) -> dict[str, dict]:
    return _extra(result).get("stages", {})


def _total(result: dict) -> float:
    return _extra(result).get("total", result.get("score", 0))


def _ungraded_reason(result: dict) -> str | None:
    reason = _extra(result).get("ungraded")
    return None if reason is None else str(reason)


def _test_stage(test: dict) -> str:
    return test.get("extra_data", {}).get("stage", "")


def pass_rates(results: dict[str, dict]) -> list[PassRate]:
    """Every test of the class with how many students passed it, the most failed first."""
    rows: dict[tuple[str, str], dict] = {}
    order = {stage.id: index for index, stage in enumerate(STAGES)}
    for result in results.values():
        for number, test in enumerate(result.get("tests", [])):
            stage = _test_stage(test)
            # The check id is stable across students; the same id can appear in two stages.
            key = (stage, test.get("extra_data", {}).get("check") or test.get("name", ""))
            name = str(test.get("name", key[1]))
            row = rows.setdefault(
                key,
                {
                    "stage": str(stage),
                    "name": name,
                    "label": name.removeprefix(f"{stage}: "),
                    "check": str(key[1]),
                    "visible": test.get("visibility") == "visible",
                    "passed": 0,
                    "position": (order.get(stage, len(order)), number),
                },
            )
            row["passed"] += test.get("status") == "passed"
    return sorted((PassRate(**row) for row in rows.values()), key=lambda row: (row.passed, row.position))


def _flags(student: str, result: dict) -> list[Flag]:
    """A flag for each stage whose child timed out, crashed or printed too much, by stage."""
    found: dict[str, tuple[str, str]] = {}
    for stage_id, entry in _stage_entries(result).items():
        if entry.get("outcome") in FLAG_OUTCOMES:
            found[stage_id] = (entry["outcome"], entry.get("message", ""))
    for test in result.get("tests", []):
        stage_id, outcome = _test_stage(test), test.get("extra_data", {}).get("outcome")
        if outcome in FLAG_OUTCOMES and stage_id not in found:
            first = next((line for line in (test.get("output") or "").splitlines() if line.strip()), "")
            found[stage_id] = (outcome, first)
    href = feedback_href(student)
    return [
        Flag(student, href, str(stage_id), OUTCOME_TEXT.get(outcome, outcome), str(message))
        for stage_id, (outcome, message) in sorted(found.items())
    ]


def _isolation(results: dict[str, dict]) -> Isolation | None:
    levels: dict[str, str] = {}
    for result in results.values():
        isolation = _extra(result).get("isolation", {})
        levels.setdefault(str(isolation.get("level", "unknown")), str(isolation.get("detail", "")))
    if not levels:
        return None
    weak = sorted((level, detail) for level, detail in levels.items() if level != FULL_SANDBOX)
    return Isolation(weak, levels.get(FULL_SANDBOX, ""))


def _cell(entry: dict, stage: Stage) -> Cell:
    mark = entry.get("outcome")
    return Cell(entry["score"], entry.get("max_score", stage.points), OUTCOME_TEXT.get(mark, ""))


def class_report(results: dict[str, dict], notes: list[str] | tuple = ()) -> ClassReport:
    """The class report of these results (student -> results dict), with notes about the run as a whole."""
    students = sorted(results)
    totals = [_total(results[name]) for name in students]
    rows = []
    for name, total in zip(students, totals, strict=True):
        entries = _stage_entries(results[name])
        cells = [_cell(entries.get(stage.id, {"score": 0, "max_score": stage.points}), stage) for stage in STAGES]
        rows.append(StudentRow(name, feedback_href(name), cells, Score(total, TOTAL_POINTS)))
    flags = {name: _flags(name, results[name]) for name in students}
    ungraded = [
        Ungraded(name, feedback_href(name), reason)
        for name in students
        if (reason := _ungraded_reason(results[name])) is not None
    ]
    kpis = [
        Kpi(str(len(students)), "students"),
        Kpi(f"{points(statistics.median(totals))} / {TOTAL_POINTS}" if totals else "–", "median total"),
        Kpi(f"{statistics.mean(totals):.1f}".removesuffix(".0") if totals else "–", "mean total"),
        Kpi(str(sum(total >= TOTAL_POINTS for total in totals)), "full marks"),
        Kpi(str(sum(bool(found) for found in flags.values())), "timed out / crashed"),
        *([Kpi(str(len(ungraded)), "could not be graded")] if ungraded else []),
    ]
    return ClassReport(
        students=rows,
        kpis=kpis,
        isolation=_isolation(results),
        ungraded=ungraded,
        notes=[str(note) for note in notes],
        totals=totals,
        stages=[
            StageScores(stage, [_stage_entries(results[name]).get(stage.id, {}).get("score", 0) for name in students])
            for stage in STAGES
        ],
        pass_rates=pass_rates(results),
        flags=[flag for found in flags.values() for flag in found],
        flagged_students=sum(bool(found) for found in flags.values()),
    )


def _test_view(test: dict, stage_id: str, show_hidden: bool, stage_message: str) -> TestView:
    hidden = test.get("visibility", "visible") != "visible"
    output = str(test.get("output") or "")
    if stage_message and output.strip() == stage_message.strip():
        output = ""  # the stage's own message (it did not import, it crashed) is shown once above its tests
    held_back = hidden and not show_hidden and bool(output)
    return TestView(
        name=str(test.get("name", "")).removeprefix(f"{stage_id}: "),
        passed=test.get("status") == "passed",
        hidden=hidden,
        held_back=held_back,
        output="" if held_back or not output.strip() else output,
        score=Score(test.get("score", 0), test.get("max_score", 0)),
    )


def feedback_page(result: dict, show_hidden: bool = False) -> FeedbackPage:
    """One student's page; show_hidden: the outputs of hidden tests too (after the grades are published)."""
    extra = _extra(result)
    entries = _stage_entries(result)
    tests_by_stage: dict[str, list[dict]] = {}
    for test in result.get("tests", []):
        tests_by_stage.setdefault(_test_stage(test), []).append(test)
    ids = [stage.id for stage in STAGES if stage.id in entries or stage.id in tests_by_stage]
    ids += [stage_id for stage_id in entries if stage_id not in ids]

    sections = []
    for stage_id in ids:
        entry = entries.get(stage_id, {"score": 0, "max_score": 0})
        stage = STAGE_BY_ID.get(stage_id)
        score = Score(entry["score"], entry["max_score"])
        message = str(entry.get("message") or "")
        sections.append(
            StageSection(
                id=str(stage_id),
                title=f"{stage_id} · {stage.title}" if stage else str(stage_id),
                score=score,
                outcome=OUTCOME_TEXT.get(entry.get("outcome", ""), ""),
                message=message,
                tests=[_test_view(test, stage_id, show_hidden, message) for test in tests_by_stage.get(stage_id, [])],
                hints=stage.hints if stage and score.score < score.max_score else (),
            )
        )
    notes = str(result.get("output") or "")
    return FeedbackPage(
        student=str(extra.get("student", "student")),
        total=Score(_total(result), extra.get("max_total", TOTAL_POINTS)),
        notes=notes if notes.strip() else "",
        stages=sections,
    )
