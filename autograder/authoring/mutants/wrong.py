"""Is a mutant wrong? The oracle says, on every position a student function may be given (an equivalent mutant is
not a mistake); in a memoization stage its memo must follow the contract too, and in 08_alpha_beta a mutant with
the right answers that does not prune is wrong (see PRUNE_CALLS_LIMIT).

The memo's name and the function whose calls are counted come from the manifest (Stage.memo, Stage.counted).
"""

import types

from autograder.authoring.mutants.inprocess import SECONDS
from autograder.course.oracle import Oracle
from autograder.course.stages import Stage
from autograder.grading import child, judging
from autograder.grading.plan import encodings

Call = tuple[str, tuple, frozenset]  # (function, (board, *extra), the child's encodings of every right answer)


def oracle_calls(stage: Stage, known: Oracle) -> list[Call]:
    """Every call the contract allows, with its right answers: each function's boards (Function.given) with each
    of its extra arguments (Function.extra), as the manifest says."""
    from autograder.course.checks.visible import expected

    boards = {
        "positions": known.positions,
        "unfinished": [p for p in known.positions if not known.finished(p)],
        "forced win": [p for p in known.positions if known.can_force_win(p)],
    }
    calls = []
    for function in stage.contract:
        for board in boards[function.given]:
            for extra in function.extra:
                args = (board, *extra)
                calls.append((function.name, args, encodings(expected(known, function.name, args))))
    # Board by board (the empty board first), every function on each: a mutant of a function asked last is then
    # found wrong within a few boards, not after every call of the others.
    order = {board: index for index, board in enumerate(known.positions)}
    return sorted(calls, key=lambda call: order[call[1][0]])


def _call(function, board: list, extra: tuple):
    """("value", v), ("slow", None) or ("error", e): one call under its CPU budget, as the child makes it."""
    return child.timed(SECONDS, function, board, *extra)


def first_wrong_call(module: types.ModuleType, calls: list[Call]) -> str | None:
    """Why the first call that breaks the contract is wrong (an answer, an error, a changed board), or None."""
    for function, args, forms in calls:
        given = list(args[0])
        board = list(given)
        how, value = _call(getattr(module, function), board, args[1:])
        if how == "value" and child.same_board(board, given) and child.encode(value) in forms:
            continue  # the usual case, decided without building the message
        shown = f"{function}({''.join(args[0])!r}{''.join(f', {extra!r}' for extra in args[1:])})"
        if how == "slow":
            return f"{shown} took more than {SECONDS} CPU seconds"
        if how == "error":
            return f"{shown} raised {type(value).__name__}: {value}"[:200]
        if not child.same_board(board, given):
            return f"{shown} changed its board"
        if child.encode(value) not in forms:
            return f"{shown} returned {value!r}"[:200]
    return None


class TooManyCalls(Exception):
    """More calls of the stage's counted function than a search that uses its memo makes (plain minimax makes
    549,946 calls of score), or than a search that prunes makes (of alphabeta, in 08_alpha_beta)."""


# 08_alpha_beta's contract asks alphabeta to prune: a mutant with right answers that scores the empty board with
# more than PRUNE_CALLS_LIMIT calls of alphabeta is wrong. The grader judges pruning by the CPU time of the
# prune experiment's child (score of the empty board, then of the nine openings) against
# judging.PRUNE_CPU_THRESHOLD (0.6 s); a mutant is our own code, judged in-process, so it is judged by the count
# that CPU time stands for. Measured in-process on the grading machine: a call of alphabeta costs about 1.5 us
# (the reference's experiment, 49,006 calls, takes 0.073 s of CPU, its child 0.10 s: 0.03 s to start), and the
# experiment of a search that does not prune makes twice the empty board's calls (549,946 then 549,945 for the
# openings): 0.6 s is (0.6 - 0.03) / 1.5 us = about 380,000 calls of the experiment, 190,000 of the empty board.
# Reference 18,297 is 11x under the limit, the single-point mutant that prunes least 27,842; plain minimax 549,946
# is 2.7x over it, and the mutant that prunes too little nearest to it (`alpha > beta` for `alpha >= beta`) makes
# 304,155, 1.5x over: 0.76 s in-process, over the CPU threshold too. The visible test's limit is the same.
PRUNE_CALLS_LIMIT = 200_000


