"""One mutant judged: the oracle's verdict, then both suites; every mutant judged in a few forked workers."""

import multiprocessing
import os
import signal
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass

from autograder.authoring.mutants.inprocess import cached_module, load
from autograder.authoring.mutants.judged import first_hidden_failure
from autograder.authoring.mutants.make import Mutant, student_functions
from autograder.authoring.mutants.visible import VisibleFile, first_visible_failure
from autograder.authoring.mutants.wrong import Call, first_wrong_call, memo_wrong, oracle_calls, prune_wrong
from autograder.course.checks import stage_checks
from autograder.course.oracle import oracle
from autograder.course.stages import ASSIGNMENTS, Stage
from autograder.grading import child
from autograder.grading.plan import stage_plan

RECURSION_LIMIT = 3000  # the child's own limit: a mutant that recurses without end stops at it


@dataclass(frozen=True)
class Verdict:
    stage_id: str
    number: int
    wrong: str | None  # why the oracle says it is wrong; None when it is equivalent to the reference
    hidden: str | None  # the first hidden check that fails; None when it passes them all
    visible: str | None  # the first visible test that fails; None when all pass
    seconds: float = 0.0


@dataclass(frozen=True)
class Prepared:
    """What every worker needs about a stage, worked out once in the parent before the workers fork."""

    stage: Stage
    calls: list[Call]
    visible: VisibleFile
    functions: tuple[str, ...]
    memo: bool  # a memoization stage (04, 10): its memo is the thing tested, so nothing is cached for it
    # 08_alpha_beta: the function its prune experiment scores with ("" for none). Its pruning is tested by counting
    # calls, so the visible tests (one counts them) and the prune experiment run plain; the answers are judged on
    # the cached module
    prune: str = ""
    memo_contents: dict[str, int] | None = None  # what the memo must hold, when the keys are prescribed (10)


PREPARED: dict[str, Prepared] = {}


def prepare(stages: list[Stage]) -> None:
    known = oracle()
    for stage in stages:
        if stage.id in PREPARED:
            continue  # the same for every run in this process
        stage_plan(stage.id)  # and stage_checks: both cached, so the forked workers inherit them
        kinds = {check.kind for check in stage_checks(stage.id)}
        memo = bool(kinds & {"memo-size", "memo-speed"})
        prescribed = [check.memo_contents for check in stage_checks(stage.id) if check.memo_contents is not None]
        # The pruned scoring (score, in 08) is not cached: it must still call alphabeta for the visible test that
        # counts those calls (see _visible_failure); alphabeta is, so it costs no more.
        pruned = [check.function for check in stage_checks(stage.id) if check.kind == "prune"]
        PREPARED[stage.id] = Prepared(
            stage,
            oracle_calls(stage, known),
            VisibleFile.read(stage),
            tuple(name for name in student_functions(stage) if name not in pruned),
            memo,
            prune=pruned[0] if pruned else "",
            memo_contents=prescribed[0] if prescribed else None,
        )


def judge_module(prepared: Prepared, source: str) -> tuple[str | None, str | None, str | None]:
    """(wrong, hidden, visible) for one module's source, as in Verdict."""
    stage = prepared.stage

    def plain() -> types.ModuleType:
        return load(stage, source)

    try:
        plain()
    except Exception as error:  # noqa: BLE001 - a module that does not import is caught by every suite
        why = f"does not import: {type(error).__name__}"
        return why, why, why
    if prepared.memo:
        module = plain()
        wrong = memo_wrong(module, stage, oracle(), prepared.memo_contents) or first_wrong_call(module, prepared.calls)
        return wrong, first_hidden_failure(stage, plain), first_visible_failure(prepared.visible, plain())
    changed: list[str] = []
    cached = cached_module(plain(), prepared.functions, changed)
    wrong = first_wrong_call(cached, prepared.calls)
    experiment = plain if prepared.prune else None
    if prepared.prune:
        wrong = wrong or prune_wrong(plain(), stage, prepared.prune)
    if not changed:
        # A pure function of the board: the cached module answers every call exactly as the plain one would.
        visible = _visible_failure(prepared, cached, plain)
        return wrong, first_hidden_failure(stage, lambda: cached, experiment), visible
    # Some calls changed their board: those functions run plain, the others (pure) stay cached, unless they
    # too change a board on the way, and then everything runs plain.
    pure = tuple(name for name in prepared.functions if name not in changed)
    for functions in (pure, ()):
        later: list[str] = []

        def fresh(functions=functions, later=later) -> types.ModuleType:
            return cached_module(plain(), functions, later)

        result = (
            wrong or first_wrong_call(fresh(), prepared.calls) or "changes a board it is given inside its search",
            first_hidden_failure(stage, fresh, experiment),
            _visible_failure(prepared, fresh(), plain),
        )
        if not set(later) & set(functions):
            return result
    raise AssertionError("unreachable: nothing is cached on the last pass")


def _visible_failure(prepared: Prepared, cached: types.ModuleType, plain: Callable[[], types.ModuleType]) -> str | None:
    """first_visible_failure on the cached module; in 08_alpha_beta, when every test passes there, on the plain
    module too. A cache makes fewer calls of alphabeta (at least one: score is not cached), and the visible test
    that counts them asks for at most so many: a test that fails on the cached module fails on the plain one, but
    not always the other way round."""
    failure = first_visible_failure(prepared.visible, cached)
    if failure is None and prepared.prune:
        failure = first_visible_failure(prepared.visible, plain())
    return failure


def judge_mutant(mutant: Mutant) -> Verdict:
    start = time.monotonic()
    wrong, hidden, visible = judge_module(PREPARED[mutant.stage_id], mutant.source)
    return Verdict(mutant.stage_id, mutant.number, wrong, hidden, visible, time.monotonic() - start)


def _start_worker() -> None:
    sys.setrecursionlimit(RECURSION_LIMIT)
    signal.signal(signal.SIGPROF, child.on_timer)
    sys.path.insert(0, str(ASSIGNMENTS))  # the visible tests import coursetest from there
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - a mutant or a test must not write into the report


def judge_all(mutants: list[Mutant], jobs: int) -> list[Verdict]:
    """Every mutant judged in jobs forked workers; a run that makes no progress for BACKSTOP seconds stops."""
    context = multiprocessing.get_context("fork")  # the workers inherit the oracle and the plans
    with context.Pool(jobs, initializer=_start_worker, maxtasksperchild=None) as pool:
        results = pool.imap_unordered(judge_mutant, mutants, chunksize=1)
        verdicts = [results.next(timeout=BACKSTOP) for _ in mutants]
    return sorted(verdicts, key=lambda verdict: (verdict.stage_id, verdict.number))


BACKSTOP = 300  # wall seconds without any mutant finishing: every call has a CPU budget, so this means a hang
