"""pytest hooks for the visible tests: each failure shows only the lesson, and a stage where everything fails
still fits on a screen.

- A wrong answer shows the visible test's own message (the board, what came back, the answer, what to try),
  without the test's source or pytest's assertion details.
- An error raised inside your module is one line: your file and line, the error, and what to try for that
  kind of error (error_hints.py, the same words the grader uses).
- A function not written yet, a misnamed one, or a module that does not import is one line too.
- The first failures are shown in full, the next ones in one line each, the rest counted.
- A test that runs longer than TEST_SECONDS (a loop that never ends) fails with a sentence saying so, and the
  others still run; once such tests have used OUT_OF_TIME_BUDGET seconds, the rest get AFTER_BUDGET_SECONDS each
  (plenty for all but the whole-game-tree examples), so a stage whose every test loops still finishes within a
  minute. (Where the system has no timer signal, on Windows,
  there is no limit.)

`pytest --tb=long` (or any --tb) shows pytest's own report instead.
"""

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import error_hints
import pytest

MISSING_ATTRIBUTE = re.compile(r"^module '([\w.]+)' has no attribute '(\w+)'")
SHOWN_IN_FULL = 3  # failures shown with their whole message
SHOWN_IN_ONE_LINE = 8  # failures after those shown by their first line; the rest are counted
# pytest appends its own explanation of a failed assert ("assert False", "where False = ...") to the message.
ASSERT_EXPLANATION = re.compile(r"\nassert .*\Z", re.DOTALL)

_taken_over = False  # whether this conftest prints the failures (no --tb given) instead of pytest

# The slowest visible test of a reference solution takes about a second (a whole game tree); ten is room for a
# slower machine and a slower but right solution. COURSE_TEST_SECONDS changes it (a very slow machine).
TEST_SECONDS = float(os.environ.get("COURSE_TEST_SECONDS") or 10)
OUT_OF_TIME_BUDGET = 3 * TEST_SECONDS  # seconds of tests stopped for time in one run; after it the rest get less
AFTER_BUDGET_SECONDS = 0.5
_out_of_time = {"seconds": 0.0, "tests": 0}


class OutOfTime(BaseException):
    """Raised into a test that ran past TEST_SECONDS. Not an Exception, so `except Exception` in a student's
    loop does not swallow it (and the timer fires again every second in case something does)."""


def _limit():
    """The time a test gets now: TEST_SECONDS, or far less once earlier tests have used the budget."""
    return TEST_SECONDS if _out_of_time["seconds"] < OUT_OF_TIME_BUDGET else AFTER_BUDGET_SECONDS


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


def _last_frame_in(filename, entries):
    """The last traceback entry in a file named filename, or None."""
    for entry in reversed(list(entries)):
        if Path(str(entry.path)).name == filename:
            return entry
    return None


def explain_out_of_time(module, excinfo):
    """One sentence for a test stopped for time: the function of your module that was running, and where."""
    entry = _last_frame_in(f"{module}.py", excinfo.traceback)
    what = f"{entry.name} ({_where(entry.path)} line {entry.lineno + 1})" if entry is not None else "the test"
    limit = excinfo.value.args[0] if excinfo.value.args else TEST_SECONDS
    after = " (the time left once earlier tests ran out of it)" if limit < TEST_SECONDS else ""
    return (
        f"{what} did not finish in {limit:g} s{after}: look for a loop that never ends, or a recursion that never "
        "reaches a finished board"
    )


def explain_call_error(module, excinfo):
    """The lesson of a failed test: the test's message, or one line for an error."""
    error = excinfo.value
    if isinstance(error, OutOfTime):
        return explain_out_of_time(module, excinfo)
    if isinstance(error, AttributeError):
        found = MISSING_ATTRIBUTE.match(str(error))
        if found and found.group(1) == module:
            name = found.group(2)
            if name == "memo":
                return f"{module}.py has no memo — it needs a dict named memo at module level (not inside score)"
            return f"{module}.py has no function {name} — check its name"
    entry = _last_frame_in(f"{module}.py", excinfo.traceback)
    if isinstance(error, RecursionError) and entry is not None:
        # The deepest frame may be a helper (to_move); the function that recurses is the one most on the stack.
        names = [one.name for one in excinfo.traceback[-60:] if Path(str(one.path)).name == f"{module}.py"]
        recursing = max(set(names), key=names.count)
        entry = _last_frame_in(f"{module}.py", [one for one in excinfo.traceback if one.name == recursing])
        where = f"{_where(entry.path)} line {entry.lineno + 1}"
        return f"{where}: {recursing} never stops calling itself (RecursionError): {error_hints.RECURSION_ADVICE}"
    if entry is not None:
        if isinstance(error, NotImplementedError):
            return f"{entry.name} is not written yet: replace `raise NotImplementedError()` in {module}.py"
        where = f"{_where(entry.path)} line {entry.lineno + 1}, in {entry.name}"
        return error_hints.one_line(type(error).__name__, _message(error), where)
    if isinstance(error, AssertionError):
        text = _unindent(ASSERT_EXPLANATION.sub("", str(error)).rstrip())
        if text:
            return text
    last = excinfo.traceback[-1] if excinfo.traceback else None
    where = f"{_where(last.path)} line {last.lineno + 1}" if last is not None else ""
    return error_hints.one_line(type(error).__name__, _message(error), where)


