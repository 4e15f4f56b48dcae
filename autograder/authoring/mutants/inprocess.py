"""A mutant run in this process: loaded as a fresh module, each call under the grader's CPU budget.

Mutants are our own trusted code, derived from the reference, so they run in-process, without the sandbox; each
call gets a CPU budget (a mutant may loop or recurse without end). A mutant that never changes the board it is
given is a pure function of the board, so its recursive functions are then wrapped in a cache keyed by the board:
the same answers as the plain code, at a fraction of the cost.
"""

import functools
import types

from autograder.course.stages import Stage
from autograder.grading.plan import CALL_SECONDS

SECONDS = CALL_SECONDS  # CPU seconds for one call (or one visible test), as the grader gives one search


def load(stage: Stage, source: str) -> types.ModuleType:
    """source as a fresh module named like the student's (trusted code: our own mutant or variant)."""
    module = types.ModuleType(stage.module)
    module.__file__ = stage.filename
    exec(_compiled(source, stage.filename), module.__dict__)
    return module


@functools.lru_cache(maxsize=4)
def _compiled(source: str, filename: str) -> types.CodeType:
    return compile(source, filename, "exec")


def cached_module(module: types.ModuleType, functions: tuple[str, ...], changed: list[str]) -> types.ModuleType:
    """module with each of functions it has cached on its arguments (see _cache); changed names the ones whose
    calls changed their board."""
    for name in functions:
        if callable(getattr(module, name, None)):  # a variant may do without a helper the reference has
            _cache(module, name, changed)
    return module


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
