"""What the class got wrong, who needs help, what needs a look: the class statistics, and `autograde stats OUT`.

One computation over plain facts (a stage's kind and score, a check passed or not, each wrong answer by kind),
which come either from the records of a run (facts_of: what the report uses) or from the gradebook's tables
(facts_from_gradebook: what `autograde stats` shows), so the terminal and the report always agree.

The rules, stated on the report too:
- a check's pass rate counts only the students whose module for that stage worked (it loaded and answered:
  wrong answers or full marks), not those who did not submit it, left the starter or whose module did not load;
- who needs help is every student the instructor must act on, each with the reasons (needs_help): not started
  (every assigned stage the untouched starter or not submitted), in the roster with no submission, cut by the late
  policy (at least HELP_LATE_SHARE of their raw points), far below the class (a final grade under HELP_FAR_BELOW
  of the class median), and a stage they worked on where they scored under HELP_BELOW of its points while the
  median of the students who worked on it is at least HELP_CLASS_MEDIAN. The grades read are the final grades
  (record.FinalGrade) the run made, never totals recomputed here.
"""

import argparse
import json
import sqlite3
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from autograder.course.board import LINES, winner
from autograder.course.stages import STAGE_BY_ID, STAGES
from autograder.outputs.command_line import fail
from autograder.outputs.folders import GRADEBOOK
from autograder.record import FinalGrade, StageKind, SubmissionResult

HELP_BELOW = 0.5  # a stage score under this share of its points...
HELP_CLASS_MEDIAN = 0.75  # ...where the class median (of those who worked on it) is at least this share
# Lateness that took at least this share of a student's raw points (a zero for lateness among them) is a cut the
# instructor should know of: a few points off for a day late is not.
HELP_LATE_SHARE = 0.25
# A final grade under this share of the class median (of the students graded) is far below the class. Relative,
# not a share of the possible points: early in a course, when most stages are still to come, a class median of
# 30 of 100 is normal and everyone would be "below half"; half the class's median singles out who fell behind.
HELP_FAR_BELOW = 0.5
CLUSTERS_SHOWN = 3  # the most common kinds of wrong answer shown per check
WORKING = (StageKind.WRONG, StageKind.FULL)
NOT_STARTED = (StageKind.STARTER, StageKind.NOT_SUBMITTED)
HELP_RULE = (
    "every student the instructor must act on: not started (every assigned stage the untouched starter or not "
    "submitted); in the roster with no submission; cut by the late policy (by at least "
    f"{HELP_LATE_SHARE:.0%} of their raw points); far below the class (a final grade under {HELP_FAR_BELOW:.0%} "
    f"of the class median); and a stage they worked on (their module loaded and answered) where they scored under "
    f"{HELP_BELOW:.0%} of its points while the median of the students who worked on it is at least "
    f"{HELP_CLASS_MEDIAN:.0%}"
)
STAGE_ORDER = {stage.id: index for index, stage in enumerate(STAGES)}


def number(value: float) -> str:
    """Every figure of the report and the terminal view: at most one decimal (12.5, 57.5, 12)."""
    return f"{value:.1f}".removesuffix(".0")


# ---------------------------------------------------------------------------------------------------------------
# Facts


@dataclass(frozen=True)
class StageFact:
    student: str
    stage: str
    kind: StageKind
    reason: str
    score: float
    max_score: float
    look: str = ""  # graded as usual, but the module should be read (a table where a computation is asked)


@dataclass(frozen=True)
class TestFact:
    student: str
    stage: str
    check: str
    name: str
    passed: bool


@dataclass(frozen=True)
class MistakeFact:
    student: str
    stage: str
    check: str
    kind: str
    board: str


@dataclass(frozen=True)
class DiagnosisFact:
    """A known mistake a student's wrong stage matches (record.Diagnosis), as the report and the gradebook hold it."""

    student: str
    stage: str
    name: str
    says: str
    explained: int
    wrong: int

    @property
    def share(self) -> float:
        return self.explained / self.wrong if self.wrong else 0.0


@dataclass(frozen=True)
class Facts:
    """finals: each student's final grade as the run made it (graded and absent alike), where there is one.

    A roster student with no submission (final status "not submitted") has a "not submitted" fact for every
    stage, so they count among the class's students wherever students are counted."""

    stages: list[StageFact]
    tests: list[TestFact]
    mistakes: list[MistakeFact]
    finals: dict[str, FinalGrade] = field(default_factory=dict)
    diagnoses: list[DiagnosisFact] = field(default_factory=list)