def _unindent(text):
    """The test's message as written: pytest indents every line of it after the first by two spaces."""
    first, *rest = text.split("\n")
    if all(line.startswith("  ") or not line.strip() for line in rest):
        rest = [line[2:] for line in rest]
    return "\n".join([first, *rest])


def _message(error):
    try:
        return str(error)
    except Exception:
        return "(the message could not be read)"


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
            said = error_hints.one_line(type(error).__name__, _message(error))
            return f"{_where(path)} line {frame.tb_lineno}: importing {filename} failed with {said}"
    return None


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """Unless --tb was given, print the failures ourselves (pytest_terminal_summary), briefly."""
    global _taken_over
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or config.option.tbstyle != "auto":
        return
    _taken_over = True
    config.option.tbstyle = "no"  # pytest's own failure sections stay silent
    reporter.reportchars = reporter.reportchars.replace("f", "").replace("E", "")  # so do its FAILED lines


def _timer_available():
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Run the test under its limit of wall-clock time (_limit)."""
    if not _timer_available():
        return (yield)
    limit = _limit()

    def out_of_time(signum, frame):
        raise OutOfTime(limit)

    previous = signal.signal(signal.SIGALRM, out_of_time)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, limit, 1.0)
    try:
        return (yield)
    except OutOfTime:
        _out_of_time["seconds"] += time.monotonic() - started
        _out_of_time["tests"] += 1
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _title(item):
    """A test's title as a student reads it: an example's own description (its `why`, without the number pytest
    adds to tell equal ones apart), or the test's name with what it was given."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "why" in params:
        return str(params["why"])
    name = item.originalname.removeprefix("test_").replace("_", " ") if hasattr(item, "originalname") else item.name
    given = [repr(value) if isinstance(value, str) and len(value) == 9 else str(value) for value in params.values()]
    return f"{name} ({', '.join(given)})" if given else name


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.course_title = _title(item)
    # A board the function changed explains the failures around it: it is shown first.
    report.course_first = getattr(item, "originalname", "") == "test_board_is_left_unchanged"
    module = _stage_module(item.path)
    if _taken_over and module and report.failed and call.excinfo is not None:
        line = explain_call_error(module, call.excinfo)
        if line:
            report.longrepr = line
    return report


def pytest_exception_interact(node, call, report):
    """Called for a failed collection too: that is where an import error of your module shows up."""
    module = _stage_module(getattr(node, "path", ""))
    if _taken_over and module and isinstance(report, pytest.CollectReport) and call.excinfo is not None:
        line = explain_import_error(module, call.excinfo.value)
        if line:
            report.longrepr = line


def _name(report):
    """A failure's name as a student reads it: the example's description, or the test's name."""
    if getattr(report, "course_title", None):
        return report.course_title
    if "::" not in report.nodeid:
        return f"loading {Path(report.nodeid).name}"
    test = report.nodeid.split("::")[-1]
    found = re.fullmatch(r"test_example\[(.*)\]", test)
    return found.group(1) if found else test.removeprefix("test_").replace("_", " ")


def _failures(terminalreporter):
    """{message: the names of the failures that gave it}, in the order they failed: one message, said once."""
    grouped = {}
    reports = [report for key in ("error", "failed") for report in terminalreporter.stats.get(key, [])]
    reports.sort(key=lambda report: not getattr(report, "course_first", False))  # stable: otherwise as they failed
    for report in reports:
        if getattr(report, "longrepr", None) is not None:
            grouped.setdefault(str(report.longrepr).strip(), []).append(_name(report))
    return grouped


def _write_failures(terminalreporter):
    grouped = _failures(terminalreporter)
    if not grouped:
        return
    count = sum(len(names) for names in grouped.values())
    terminalreporter.write_sep("=", f"what to fix ({count} failed)")
    for number, (text, names) in enumerate(grouped.items()):
        name = names[0] + (f" (and {len(names) - 1} more with the same message)" if len(names) > 1 else "")
        if number < SHOWN_IN_FULL:
            terminalreporter.write_line(f"\n{number + 1}. {name}")
            terminalreporter.write_line(text)
        elif number < SHOWN_IN_FULL + SHOWN_IN_ONE_LINE:
            if number == SHOWN_IN_FULL:
                terminalreporter.write_line("\nAlso failed:")
            first = text.splitlines()[0] if text else ""
            terminalreporter.write_line(f"  {number + 1}. {name}: {error_hints.shorten(first, 200)}")
    hidden = sum(len(names) for names in list(grouped.values())[SHOWN_IN_FULL + SHOWN_IN_ONE_LINE :])
    if hidden:
        terminalreporter.write_line(f"  ... and {hidden} more: fix the first ones and run again")
    terminalreporter.write_line("")


def pytest_terminal_summary(terminalreporter):
    """The failures, briefly (when no --tb was given); then the file that was tested."""
    if _taken_over:
        _write_failures(terminalreporter)
    tested = set()
    for key in ("passed", "failed"):
        for report in terminalreporter.stats.get(key, []):
            module = _stage_module(report.nodeid.split("::")[0])
            if module and module in sys.modules and module not in tested:
                tested.add(module)
                terminalreporter.write_line(f"tested {module}.py at {_where(sys.modules[module].__file__)}")
