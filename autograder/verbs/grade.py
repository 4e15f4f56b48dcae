"""`autograde grade SUBMISSIONS --out OUT`: grade a whole class.

The composition: the options (grading/options.py), the class (grading/class_loop.read_class), the course step
(admin/course.py: the policy, roster and overrides, each checked before anything is graded), then the class
loop (grading/class_loop.grade_class), which grades, applies the course step to every result and writes
grades.csv, each student's results.json and feedback.html, the gradebook and report.html.
"""

import importlib
import threading

from autograder.admin.course import load_course
from autograder.admin.overrides import OverridesError
from autograder.admin.policy import PolicyError
from autograder.admin.roster import RosterError
from autograder.course.suite import suite_hash
from autograder.grading import sandbox
from autograder.grading.class_loop import grade_class, read_class
from autograder.grading.interrupt import first_interrupt_sets
from autograder.grading.options import GradeOptions, OptionsError, parse_options
from autograder.grading.submissions import ClassError
from autograder.outputs.command_line import fail
from autograder.outputs.console import RICH_MODULES

PROG = "autograde grade"


def main(argv: list[str] | None = None) -> int:
    try:
        options = parse_options(argv)
    except OptionsError as error:
        return fail(PROG, str(error))
    _import_meanwhile("autograder.outputs.report", *(() if options.quiet else RICH_MODULES))
    detecting = _detect_meanwhile()
    stop = threading.Event()
    try:
        with first_interrupt_sets(stop):
            return _grade(options, stop)
    finally:
        detecting.join()  # its probe run ends before the grader does, whatever ended the run


def _import_meanwhile(*modules: str) -> None:
    """Import the terminal's and the pages' modules (rich, Jinja2, markdown-it, the report's views: a third of a
    class of one's start) in a thread, while this one reads the class and the first children run, which is mostly
    waiting. Whoever needs one first waits for it (Python's lock per module); a failure is left to that import."""

    def imports() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 (raised again where it is imported for use)
                return

    threading.Thread(target=imports, name="import-pages", daemon=True).start()


def _detect_meanwhile() -> threading.Thread:
    """Find the sandbox's level (a probe child, the interpreter's and bubblewrap's versions: mostly waiting on
    processes) in a thread, while this one reads the class and the course's files and hashes the suite. grade_class
    asks for it and waits for the answer if it is not there yet; a level that fails is tried again there, which says
    why."""

    def detect() -> None:
        try:
            sandbox.detect()
        except Exception:  # noqa: BLE001 (raised again where grade_class asks, and reported there)
            pass

    thread = threading.Thread(target=detect, name="detect-sandbox")
    thread.start()
    return thread


def _grade(options: GradeOptions, stop: threading.Event) -> int:
    try:
        found = read_class(options)
    except (ClassError, OSError) as error:
        return fail(PROG, str(error))
    try:
        course = load_course(
            options.policy,
            options.roster,
            found.students,
            options.overrides,
            found.everyone,
            options.shard,
            options.folder_column,
        )
    except (PolicyError, RosterError, OverridesError, OSError) as error:
        return fail(PROG, str(error))
    suite_hash()  # needed next to the sandbox's level, and computed while its thread waits on the probe
    return grade_class(options, found, course, stop)