def facts_of(results: dict[str, SubmissionResult], absent: dict[str, FinalGrade] | None = None) -> Facts:
    """The facts of a run's records; absent: the roster's students with no submission, with their final grades."""
    stages, tests, mistakes, diagnoses = [], [], [], []
    for student in sorted(results):
        for stage_id, stage in results[student].stages.items():
            diagnoses += [
                DiagnosisFact(student, stage_id, d.name, d.says, d.explained, d.wrong) for d in stage.diagnosis
            ]
            status = stage.status
            fact = StageFact(student, stage_id, status.kind, status.reason, stage.score, stage.max_score, stage.look)
            stages.append(fact)
            for test in stage.tests:
                tests.append(TestFact(student, stage_id, test.check, test.name, test.score >= test.points))
                mistakes += [MistakeFact(student, stage_id, test.check, m.kind, m.board) for m in test.mistakes]
    finals = {student: result.final for student, result in results.items() if result.final is not None}
    for student, final in sorted((absent or {}).items()):
        if student not in results:
            finals[student] = final
            stages += _absent_facts(student)
    return Facts(stages, tests, mistakes, finals, diagnoses)


def _absent_facts(student: str) -> list[StageFact]:
    return [
        StageFact(student, stage.id, StageKind.NOT_SUBMITTED, "in the roster, no submission", 0.0, stage.points)
        for stage in STAGES
    ]


def facts_from_gradebook(path: Path, run_id: int | None = None) -> Facts:
    """The facts of one run (the latest by default) as the gradebook's tables hold them; read only."""
    db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=60)
    try:
        if run_id is None:
            run_id = db.execute("SELECT MAX(run_id) FROM run_students").fetchone()[0]
        join = "FROM run_students r JOIN {} t ON t.submission_id = r.submission_id WHERE r.run_id = ?"
        stages = [
            StageFact(student, stage, StageKind(kind or StageKind.WRONG), reason or "", score, max_score, look or "")
            for student, stage, kind, reason, score, max_score, look in db.execute(
                "SELECT r.student, t.stage, t.kind, t.reason, t.score, t.max_score, t.look "
                + join.format("stage_scores"),
                (run_id,),
            )
        ]
        tests = [
            TestFact(student, stage, check, name.removeprefix(f"{stage}: "), score >= max_score)
            for student, stage, check, name, score, max_score in db.execute(
                "SELECT r.student, t.stage, t.check_id, t.name, t.score, t.max_score " + join.format("test_results"),
                (run_id,),
            )
        ]
        mistakes = [
            MistakeFact(*row)
            for row in db.execute(
                "SELECT r.student, t.stage, t.check_id, t.kind, t.board "
                + join.format("mistakes")
                + " ORDER BY t.rowid",
                (run_id,),
            )
        ]
        finals = _stored_finals(db, run_id)
        diagnoses = []
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'diagnoses'").fetchone():
            rows = db.execute(
                "SELECT r.student, t.stage, t.name, t.says, t.explained, t.wrong "
                + join.format("diagnoses")
                + " ORDER BY t.rowid",
                (run_id,),
            )
            diagnoses = [DiagnosisFact(*row) for row in rows]
    finally:
        db.close()
    graded = {fact.student for fact in stages}
    for student in sorted(set(finals) - graded):  # the roster's students with no submission in the run
        stages += _absent_facts(student)
    key = lambda fact: (fact.student, STAGE_ORDER.get(fact.stage, len(STAGE_ORDER)))  # noqa: E731
    return Facts(
        sorted(stages, key=key), sorted(tests, key=key), sorted(mistakes, key=key), finals, sorted(diagnoses, key=key)
    )


