"""`autograde verify --mutants`: prove that the tests catch every single-point mistake of the reference solutions.

Every mutant changes one thing in the student's part of a reference solution (the code between the solution
markers): a comparison or arithmetic operator, a constant (an int, 'X', 'O' or ' '), max for min, and for or,
a statement deleted (replaced by `pass`) or two neighbouring statements swapped. The oracle decides which
mutants are wrong on some position a student function may be given (an equivalent mutant is not a mistake);
then the hidden checks and the visible tests run on each one. The hidden checks must catch every wrong mutant
and reject no correct one; the visible tests must catch at least VISIBLE_TARGET of the wrong ones per stage and
every mistake in NAMED_MISTAKES. In 08_alpha_beta a mutant with the right answers that does not prune is wrong
too (see PRUNE_CALLS_LIMIT).

Speed: mutants are our own trusted code, derived from the reference, so they run in-process in a few worker
processes, without the sandbox; each call gets a CPU budget (a mutant may loop or recurse without end). A mutant
that never changes the board it is given is a pure function of the board, so its recursive functions are then
wrapped in a cache keyed by the board: the same answers as the plain code, at a fraction of the cost. The hidden
checks are judged by the grader's own code (child.run_step, the memo experiment, judging.py) on those calls.
"""

import ast
import copy
import difflib
import functools
import multiprocessing
import os
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from autograder.authoring.markers import solution_body
from autograder.course.checks import Check, stage_checks
from autograder.course.oracle import Oracle, oracle
from autograder.course.stages import ASSIGNMENTS, ROOT, STAGES, Stage
from autograder.grading import child, judging
from autograder.grading.plan import CALL_SECONDS, MEMO_KINDS, encodings, stage_plan
from autograder.grading.protocol import parse_replies
from autograder.grading.sandbox.run_result import RunResult

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
SECONDS = CALL_SECONDS  # CPU seconds for one call (or one visible test), as the grader gives one search
RECURSION_LIMIT = 3000  # the child's own limit: a mutant that recurses without end stops at it

COMPARE_SWAPS = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.Gt, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt, ast.LtE),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
ARITHMETIC_SWAPS = {ast.Add: (ast.Sub, ast.Mult), ast.Sub: (ast.Add,), ast.Mult: (ast.Add,), ast.FloorDiv: (ast.Mult,)}
MARKS = ("X", "O", " ")
SWAP_NAMES = {"max": "min", "min": "max"}
SYMBOLS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
    ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
    ast.FloorDiv: "//", ast.USub: "unary -", ast.Not: "not", ast.And: "and", ast.Or: "or",
}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Making the mutants


@dataclass(frozen=True)
class Mutant:
    stage_id: str
    number: int
    line: int  # in the solution file
    what: str  # "'<' -> '<='", "deleted: return 1", ...
    source: str  # the whole mutated module (ast.unparse of the solution, one change)
    diff: str  # unified diff against the unparsed reference


def _student_lines(source: str) -> set[int]:
    return {number for number, _ in solution_body(source)}