def prune_wrong(module: types.ModuleType, stage: Stage, scored: str) -> str | None:
    """Why scored (the prune experiment's function) of the empty board does not prune (too many calls of
    stage.counted), or None. module is plain."""
    has_counted, _ = limit_calls(module, stage.counted, PRUNE_CALLS_LIMIT)
    how, value = _call(getattr(module, scored), [" "] * 9, ())
    if how == "error" and type(value) is TooManyCalls:
        return (
            f"{scored} of the empty board made more than {PRUNE_CALLS_LIMIT:,} calls of {stage.counted}: "
            "it does not prune"
        )
    return None if has_counted else f"has no function {stage.counted}"


def memo_wrong(
    module: types.ModuleType, stage: Stage, known: Oracle, contents: dict[str, int] | None = None
) -> str | None:
    """The memo contract: from an empty memo (stage.memo), scoring the empty board writes one entry per reachable
    board (or, given contents, exactly those entries: a board each family of turned and flipped boards, in
    10_symmetry); then every reachable board is looked up (one call of stage.counted, the right score)."""
    name, scored = stage.memo, stage.counted
    memo = getattr(module, name, None)
    if type(memo) is not dict:
        return f"{name} is not a dict"
    memo.clear()
    original, calls = getattr(module, scored), [0]

    def counting(board):
        calls[0] += 1
        if calls[0] > judging.MEMO_CALLS_LIMIT:
            raise TooManyCalls()
        return original(board)

    setattr(module, scored, counting)
    try:
        for board in known.positions:  # the empty board first
            calls[0] = 0
            given = list(board)
            how, value = _call(counting, list(given), ())
            shown = f"{scored}({''.join(board)!r})"
            if how == "error" and type(value) is TooManyCalls:
                return f"{shown} made more than {judging.MEMO_CALLS_LIMIT:,} calls: {name} is not used"
            if how != "value" or type(value) is not int or value != known.score(board):
                return f"{shown} gave {how} {value!r}"[:200]
            size = len(known.positions) if contents is None else len(contents)
            if board == known.positions[0] and len(memo) != size:
                return f"{name} holds {len(memo)} boards after scoring the empty board"
            if board == known.positions[0] and contents is not None:
                held = {child.board_of(key): value for key, value in memo.items()}
                if held != contents:
                    return f"{name} does not map each canonical board to its score"
            if board != known.positions[0] and calls[0] != 1:
                return f"{shown} made {calls[0]} calls though {name} holds every board"
    finally:
        setattr(module, scored, original)
    return None


def limit_calls(module: types.ModuleType, name: str, limit: int, per: str | None = None) -> tuple[bool, list]:
    """Make module.name raise TooManyCalls after limit calls: a shortcut for an experiment (see the callers).
    With per, the count starts again at each outermost call of module.per (one scoring of the experiment).
    Returns (whether module has that function, the count)."""
    original, calls = getattr(module, name, None), [0]
    if not callable(original):
        return False, calls

    def limited(board, *extra):
        calls[0] += 1
        if calls[0] > limit:
            raise TooManyCalls()
        return original(board, *extra)

    setattr(module, name, limited)
    outer = getattr(module, per, None) if per else None
    if callable(outer):
        depth = [0]

        def counted_afresh(board, *extra):
            if depth[0] == 0:
                calls[0] = 0
            depth[0] += 1
            try:
                return outer(board, *extra)
            finally:
                depth[0] -= 1

        setattr(module, per, counted_afresh)
    return True, calls