def _stored_finals(db: sqlite3.Connection, run_id) -> dict[str, FinalGrade]:
    """The run's final grades (gradebook.final_grades), none from a gradebook older than the final grade."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'final_grades'").fetchone():
        return {}
    rows = db.execute("SELECT student, final_json FROM final_grades WHERE run_id = ? ORDER BY student", (run_id,))
    return {student: FinalGrade.from_dict(json.loads(text)) for student, text in rows}


# ---------------------------------------------------------------------------------------------------------------
# What the class got wrong


@dataclass(frozen=True)
class Cluster:
    """One kind of wrong answer of one check: "returned None on boards won on a diagonal", by how many students."""

    label: str
    students: int
    board: str  # an example board (9 squares)
    student: str  # whose it is (for the instructor)


@dataclass(frozen=True)
class CheckStats:
    stage: str
    check: str
    name: str
    working: int  # students whose module for the stage worked
    passed: int  # of them, how many passed this check
    clusters: list[Cluster]

    @property
    def rate(self) -> float:
        return self.passed / self.working if self.working else 0.0


@dataclass(frozen=True)
class StageWrong:
    stage: str
    title: str
    working: int
    submitted: int  # students who handed something in for it (not "not submitted")
    checks: list[CheckStats]  # the most failed first


def board_class(board: str) -> str:
    """Which boards a mistake was made on, in words a cluster is labelled with."""
    squares = list(board.ljust(9)[:9])
    mark = winner(squares)
    if mark:
        line = next(line for line in LINES if all(squares[i] == mark for i in line))
        shape = "a row" if line[1] - line[0] == 1 else "a column" if line[1] - line[0] == 3 else "a diagonal"
        return f"boards won on {shape}"
    if " " not in squares:
        return "drawn boards"
    return f"boards with {'X' if squares.count('X') == squares.count('O') else 'O'} to move"


def cluster_label(kind: str, board: str) -> str:
    """What a cluster of wrong answers is called: the kind, and the boards it happened on when that tells apart
    one mistake from another (a winner missed on diagonals, a mark named for the wrong mover); an exception is
    one mistake wherever it was raised."""
    if kind.startswith("raised"):
        return kind
    where = board_class(board)
    if where.endswith("to move") and kind not in ("returned 'X'", "returned 'O'"):
        where = "unfinished boards"
    return f"{kind} on {where}"


def wrong_by_stage(facts: Facts) -> list[StageWrong]:
    """Per stage, per check: the pass rate over the working modules and the most common wrong answers by kind."""
    working = {(f.student, f.stage) for f in facts.stages if f.kind in WORKING}
    submitted = defaultdict(int)
    for fact in facts.stages:
        submitted[fact.stage] += fact.kind != StageKind.NOT_SUBMITTED
    checks: dict[tuple[str, str], dict] = {}
    for test in facts.tests:
        if (test.student, test.stage) not in working:
            continue
        entry = checks.setdefault((test.stage, test.check), {"name": test.name, "working": 0, "passed": 0})
        entry["working"] += 1
        entry["passed"] += test.passed
    clusters: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for found in facts.mistakes:
        if (found.student, found.stage) not in working:
            continue
        label = cluster_label(found.kind, found.board)
        cluster = clusters[(found.stage, found.check)].setdefault(label, {"students": set(), "example": found})
        cluster["students"].add(found.student)
    stages: dict[str, list[CheckStats]] = defaultdict(list)
    for (stage_id, check), entry in checks.items():
        found = sorted(
            (
                Cluster(label, len(c["students"]), c["example"].board, c["example"].student)
                for label, c in clusters[(stage_id, check)].items()
            ),
            key=lambda cluster: (-cluster.students, cluster.label),
        )
        stages[stage_id].append(CheckStats(stage_id, check, entry["name"], entry["working"], entry["passed"], found))
    result = []
    for stage in STAGES:
        rows = sorted(stages.get(stage.id, []), key=lambda row: (row.rate, row.name))
        count = len({student for student, stage_id in working if stage_id == stage.id})
        result.append(StageWrong(stage.id, stage.title, count, submitted[stage.id], rows))
    return result


NOT_KNOWN = "not a known mistake"


@dataclass(frozen=True)
class KnownMistake:
    """One known mistake of a stage and the students whose wrong answers it explains, each with its share;
    name "" stands for the wrong stages no known mistake explains ("not a known mistake")."""

    stage: str
    name: str
    says: str
    students: tuple[tuple[str, float], ...]  # (student, share of their wrong answers it explains)


def mistakes_by_stage(facts: Facts) -> dict[str, list[KnownMistake]]:
    """Per stage, its wrong modules grouped by the known mistake they match, the most common first; the wrong
    modules no known mistake explains last, as one group."""
    found: dict[tuple[str, str], dict] = {}
    for fact in facts.diagnoses:
        entry = found.setdefault((fact.stage, fact.name), {"says": fact.says, "students": []})
        entry["students"].append((fact.student, fact.share))
    diagnosed = {(fact.student, fact.stage) for fact in facts.diagnoses}
    result: dict[str, list[KnownMistake]] = {}
    for (stage_id, name), entry in found.items():
        result.setdefault(stage_id, []).append(KnownMistake(stage_id, name, entry["says"], tuple(entry["students"])))
    for groups in result.values():
        groups.sort(key=lambda group: (-len(group.students), group.name))
    for fact in facts.stages:
        if fact.kind == StageKind.WRONG and (fact.student, fact.stage) not in diagnosed:
            groups = result.setdefault(fact.stage, [])
            if not groups or groups[-1].name:
                groups.append(KnownMistake(fact.stage, "", NOT_KNOWN, ()))
            groups[-1] = KnownMistake(fact.stage, "", NOT_KNOWN, (*groups[-1].students, (fact.student, 0.0)))
    return {stage.id: result[stage.id] for stage in STAGES if stage.id in result}


def mistake_line(group: KnownMistake) -> str:
    """One known mistake with its students, as the terminal shows it: "Takes ...: 3 students (ana 100%, ...)"."""
    count = len(group.students)
    who = ", ".join(student if not group.name else f"{student} {share:.0%}" for student, share in group.students)
    return f"{group.says}: {count} {'student' if count == 1 else 'students'} ({who})"


# ---------------------------------------------------------------------------------------------------------------
# Who needs help, what needs a look


@dataclass(frozen=True)
class HelpStage:
    stage: str
    score: float
    max_score: float
    class_median: float


@dataclass(frozen=True)
class NeedsHelp:
    """A student the instructor must act on: why, in words ("not started", "late: −40"...), and the stages far
    below the class's (HelpStage), each its own reason."""

    student: str
    reasons: tuple[str, ...]
    stages: list[HelpStage]