def _edits(tree: ast.Module, lines: set[int]) -> Iterator[tuple[int, str, Callable[[ast.Module], None]]]:
    """(line, what, edit) for every single-point change inside the student's lines; edit works on a copy of tree.

    Nodes are found again in the copy by their position in ast.walk order, which a deep copy keeps.
    """
    nodes = list(ast.walk(tree))

    def at(index: int) -> Callable[[ast.Module], ast.AST]:
        return lambda copied: list(ast.walk(copied))[index]

    for index, node in enumerate(nodes):
        line = getattr(node, "lineno", None)
        if line not in lines:
            continue
        find = at(index)
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                for other in COMPARE_SWAPS.get(type(op), ()):
                    yield line, f"{_op(op)} -> {_op(other())}", _set_op(find, position, other)
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            for other in ARITHMETIC_SWAPS.get(type(node.op), ()):
                yield line, f"{_op(node.op)} -> {_op(other())}", _set_attr(find, "op", other)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
            yield line, f"{_op(node.op)} removed", _unwrap(find)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield line, f"{_op(node.op)} -> {_op(other())}", _set_attr(find, "op", other)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            for value in (node.value + 1, node.value - 1):
                yield line, f"{node.value} -> {value}", _set_attr(find, "value", lambda value=value: value)
        elif isinstance(node, ast.Constant) and node.value in MARKS:
            for value in MARKS:
                if value != node.value:
                    yield line, f"{node.value!r} -> {value!r}", _set_attr(find, "value", lambda value=value: value)
        elif isinstance(node, ast.Name) and node.id in SWAP_NAMES:
            yield line, f"{node.id} -> {SWAP_NAMES[node.id]}", _set_attr(find, "id", lambda n=node.id: SWAP_NAMES[n])
        for name in ("body", "orelse"):
            body = getattr(node, name, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            for position, statement in enumerate(body):
                if statement.lineno in lines and not isinstance(statement, ast.Pass):
                    yield statement.lineno, f"deleted: {_first_line(statement)}", _delete(find, name, position)
                if position + 1 < len(body) and statement.lineno in lines and body[position + 1].lineno in lines:
                    what = f"swapped with the next statement: {_first_line(statement)}"
                    yield statement.lineno, what, _swap(find, name, position)


def _op(op: ast.AST) -> str:
    return repr(SYMBOLS[type(op)])


def _first_line(statement: ast.stmt) -> str:
    return ast.unparse(statement).splitlines()[0]


def _set_op(find, position, other):
    def edit(copied):
        find(copied).ops[position] = other()

    return edit


def _set_attr(find, name, make):
    def edit(copied):
        setattr(find(copied), name, make())

    return edit


def _unwrap(find):
    """Replace a unary operation by its operand: the same node object is found by identity in its parent."""

    def edit(copied):
        target = find(copied)
        for parent in ast.walk(copied):
            for name, value in ast.iter_fields(parent):
                if value is target:
                    setattr(parent, name, target.operand)
                elif isinstance(value, list):
                    value[:] = [target.operand if item is target else item for item in value]

    return edit


def _delete(find, name, position):
    def edit(copied):
        getattr(find(copied), name)[position] = ast.Pass()

    return edit


def _swap(find, name, position):
    def edit(copied):
        body = getattr(find(copied), name)
        body[position], body[position + 1] = body[position + 1], body[position]

    return edit


def make_mutants(stage: Stage) -> list[Mutant]:
    """Every single-point mutant of the student's part of the stage's reference solution, in source order."""
    source = stage.solution_path.read_text()
    tree = ast.parse(source)
    reference = ast.unparse(tree)
    seen, mutants = {reference}, []
    for line, what, edit in sorted(_edits(tree, _student_lines(source)), key=lambda edit: edit[0]):
        copied = copy.deepcopy(tree)
        edit(copied)
        text = ast.unparse(ast.fix_missing_locations(copied))
        if text in seen:
            continue  # two edits that give the same code (e.g. 1 -> 0 and a deleted unary minus) count once
        seen.add(text)
        diff = "".join(
            difflib.unified_diff(
                reference.splitlines(keepends=True),
                text.splitlines(keepends=True),
                f"{stage.id}/{stage.filename} (reference)",
                f"{stage.id} mutant {len(mutants) + 1} (line {line}: {what})",
                n=1,
            )
        )
        mutants.append(Mutant(stage.id, len(mutants) + 1, line, what, text, diff))
    return mutants


# ---------------------------------------------------------------------------------------------------------------
# Loading a mutant, and the cache that makes a pure one cheap


def load(stage: Stage, source: str) -> types.ModuleType:
    """source as a fresh module named like the student's (trusted code: our own mutant or variant)."""
    module = types.ModuleType(stage.module)
    module.__file__ = stage.filename
    exec(_compiled(source, stage.filename), module.__dict__)
    return module


@functools.lru_cache(maxsize=4)
def _compiled(source: str, filename: str) -> types.CodeType:
    return compile(source, filename, "exec")


def student_functions(stage: Stage) -> tuple[str, ...]:
    """The functions of the solution that hold a student region (quick_score too, though no test calls it)."""
    source = stage.solution_path.read_text()
    lines = _student_lines(source)
    return tuple(
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and any(node.lineno <= line <= node.end_lineno for line in lines)
    )


def _cache(module: types.ModuleType, name: str, changed: list) -> None:
    """Replace module.name by a version cached on its arguments that notes (in changed) each call that changed
    its board.

    The recursion looks the name up at each call, so it goes through the cache too (as in oracle._cached).
    """
    plain = getattr(module, name)
    store = {}

    def copy_of(value):
        return list(value) if type(value) is list else value

    def cached(board, *extra):
        key = (tuple(board), *extra)
        if key not in store:
            value = plain(board, *extra)
            if tuple(board) != key[0]:
                changed.append(name)
            store[key] = copy_of(value)
        return copy_of(store[key])

    setattr(module, name, cached)


# ---------------------------------------------------------------------------------------------------------------
# What the oracle says: is the mutant wrong on some position a student function may be given?

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
    """More calls of score than a search that uses its memo makes (plain minimax makes 549,946), or of alphabeta
    than a search that prunes makes."""


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


def prune_wrong(module: types.ModuleType) -> str | None:
    """Why score of the empty board does not prune (too many calls of alphabeta), or None. module is plain."""
    counted, _ = _limit_calls(module, "alphabeta", PRUNE_CALLS_LIMIT)
    how, value = _call(module.score, [" "] * 9, ())
    if how == "error" and type(value) is TooManyCalls:
        return f"score of the empty board made more than {PRUNE_CALLS_LIMIT:,} calls of alphabeta: it does not prune"
    return None if counted else "has no function alphabeta"


def memo_wrong(module: types.ModuleType, known: Oracle, contents: dict[str, int] | None = None) -> str | None:
    """The memo contract: from an empty memo, scoring the empty board writes one entry per reachable board (or,
    given contents, exactly those entries: a board each family of turned and flipped boards, in 10_symmetry);
    then every reachable board is looked up (one call of score, the right score)."""
    memo = getattr(module, "memo", None)
    if type(memo) is not dict:
        return "memo is not a dict"
    memo.clear()
    original, calls = module.score, [0]

    def counted(board):
        calls[0] += 1
        if calls[0] > judging.MEMO_CALLS_LIMIT:
            raise TooManyCalls()
        return original(board)

    module.score = counted
    try:
        for board in known.positions:  # the empty board first
            calls[0] = 0
            given = list(board)
            how, value = _call(counted, list(given), ())
            if how == "error" and type(value) is TooManyCalls:
                return f"score({''.join(board)!r}) made more than {judging.MEMO_CALLS_LIMIT:,} calls: memo is not used"
            if how != "value" or type(value) is not int or value != known.score(board):
                return f"score({''.join(board)!r}) gave {how} {value!r}"[:200]
            size = len(known.positions) if contents is None else len(contents)
            if board == known.positions[0] and len(memo) != size:
                return f"memo holds {len(memo)} boards after scoring the empty board"
            if board == known.positions[0] and contents is not None:
                held = {child.board_of(key): value for key, value in memo.items()}
                if held != contents:
                    return "memo does not map each canonical board to its score"
            if board != known.positions[0] and calls[0] != 1:
                return f"score({''.join(board)!r}) made {calls[0]} calls though memo holds every board"
    finally:
        module.score = original
    return None


# ---------------------------------------------------------------------------------------------------------------
# The hidden checks, judged by the grader's own code on calls made in this process


def _limit_calls(module: types.ModuleType, name: str, limit: int, per: str | None = None) -> tuple[bool, list]:
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


class _Buffer(child.Replies):
    """The child's replies, written to memory instead of file descriptor 3."""

    def __init__(self):
        super().__init__(-1)
        self.data = bytearray()
        self.send({"import": "ok"})

    def _write(self, text):
        self.data += text.encode()

    def finished(self) -> bytes:
        self.flush()
        return bytes(self.data)


def first_hidden_failure(
    stage: Stage, fresh: Callable[[], types.ModuleType], plain: Callable[[], types.ModuleType] | None = None
) -> str | None:
    """The id of the first hidden check the module fails (or why it failed), or None when it passes them all.

    fresh() gives the module as a new child would import it; plain() (fresh() when None) the same without any
    cache, for the memo or prune experiment, which counts calls and measures CPU time. The checks stop at the
    first failure (only whether the suite catches the mutant matters), so the cheap ones go first: the memo
    experiment before the calls (a memo that is not used makes every call a plain search), the prune experiment
    after them (it runs plain, the calls are cached), and the calls checks with the fewest cases first.
    """
    hidden = [check for check in stage_checks(stage.id) if not check.visible]
    experiment = [check for check in hidden if check.kind in MEMO_KINDS]
    prune = any(check.kind == "prune" for check in experiment)
    calls = sorted((check for check in hidden if check.kind == "calls"), key=lambda check: len(check.cases))
    if experiment and not prune and (failure := _experiment_failure(stage, (plain or fresh)(), experiment)):
        return failure
    if failure := _calls_failure(stage, fresh(), calls):
        return failure
    if experiment and prune:
        return _experiment_failure(stage, (plain or fresh)(), experiment)
    return None


def _experiment_failure(stage: Stage, module: types.ModuleType, checks: list[Check]) -> str | None:
    """The first check of the memo or prune experiment the module fails, judged by the grader's code, or None."""
    import json

    from autograder.grading.judge import memo_limits
    from autograder.record import Outcome

    plan, buffer = stage_plan(stage.id), _Buffer()
    if any(check.kind == "prune" for check in checks):
        # Past PRUNE_CALLS_LIMIT calls of alphabeta in one scoring the experiment's CPU time is over
        # judging.PRUNE_CPU_THRESHOLD (see PRUNE_CALLS_LIMIT), so score/prunes fails either way.
        _limit_calls(module, "alphabeta", PRUNE_CALLS_LIMIT, per="score")
    else:
        # The grader lets it run on and fails memo/speed when the first scoring makes more than
        # MEMO_CALLS_LIMIT calls, or the scoring again (one call a board for a memo) is wrong or slow: past
        # this many calls one of those happens, so the verdict is the same.
        _limit_calls(module, "score", judging.MEMO_CALLS_LIMIT + len(plan.memo_again))
    start = time.process_time()
    child.memo_experiment(module, stage.filename, json.loads(plan.memo_job)["memo"], buffer)
    cpu = time.process_time() - start
    run = RunResult("exited", 0, buffer.finished(), b"", cpu, cpu, "")
    replies = parse_replies(run.reply, plan, False, memo=True)
    limits = memo_limits()
    ended = judging.unanswered(run, limits, limits.cpu_seconds, "the memo experiment")
    for check in checks:
        if judging.judge_memo(check, plan, replies, run, ended, stage.filename).outcome != Outcome.PASSED:
            return check.id
    return None


def _calls_failure(stage: Stage, module: types.ModuleType, checks: list[Check]) -> str | None:
    """The first calls check the module fails (or board-unchanged), judged by the grader's code, or None."""
    from autograder.record import Outcome

    plan, buffer, asked = stage_plan(stage.id), _Buffer(), set()
    never = judging.Unanswered(Outcome.CRASHED, "")
    for check in checks:
        for step_id, right, _ in plan.expected[check.id]:
            if step_id not in asked:
                asked.add(step_id)
                reply = child.run_step(module, stage.filename, plan.step_by_id[step_id])
                if type(reply) is not tuple or reply[1] not in right:
                    # An error, a wrong answer or a changed board: the grader fails this check (or board-unchanged)
                    # whatever the other calls answer, so they are not made.
                    wrong_answer = type(reply) is not tuple and not ("changed" in reply and reply["value"] in right)
                    return check.id if type(reply) is tuple or wrong_answer else "board-unchanged"
                buffer.add(reply)
        replies = parse_replies(buffer.finished(), plan, False)
        if replies.tampered:
            return f"{check.id} (replies unreadable: {replies.tampered})"
        if judging.judge_calls(check, plan, replies, never).outcome != Outcome.PASSED:
            return check.id
        if any("changed" in reply for reply in replies.details.values()):
            return "board-unchanged"
    return None


# ---------------------------------------------------------------------------------------------------------------
# The visible tests: the stage's own test file, its test functions called here as pytest would call them


@dataclass(frozen=True)
class VisibleFile:
    stage: Stage
    code: types.CodeType = field(repr=False)

    @classmethod
    def read(cls, stage: Stage) -> "VisibleFile":
        return cls(stage, compile(stage.test_path.read_text(), str(stage.test_path), "exec"))

    def items(self, module: types.ModuleType) -> list[tuple[str, Callable, dict]]:
        """(test id, test function, its arguments) of every test in the file, bound to module."""
        namespace = {"__name__": f"test_{self.stage.module}", "__file__": str(self.stage.test_path)}
        saved = sys.modules.get(self.stage.module)
        sys.modules[self.stage.module] = module
        try:
            exec(self.code, namespace)
        finally:
            if saved is None:
                del sys.modules[self.stage.module]
            else:
                sys.modules[self.stage.module] = saved
        found = []
        for name, function in namespace.items():
            if name.startswith("test_") and callable(function):
                for number, arguments in enumerate(_parameters(function)):
                    found.append((f"{name}[{number}]", function, arguments))
        return sorted(found, key=_cost)


def _parameters(function) -> list[dict]:
    """Every combination of the function's pytest.mark.parametrize arguments ([{}] when it has none)."""
    combinations = [{}]
    for mark in getattr(function, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [name.strip() for name in names.split(",")] if isinstance(names, str) else list(names)
        rows = [tuple(getattr(value, "values", value)) if len(names) > 1 else (value,) for value in values]
        combinations = [{**done, **dict(zip(names, row, strict=True))} for done in combinations for row in rows]
    return combinations


def _cost(item) -> tuple[bool, bool]:
    """Tests without a board first (the type and memo tests), tests on nearly empty boards last: in plain
    (uncached) code those are the slow searches, and the order does not change whether a test fails."""
    _, _, arguments = item
    boards = [value for value in arguments.values() if isinstance(value, str) and len(value) == 9]
    boards += [
        value[0]
        for value in arguments.values()
        if isinstance(value, tuple) and value and isinstance(value[0], str) and len(value[0]) == 9
    ]
    return bool(boards), max((board.count(" ") for board in boards), default=0) >= 7


def first_visible_failure(visible: VisibleFile, module: types.ModuleType) -> str | None:
    """The id of the first visible test that fails on module (and why), or None when all pass."""
    for test_id, function, arguments in visible.items(module):
        fixtures = {}
        if "monkeypatch" in function.__code__.co_varnames[: function.__code__.co_argcount]:
            fixtures["monkeypatch"] = pytest.MonkeyPatch()
        try:
            how, value = child.timed(SECONDS, functools.partial(function, **arguments, **fixtures))
        finally:
            if fixtures:
                fixtures["monkeypatch"].undo()
        if how != "value":
            why = "too slow" if how == "slow" else type(value).__name__
            return f"{test_id} ({why})"
    return None


# ---------------------------------------------------------------------------------------------------------------
# One mutant: the oracle's verdict, then both suites


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
    # 08_alpha_beta: its pruning is tested by counting calls, so the visible tests (one counts them) and the prune
    # experiment run plain; the answers are judged on the cached module
    prune: bool = False
    memo_contents: dict[str, int] | None = None  # what the memo must hold, when the keys are prescribed (10)


_PREPARED: dict[str, Prepared] = {}


def prepare(stages: list[Stage]) -> None:
    known = oracle()
    for stage in stages:
        if stage.id in _PREPARED:
            continue  # the same for every run in this process
        stage_plan(stage.id)  # and stage_checks: both cached, so the forked workers inherit them
        kinds = {check.kind for check in stage_checks(stage.id)}
        memo = bool(kinds & {"memo-size", "memo-speed"})
        prescribed = [check.memo_contents for check in stage_checks(stage.id) if check.memo_contents is not None]
        # The pruned scoring (score, in 08) is not cached: it must still call alphabeta for the visible test that
        # counts those calls (see _visible_failure); alphabeta is, so it costs no more.
        pruned = {check.function for check in stage_checks(stage.id) if check.kind == "prune"}
        _PREPARED[stage.id] = Prepared(
            stage,
            oracle_calls(stage, known),
            VisibleFile.read(stage),
            tuple(name for name in student_functions(stage) if name not in pruned),
            memo,
            prune="prune" in kinds,
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
        wrong = memo_wrong(module, oracle(), prepared.memo_contents) or first_wrong_call(module, prepared.calls)
        return wrong, first_hidden_failure(stage, plain), first_visible_failure(prepared.visible, plain())
    changed: list[str] = []
    cached = _cached_module(plain(), prepared.functions, changed)
    wrong = first_wrong_call(cached, prepared.calls)
    experiment = plain if prepared.prune else None
    if prepared.prune:
        wrong = wrong or prune_wrong(plain())
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
            return _cached_module(plain(), functions, later)

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


def _cached_module(module: types.ModuleType, functions: tuple[str, ...], changed: list[str]) -> types.ModuleType:
    for name in functions:
        if callable(getattr(module, name, None)):  # a variant may do without a helper the reference has
            _cache(module, name, changed)
    return module


def judge_mutant(mutant: Mutant) -> Verdict:
    start = time.monotonic()
    wrong, hidden, visible = judge_module(_PREPARED[mutant.stage_id], mutant.source)
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


# ---------------------------------------------------------------------------------------------------------------
# The command


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
    prepared, found = _PREPARED[stage.id], []
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
