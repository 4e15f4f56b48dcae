"""The visible tests, as the grader judges them: the EXAMPLES table of each stage's visible test file.

The table is read with ast.literal_eval from the course's own test file (trusted, never the student's),
so students and grader work from the same examples. Right answers still come from the oracle.
"""

import ast
from typing import Any

from autograder.course import parsing
from autograder.course.checks import Check, case
from autograder.course.oracle import Oracle
from autograder.course.stages import Stage

VISIBLE_POINTS_PER_FUNCTION = 1


def examples(stage: Stage) -> list[tuple[str, tuple, Any, str]]:
    """The rows of the stage's EXAMPLES table: (function, args, expected, why)."""
    if not stage.test_path.exists():
        return []
    tree = parsing.parse(stage.test_path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXAMPLES" for t in node.targets):
            return ast.literal_eval(node.value)
    return []


def expected(oracle: Oracle, function: str, args: tuple) -> set:
    """The right answers for one call, as the function's contract (course/stages.py) says they come."""
    answer = oracle.answer(function, tuple(args[0]), *args[1:])
    return answer if isinstance(answer, set) else {_hashable(answer)}


def _hashable(answer):
    return tuple(answer) if isinstance(answer, list) else answer


def visible_checks(stage: Stage, oracle: Oracle) -> list[Check]:
    """One visible check per function of the stage, over that function's rows of EXAMPLES."""
    rows = examples(stage)
    checks = []
    for function in stage.functions:
        cases = [
            case(args[0], *args[1:], accept=expected(oracle, function, args)) for f, args, _, _ in rows if f == function
        ]
        if cases:
            checks.append(
                Check(
                    id=f"{function}/examples",
                    function=function,
                    title=f"{function} on the worked examples of the visible tests",
                    points=VISIBLE_POINTS_PER_FUNCTION,
                    visible=True,
                    cases=cases,
                    hint=f"Run `pytest assignments/{stage.id}` to see these examples one by one.",
                )
            )
    return checks
