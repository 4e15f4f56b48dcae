"""Can the grader's threads parse students' sources at the same time?

On CPython 3.11 two ast.parse calls at once can fail with "SystemError: AST constructor recursion depth mismatch"
when a garbage collection in the middle of one runs a finalizer (gh-106905); under load a student whose source
was fine was reported as "could not be graded". Here six threads look for tables in every reference while each
makes cyclic garbage with finalizers, as a grading thread's work does: every answer is the serial one.
"""

import sys
import threading

from autograder.course.stages import STAGES
from autograder.grading.intake.cells import ast_of
from autograder.grading.tables import table_look

SOURCES = [stage.solution_path.read_text() for stage in STAGES] + ["memo = {" + ", ".join(map(str, range(200))) + "}"]


class Finalised:
    """Garbage whose finalizer runs Python code: the collector may switch threads while it runs."""

    def __del__(self):
        sum(range(50))


def garbage() -> None:
    ring = [Finalised() for _ in range(50)]
    for this, after in zip(ring, ring[1:] + ring[:1], strict=True):
        this.next = after  # a cycle: only the collector frees it, in the middle of whatever runs next


def test_threads_parse_at_once_and_get_the_serial_answers():
    serial = [(table_look(source, "m.py"), ast_of(source)) for source in SOURCES]
    assert serial[-1][0].startswith("m.py line 1 holds a literal of 200 values")
    answers, errors = [], []

    def grade() -> None:
        try:
            for _ in range(40):
                for source in SOURCES:
                    garbage()
                    answers.append((source, table_look(source, "m.py"), ast_of(source)))
        except SystemError as error:  # what an unguarded parse raises here on CPython 3.11
            errors.append(f"{sys.version.split()[0]}: {error}")

    threads = [threading.Thread(target=grade) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    expected = dict(zip(SOURCES, serial, strict=True))
    assert len(answers) == 6 * 40 * len(SOURCES)
    assert all((look, dump) == expected[source] for source, look, dump in answers)
