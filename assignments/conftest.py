"""pytest hooks for the visible tests: say in one line what to do when a function is not written yet, is
misnamed, never stops recursing, or when your module does not import at all, instead of showing a traceback.

Every other failure (a wrong answer) keeps pytest's usual report, with a message that draws the board.
"""

import os
import re
import sys
from pathlib import Path

import pytest

MISSING_ATTRIBUTE = re.compile(r"^module '([\w.]+)' has no attribute '(\w+)'")


def _stage_module(path):
    """The module a test file checks: test_rules.py checks rules."""
    name = Path(str(path)).name
    if name.startswith("test_") and name.endswith(".py"):
        return name[len("test_") : -len(".py")]
    return None


def _where(filename):
    """A file name as short as it can be and still be found from where pytest was started."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return str(filename)
    return str(filename) if relative.startswith("..") else relative


def explain_call_error(module, excinfo):
    """One line for an exception raised while a test called your function, or None to keep the usual report."""
    error = excinfo.value
    if isinstance(error, NotImplementedError):
        entry = excinfo.traceback[-1]
        return f"{entry.name} is not written yet: replace `raise NotImplementedError()` in {Path(str(entry.path)).name}"
    if isinstance(error, AttributeError):
        found = MISSING_ATTRIBUTE.match(str(error))
        if found and found.group(1) == module:
            name = found.group(2)
            if name == "memo":
                return f"{module}.py has no memo — it needs a dict named memo at module level (not inside score)"
            return f"{module}.py has no function {name} — check its name"
    if isinstance(error, RecursionError):
        names = [entry.name for entry in excinfo.traceback[-50:]]
        function = max(set(names), key=names.count) if names else "your function"
        return (
            f"{function} never stops calling itself (RecursionError): return before recursing when the board is "
            "finished, and make each call work on a board with one more mark"
        )
    return None


def explain_import_error(module, error):
    """One line for a module that could not be imported, or None if the problem is not in your module."""
    if isinstance(error, pytest.Collector.CollectError) and error.__cause__ is not None:
        error = error.__cause__
    filename = f"{module}.py"
    if isinstance(error, SyntaxError) and error.filename and Path(error.filename).name == filename:
        return (
            f"{_where(error.filename)} line {error.lineno}: {type(error).__name__}: {error.msg} — fix it and run again"
        )
    if isinstance(error, ModuleNotFoundError) and error.name == module:
        return f"{filename} not found: keep {filename} in the same folder as test_{module}.py, with that exact name"
    frames = []
    traceback = error.__traceback__
    while traceback is not None:
        frames.append(traceback)
        traceback = traceback.tb_next
    for frame in reversed(frames):
        path = frame.tb_frame.f_code.co_filename
        if Path(path).name == filename:
            return (
                f"{_where(path)} line {frame.tb_lineno}: importing {filename} failed with "
                f"{type(error).__name__}: {error}"
            )
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    module = _stage_module(item.path)
    if module and report.failed and call.excinfo is not None:
        line = explain_call_error(module, call.excinfo)
        if line:
            report.longrepr = line
    return report


def pytest_exception_interact(node, call, report):
    """Called for a failed collection too: that is where an import error of your module shows up."""
    module = _stage_module(getattr(node, "path", ""))
    if module and isinstance(report, pytest.CollectReport) and call.excinfo is not None:
        line = explain_import_error(module, call.excinfo.value)
        if line:
            report.longrepr = line


def pytest_terminal_summary(terminalreporter):
    """Name the file that was tested, so you know which copy of your module the results are about."""
    tested = set()
    for key in ("passed", "failed"):
        for report in terminalreporter.stats.get(key, []):
            module = _stage_module(report.nodeid.split("::")[0])
            if module and module in sys.modules and module not in tested:
                tested.add(module)
                terminalreporter.write_line(f"tested {module}.py at {_where(sys.modules[module].__file__)}")
