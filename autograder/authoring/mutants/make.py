"""Making the mutants: every single-point change of the student's part of a reference solution.

A mutant changes one thing between the solution markers: a comparison or arithmetic operator, a constant (an int,
'X', 'O' or ' '), max for min, and for or, a statement deleted (replaced by `pass`) or two neighbouring statements
swapped.
"""

import ast
import copy
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from autograder.authoring.markers import solution_body
from autograder.course import parsing
from autograder.course.stages import Stage

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
    tree = parsing.parse(source)
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


def student_functions(stage: Stage) -> tuple[str, ...]:
    """The functions of the solution that hold a student region (quick_score too, though no test calls it)."""
    source = stage.solution_path.read_text()
    lines = _student_lines(source)
    return tuple(
        node.name
        for node in parsing.parse(source).body
        if isinstance(node, ast.FunctionDef) and any(node.lineno <= line <= node.end_lineno for line in lines)
    )
