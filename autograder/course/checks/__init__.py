"""The checks of every stage: what to call, with which boards, and how to judge the answers.

A Check is data: a list of calls and, for each, the answers that are right (computed by the
oracle from the reference solutions). The child only makes calls; judging happens in
autograder.grading.judge, in the trusted process.
"""

import importlib
import random
from dataclasses import dataclass, field, replace

from autograder.course.cache import built_once, cached
from autograder.course.stages import STAGE_BY_ID

Board = tuple[str, ...]


@dataclass(frozen=True)
class Case:
    args: tuple  # (board as a tuple of 9 squares, *further arguments)
    accept: frozenset  # every right answer; one element where the contract allows only one

    def __reduce__(self):  # pickled as a call of the class: a stage's ~11,000 cases load from the cache in 2/3 the time
        return Case, (self.args, self.accept)


@dataclass
class Check:
    id: str  # stable across students and runs, e.g. "winner/diagonals"
    function: str
    title: str  # what the check is about, read by students: "winner on boards won on a diagonal"
    points: int
    visible: bool = False
    cases: list[Case] = field(default_factory=list)
    hint: str = ""  # what to try when it fails
    kind: str = "calls"  # "calls", "memo-size", "memo-speed", "prune" or "unchanged" (the board left as it was)
    # points 0: an advisory check (the board left unchanged), reported but never counted
    # The memo experiment's checks: what a right memo holds afterwards (its keys as boards, with their scores);
    # None: one entry per reachable board, keyed by the board itself (stage 4).
    memo_contents: dict[str, int] | None = None
    # nbgrader runs each test cell of a notebook under one time limit: a check whose cases are many plain
    # searches asks a notebook only a fixed sample of this many of them (None: every case).
    notebook_sample: int | None = None

    def notebook_cases(self) -> list[Case]:
        """The cases a notebook's test cell asks: all of them, or a fixed sample in the check's own order that
        keeps the first case (the empty board, in the checks that have it)."""
        if self.notebook_sample is None or len(self.cases) <= self.notebook_sample:
            return list(self.cases)
        chosen = random.Random(f"notebook {self.id}").sample(range(1, len(self.cases)), self.notebook_sample - 1)
        return [self.cases[0], *(self.cases[index] for index in sorted(chosen))]


def case(board, *extra, accept) -> Case:
    answers = accept if isinstance(accept, set | frozenset) else {_freeze(accept)}
    return Case(args=(tuple(board), *extra), accept=frozenset(_freeze(answer) for answer in answers))


def _freeze(answer):
    return tuple(_freeze(item) for item in answer) if isinstance(answer, list | tuple) else answer


def sample(boards: list[Board], size: int, seed: str, always: tuple[Board, ...] = ()) -> list[Board]:
    """A fixed, seeded sample of boards (the same every run), with the boards in always first."""
    rest = [board for board in boards if board not in always]
    chosen = random.Random(seed).sample(rest, min(size, len(rest)))
    return list(always) + chosen


def unchanged(function_names: str) -> Check:
    """The board left as it was found: advisory, worth no points.

    Only the child can look at the board after a call, and student code shares the child's process: a module
    can replace the child's comparison (or anything it reports) at import, and the parent cannot tell. A check
    the parent cannot verify earns nothing; it still tells an honest student that their code changes boards.
    """
    return Check(
        id="board-unchanged",
        function=function_names,
        title="leaves the board it is given as it found it (advisory: no points)",
        points=0,
        kind="unchanged",
        hint="Undo every mark you place (board[square] = ' ') before you return, or work on a copy.",
    )


@built_once
def stage_checks(stage_id: str) -> tuple[Check, ...]:
    """All checks of one stage, visible ones first; their points add up to the stage's points. Built once for a
    suite and kept between runs (course/cache.py)."""
    return cached(stage_id, lambda: _build_checks(stage_id))


@built_once
def stage_outline(stage_id: str) -> tuple[Check, ...]:
    """The stage's checks without their cases: what a result lists when the stage was not run (not submitted,
    unreadable), for the price of a small file instead of every case's answers."""

    def outline():
        return tuple(replace(check, cases=[], memo_contents=None) for check in stage_checks(stage_id))

    return cached(f"{stage_id}-outline", outline)


def _build_checks(stage_id: str) -> tuple[Check, ...]:
    from autograder.course.checks.visible import visible_checks
    from autograder.course.oracle import oracle

    stage = STAGE_BY_ID[stage_id]
    hidden = importlib.import_module(f"{__name__}.{stage.checks}")  # the module the manifest names
    checks = visible_checks(stage, oracle()) + hidden.checks(oracle())
    total = sum(check.points for check in checks)
    if total != stage.points:
        raise AssertionError(f"{stage_id}: checks are worth {total} points, the manifest says {stage.points}")
    return tuple(checks)
