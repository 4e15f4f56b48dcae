"""What the class got wrong, who needs help, what needs a look: the class statistics, and `autograde stats OUT`.

One computation over plain facts (a stage's kind and score, a check passed or not, each wrong answer by kind),
which come either from the records of a run (facts_of: what the report uses) or from the gradebook's tables
(facts_from_gradebook: what `autograde stats` shows), so the terminal and the report always agree.

The rules, stated on the report too:
- a check's pass rate counts only the students whose module for that stage worked (it loaded and answered:
  wrong answers or full marks), not those who did not submit it, left the starter or whose module did not load;
- a student needs help on a stage they worked on when they scored under half of its points while the median of
  the students who worked on it is at least three quarters (HELP_BELOW, HELP_CLASS_MEDIAN).
"""

import argparse
import sqlite3
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from autograder.course.board import LINES, winner
from autograder.course.stages import STAGES
from autograder.grading.record import StageKind, SubmissionResult

HELP_BELOW = 0.5  # a stage score under this share of its points...
HELP_CLASS_MEDIAN = 0.75  # ...where the class median (of those who worked on it) is at least this share
CLUSTERS_SHOWN = 3  # the most common kinds of wrong answer shown per check
WORKING = (StageKind.WRONG, StageKind.FULL)
HELP_RULE = (
    f"a stage the student worked on (their module loaded and answered) where they scored under "
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
class Facts:
    stages: list[StageFact]
    tests: list[TestFact]
    mistakes: list[MistakeFact]


def facts_of(results: dict[str, SubmissionResult]) -> Facts:
    stages, tests, mistakes = [], [], []
    for student in sorted(results):
        for stage_id, stage in results[student].stages.items():
            status = stage.status
            fact = StageFact(student, stage_id, status.kind, status.reason, stage.score, stage.max_score, stage.look)
            stages.append(fact)
            for test in stage.tests:
                tests.append(TestFact(student, stage_id, test.check, test.name, test.score >= test.points))
                mistakes += [MistakeFact(student, stage_id, test.check, m.kind, m.board) for m in test.mistakes]
    return Facts(stages, tests, mistakes)


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
    finally:
        db.close()
    key = lambda fact: (fact.student, STAGE_ORDER.get(fact.stage, len(STAGE_ORDER)))  # noqa: E731
    return Facts(sorted(stages, key=key), sorted(tests, key=key), sorted(mistakes, key=key))


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
    student: str
    stages: list[HelpStage]


def needs_help(facts: Facts) -> list[NeedsHelp]:
    """The students far below the class on stages they worked on (HELP_RULE), by name."""
    shares: dict[str, list[float]] = defaultdict(list)
    for fact in facts.stages:
        if fact.kind in WORKING:
            shares[fact.stage].append(fact.score)
    medians = {stage: statistics.median(scores) for stage, scores in shares.items()}
    found: dict[str, list[HelpStage]] = defaultdict(list)
    for fact in facts.stages:
        if fact.kind not in WORKING or not fact.max_score:
            continue
        median = medians[fact.stage]
        if fact.score < HELP_BELOW * fact.max_score and median >= HELP_CLASS_MEDIAN * fact.max_score:
            found[fact.student].append(HelpStage(fact.stage, fact.score, fact.max_score, median))
    return [NeedsHelp(student, stages) for student, stages in sorted(found.items())]


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
    console.print(f"\n[bold]Who needs help[/] ({len(helped)}): {HELP_RULE}.")
    for entry in helped:
        shown = ", ".join(
            f"{s.stage} {number(s.score)}/{number(s.max_score)} (class median {number(s.class_median)})"
            for s in entry.stages
        )
        console.print(f"  {escape(entry.student)}: {escape(shown)}")
    for stage in wrong_by_stage(facts):
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
    path = args.gradebook or args.out / "gradebook.db"
    from autograder.outputs.gradebook import problem

    why = problem(path) if path.is_file() else f"no gradebook at {path} (grade the class first)"
    if why:
        print(f"autograde stats: {why}", file=sys.stderr)
        return 2
    try:
        facts = facts_from_gradebook(path)
    except sqlite3.Error as error:
        print(f"autograde stats: cannot read the gradebook {path}: {error}", file=sys.stderr)
        return 2
    print_stats(facts)
    return 0
