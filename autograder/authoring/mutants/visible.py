"""Does the visible suite catch a mutant? The stage's own test file, its test functions called here as pytest
would call them, each under the CPU budget of one call."""

import functools
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from autograder.authoring.mutants.inprocess import SECONDS
from autograder.course.stages import Stage
from autograder.grading import child


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