def needs_help(facts: Facts) -> list[NeedsHelp]:
    """Every student the instructor must act on (HELP_RULE), by name, each with the reasons.

    The grades are the students' final grades (Facts.finals); a record without one (made by hand, or by a
    grader older than the final grade) is judged on its stages alone.
    """
    shares: dict[str, list[float]] = defaultdict(list)
    for fact in facts.stages:
        if fact.kind in WORKING:
            shares[fact.stage].append(fact.score)
    medians = {stage: statistics.median(scores) for stage, scores in shares.items()}
    by_student: dict[str, list[StageFact]] = defaultdict(list)
    for fact in facts.stages:
        by_student[fact.student].append(fact)
    graded = [final.points for final in facts.finals.values() if final.status == "graded"]
    class_median = statistics.median(graded) if graded else 0.0
    found = []
    for student, stage_facts in sorted(by_student.items()):
        final = facts.finals.get(student)
        reasons = _help_reasons(final, stage_facts, class_median)
        stages = [
            HelpStage(fact.stage, fact.score, fact.max_score, medians[fact.stage])
            for fact in stage_facts
            if fact.kind in WORKING
            and fact.max_score
            and _counted(final, fact.stage)
            and fact.score < HELP_BELOW * fact.max_score
            and medians[fact.stage] >= HELP_CLASS_MEDIAN * fact.max_score
        ]
        if reasons or stages:
            found.append(NeedsHelp(student, reasons, stages))
    return found


def _counted(final: FinalGrade | None, stage_id: str) -> bool:
    """Whether the stage counts for the student: a stage not assigned, excused or a bonus the course turned off
    is nothing to act on."""
    grade = final.stages.get(stage_id) if final is not None else None
    return grade is None or grade.counted in ("core", "bonus")


def _help_reasons(final: FinalGrade | None, stage_facts: list[StageFact], class_median: float) -> tuple[str, ...]:
    if final is not None and final.status == "not submitted":
        return ("in the roster, no submission",)
    if final is not None and final.status != "graded":
        return ()  # ungraded (under "Needs a look") or excused: no grade to act on
    assigned = [fact for fact in stage_facts if _assigned(final, fact.stage)]
    reasons = []
    started = not assigned or any(fact.kind not in NOT_STARTED for fact in assigned)
    if not started:
        reasons.append("not started: every assigned stage is the starter or not submitted")
    if final is None:
        return tuple(reasons)
    if final.penalty and final.penalty >= HELP_LATE_SHARE * final.raw:
        zeroed = " (zeroed)" if final.points <= 0 else ""
        reasons.append(f"late: −{number(final.penalty)} of {number(final.raw)} raw points{zeroed}")
    if started and class_median > 0 and final.points < HELP_FAR_BELOW * class_median:
        reasons.append(
            f"far below the class: {number(final.points)} of {final.possible} (class median {number(class_median)})"
        )
    return tuple(reasons)


def _assigned(final: FinalGrade | None, stage_id: str) -> bool:
    """An assigned core stage, as the final grade counted it (without one: every core stage)."""
    if final is not None and stage_id in final.stages:
        return final.stages[stage_id].counted == "core"
    stage = STAGE_BY_ID.get(stage_id)
    return stage is not None and not stage.bonus


def help_text(entry: NeedsHelp) -> str:
    """A student's reasons on one line, as the terminal shows them (the report lists the same)."""
    stages = [
        f"{s.stage} {number(s.score)}/{number(s.max_score)} (class median {number(s.class_median)})"
        for s in entry.stages
    ]
    return "; ".join([*entry.reasons, *stages])


