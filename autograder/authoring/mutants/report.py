"""What `autograde verify --mutants` checks and prints: the hidden checks must catch every wrong mutant and reject
no correct one; the visible tests must catch at least VISIBLE_TARGET of the wrong ones per stage and every mistake
in NAMED_MISTAKES. One row per stage, the wrong mutants the visible tests miss, then every requirement that fails.
"""

import multiprocessing
import signal
import sys
import time
from dataclasses import dataclass

from autograder.authoring.mutants.inprocess import load
from autograder.authoring.mutants.make import make_mutants
from autograder.authoring.mutants.verdict import BACKSTOP, PREPARED, Verdict, judge_all, prepare
from autograder.authoring.mutants.visible import first_visible_failure
from autograder.course.stages import ASSIGNMENTS, ROOT, STAGES, Stage
from autograder.grading import child

VISIBLE_TARGET = 0.95
VARIANTS = ROOT / "tests" / "variants"
# The mistakes students really make that the visible tests must show (tests/variants/<stage>/<name>.py).
NAMED_MISTAKES = {
    "03_minimax": ("wrong_full_before_winner",),
    "04_memoization": ("wrong_full_before_winner", "wrong_key_x_squares", "wrong_key_empty_count"),
    "06_count_results": ("wrong_full_before_winner",),
    "07_quickest_move": ("wrong_no_plus_one",),
    "08_alpha_beta": ("wrong_no_pruning", "wrong_fresh_window", "wrong_returns_wrong_bound"),
    "09_best_squares": ("wrong_depth_not_deeper", "wrong_first_best_only"),
    "10_symmetry": ("wrong_memo_keyed_by_board", "wrong_turns_only"),
}


@dataclass
class Figures:
    mutants: int = 0
    equivalent: int = 0
    wrong: int = 0
    hidden: int = 0  # wrong mutants the hidden checks catch
    visible: int = 0  # wrong mutants the visible tests catch

    @property
    def visible_share(self) -> float:
        return self.visible / self.wrong if self.wrong else 1.0


def figures(verdicts: list[Verdict]) -> Figures:
    wrong = [verdict for verdict in verdicts if verdict.wrong]
    return Figures(
        len(verdicts),
        len(verdicts) - len(wrong),
        len(wrong),
        sum(verdict.hidden is not None for verdict in wrong),
        sum(verdict.visible is not None for verdict in wrong),
    )


def named_mistakes(stage: Stage) -> list[tuple[str, str | None]]:
    """(variant, the first visible test that fails on it) for the stage's named mistakes."""
    prepared, found = PREPARED[stage.id], []
    for name in NAMED_MISTAKES.get(stage.id, ()):
        path = VARIANTS / stage.id / f"{name}.py"
        found.append((name, first_visible_failure(prepared.visible, load(stage, path.read_text()))))
    return found


def select(names: list[str]) -> list[Stage]:
    """The stages named (by folder or by its number, e.g. 03), all of them when none is; ValueError for others."""
    if not names:
        return list(STAGES)
    chosen = []
    for name in names:
        found = [stage for stage in STAGES if name in (stage.id, stage.id[:2], stage.id[1:2])]
        if not found:
            raise ValueError(f"no stage {name!r}; the stages are {', '.join(stage.id for stage in STAGES)}")
        chosen += [stage for stage in found if stage not in chosen]
    return chosen


def run(stages: list[Stage], jobs: int, out=print) -> int:
    """Make, judge and report every mutant of stages; 1 when a requirement fails, else 0."""
    start = time.monotonic()
    prepare(stages)
    mutants = [mutant for stage in stages for mutant in make_mutants(stage)]
    by_key = {(mutant.stage_id, mutant.number): mutant for mutant in mutants}
    _start_parent()
    try:
        verdicts = judge_all(mutants, jobs)
    except multiprocessing.TimeoutError:
        out(f"FAILED: no mutant finished for {BACKSTOP} s: one of them hangs outside Python code")
        return 1
    problems = []
    out(f"{'stage':<18} {'mutants':>7} {'equivalent':>10} {'wrong':>6} {'hidden caught':>13} {'visible caught':>14}")
    for stage in stages:
        mine = [verdict for verdict in verdicts if verdict.stage_id == stage.id]
        counts = figures(mine)
        share = f"{counts.visible} ({100 * counts.visible_share:.1f}%)"
        out(
            f"{stage.id:<18} {counts.mutants:>7} {counts.equivalent:>10} {counts.wrong:>6} "
            f"{counts.hidden:>13} {share:>14}"
        )
        for verdict in mine:
            mutant = by_key[stage.id, verdict.number]
            if verdict.wrong and verdict.hidden is None:
                problems.append((mutant, f"the hidden checks miss it ({verdict.wrong})"))
            if not verdict.wrong and verdict.hidden is not None:
                problems.append((mutant, f"the hidden checks reject this correct code ({verdict.hidden})"))
            if not verdict.wrong and verdict.visible is not None:
                problems.append((mutant, f"a visible test rejects this correct code ({verdict.visible})"))
        if counts.visible_share < VISIBLE_TARGET:
            problems.append(
                (
                    None,
                    f"{stage.id}: the visible tests catch {100 * counts.visible_share:.1f}% of the "
                    f"wrong mutants; at least {100 * VISIBLE_TARGET:.0f}% is required",
                )
            )
        for name, failure in named_mistakes(stage):
            if failure is None:
                problems.append((None, f"{stage.id}: every visible test passes on tests/variants/{stage.id}/{name}.py"))
    survivors = [(by_key[v.stage_id, v.number], v) for v in verdicts if v.wrong and v.visible is None]
    if survivors:
        out(f"\nWrong mutants every visible test passes ({len(survivors)}); the hidden checks catch them:")
        for mutant, verdict in survivors:
            out(f"\n{mutant.stage_id} mutant {mutant.number}, line {mutant.line}: {mutant.what}  [{verdict.wrong}]")
            out(mutant.diff.rstrip("\n"))
    for mutant, why in problems:
        out(f"\nFAILED: {why}" if mutant is None else f"\nFAILED: {mutant.stage_id} mutant {mutant.number}: {why}")
        if mutant is not None:
            out(mutant.diff.rstrip("\n"))
    out(
        f"\n{len(mutants)} mutants of {len(stages)} stages judged in {time.monotonic() - start:.0f} s "
        f"on {jobs} workers: " + (f"{len(problems)} requirements failed." if problems else "every requirement holds.")
    )
    return 1 if problems else 0


def _start_parent() -> None:
    """The parent loads the variants of the named mistakes as the workers do."""
    if str(ASSIGNMENTS) not in sys.path:
        sys.path.insert(0, str(ASSIGNMENTS))
    signal.signal(signal.SIGPROF, child.on_timer)