@dataclass(frozen=True)
class Look:
    """A submission, or one stage of it, that could not be graded normally."""

    student: str
    stage: str  # a stage id, or "all stages"
    kind: StageKind
    reason: str


def needs_a_look(facts: Facts) -> list[Look]:
    """Every stage that could not be graded normally, by student; one row when all stages share the reason.

    Also every stage graded as usual whose module holds a table where the stage asks for a computation
    (StageFact.look): its points stand, but only a reader can tell whether they were earned.
    """
    by_student: dict[str, list[StageFact]] = defaultdict(list)
    for fact in facts.stages:
        if _needs_look(fact):
            by_student[fact.student].append(fact)
    looks = []
    for student, found in sorted(by_student.items()):
        if len(found) == len(STAGES) and len({(f.kind, f.reason, f.look) for f in found}) == 1 and not found[0].look:
            looks.append(Look(student, "all stages", found[0].kind, found[0].reason))
            continue
        looks += [Look(student, f.stage, f.kind, _look_reason(f)) for f in found]
    return looks


def look_counts(facts: Facts) -> tuple[int, int]:
    """How many students need a look, and how many of their stages (a row for all stages counts each of them)."""
    found = [fact.student for fact in facts.stages if _needs_look(fact)]
    return len(set(found)), len(found)


def _needs_look(fact: StageFact) -> bool:
    return fact.kind.needs_look or bool(fact.look)


def _look_reason(fact: StageFact) -> str:
    if not fact.look:
        return fact.reason
    return f"{fact.reason}; {fact.look}" if fact.kind.needs_look and fact.reason else fact.look


# ---------------------------------------------------------------------------------------------------------------
# autograde stats OUT


def print_stats(facts: Facts, console=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console(highlight=False)
    students = len({fact.student for fact in facts.stages})
    console.print(f"[bold]{students} students[/]")
    looks = needs_a_look(facts)
    looked, stages = look_counts(facts)
    # Counted as the report counts it: students, of the class; and the stages, as a row may stand for all of them.
    title = f"Needs a look: {looked} of {students} students ({stages} {'stage' if stages == 1 else 'stages'})"
    table = Table(title=title, title_justify="left")
    for column in ("student", "stage", "what", "reason"):
        table.add_column(column, overflow="fold")
    for look in looks:
        table.add_row(escape(look.student), look.stage, look.kind.label, escape(look.reason))
    console.print(table if looks else f"Needs a look: 0 of {students} students. Every submission was graded normally.")
    helped = needs_help(facts)
    console.print(f"\n[bold]Who needs help: {len(helped)} of {students} students[/]. Listed: {HELP_RULE}.")
    for entry in helped:
        console.print(f"  {escape(entry.student)}: {escape(help_text(entry))}")
    known = mistakes_by_stage(facts)
    for stage in wrong_by_stage(facts):
        for group in known.get(stage.stage, ()):
            console.print(f"{stage.stage} looks like: {escape(mistake_line(group))}")
        table = Table(
            title=f"{stage.stage}: {stage.working} working modules of {stage.submitted} submitted",
            title_justify="left",
        )
        table.add_column("check", overflow="fold")
        table.add_column("passed", justify="right")
        table.add_column("most common wrong answers", overflow="fold")
        for row in stage.checks:
            if row.passed == row.working:
                continue
            wrong = "; ".join(f"{c.label}: {c.students}" for c in row.clusters[:CLUSTERS_SHOWN])
            table.add_row(escape(row.name), f"{row.passed}/{row.working}", escape(wrong))
        if table.row_count:
            console.print(table)
        elif stage.working:
            console.print(f"{stage.stage}: every working module passed every check.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="autograde stats", description="what the class got wrong, who needs help and what needs a look"
    )
    parser.add_argument("out", type=Path, help="the OUT folder of `autograde grade` (its gradebook.db is read)")
    parser.add_argument("--gradebook", type=Path, help="the SQLite gradebook (default: OUT/gradebook.db)")
    args = parser.parse_args(argv)
    path = args.gradebook or args.out / GRADEBOOK
    from autograder.outputs.gradebook import problem

    why = problem(path) if path.is_file() else f"no gradebook at {path} (grade the class first)"
    if why:
        return fail("autograde stats", f"{why}")
    try:
        facts = facts_from_gradebook(path)
    except sqlite3.Error as error:
        return fail("autograde stats", f"cannot read the gradebook {path}: {error}")
    print_stats(facts)
    return 0
