"""One run's students as they are finished: each result given its lateness and final grade (the course step),
cleaned, written to OUT/<folder>/ (results.json, feedback.html), stored in the gradebook, or, when any of that
fails, turned into "could not be graded" and written all the same."""

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from autograder.grading import sandbox
from autograder.grading.course_step import CourseStep
from autograder.grading.grade import failure_reason, ungraded
from autograder.grading.intake import repositories
from autograder.grading.options import GradeOptions
from autograder.grading.submissions import Submission
from autograder.outputs import write_atomically
from autograder.outputs.folders import FEEDBACK, RESULTS, output_folders
from autograder.outputs.gradebook import Gradebook
from autograder.outputs.results import cleaned, cleaned_with_json, json_text, to_json
from autograder.record import GradingParameters, SubmissionResult

if TYPE_CHECKING:  # the pages' modules are imported when the first row is drawn
    from autograder.outputs.report.pages import DrawnRow


class Batch:
    """One run's students: each result cleaned, written, stored, or turned into "could not be graded"."""

    def __init__(
        self,
        options: GradeOptions,
        book: Gradebook,
        run_id: int,
        parameters: GradingParameters,
        isolation: sandbox.Isolation,
        course: CourseStep,
        folders: dict[str, str],
    ):
        self.out, self.book, self.run_id, self.parameters = options.out, book, run_id, parameters
        self.folders = folders  # student -> their folder under OUT (outputs/folders.py), for the whole class
        self.course = course  # lateness and the final grade, applied to every result before it is written
        self.isolation, self.seconds, self.show_hidden = isolation, options.time_limit, options.show_hidden
        self.results: dict[str, SubmissionResult] = {}  # each cleaned, as its results.json was written
        self.rows: dict[str, DrawnRow] = {}  # student -> their row of the class report, drawn once from that result
        self.commits: dict[str, repositories.Commit] = {}  # --at: the commit each student was graded at
        self.files: dict[str, dict[str, str]] = {}  # the file the intake graded per stage: its time is the one read
        self.stored = self.reused = 0

    def finish(
        self, name: str, result: SubmissionResult, store: Callable[[SubmissionResult, dict], None] | None
    ) -> None:
        """Write the student's files, then store the result and its results.json tree (store None: an ungraded
        result, never stored).

        Files first: a result the gradebook holds is always one that was written; if storing fails, the files
        are overwritten with the "could not be graded" result.
        """
        row = data = None
        try:
            applied = self.course.applied(name, self._with_commit(name, result), self.files.get(name))
            result, data = cleaned_with_json(applied)
            if store is not None:
                from autograder.outputs.report import row_html  # imported meanwhile (verbs/grade.py _import_meanwhile)

                # Drawn once, here: a result the class report could not draw is this student's fault alone.
                row = row_html(name, result, self.folders)
        except Exception as error:
            result, store = self._ungraded(name, error, "while rendering its results"), None
        if store is not None:
            try:
                self._write(name, result, data)
            except Exception as error:
                result, store = self._ungraded(name, error, "while writing its results"), None
        if store is not None:
            try:
                store(result, data)
                self.stored += 1
            except Exception as error:
                result, store = self._ungraded(name, error, "while storing it in the gradebook"), None
        if store is None:
            try:
                self._write(name, result)
            except Exception:  # e.g. its output folder cannot be made: grades.csv and the report still show it
                pass
        self.results[name] = result
        if store is None:  # not the result drawn: the class report draws the "could not be graded" one itself
            self.rows.pop(name, None)
        else:
            self.rows[name] = row

    def _with_commit(self, name: str, result: SubmissionResult) -> SubmissionResult:
        """--at: the commit the files came from, also on a result reused from the gradebook."""
        return dataclasses.replace(result, commit=self.commits[name]) if name in self.commits else result

    def finish_graded(self, submission: Submission, result: SubmissionResult) -> None:
        result = self._with_commit(submission.student, result)  # stored with it, for `autograde merge`
        if result.ungraded is not None:
            self.finish(submission.student, result, None)
            return

        def store(applied: SubmissionResult, data: dict):  # the raw result, its lateness and final grade beside it
            self.book.record(self.run_id, submission.student, submission.files_hash, self.parameters, applied, data)

        self.finish(submission.student, result, store)

    def finish_reused(self, name: str, submission_id: int, result: SubmissionResult) -> None:
        def store(applied: SubmissionResult, data: dict):
            self.book.reuse(self.run_id, name, submission_id, applied)
            self.reused += 1

        self.finish(name, result, store)

    def _ungraded(self, name: str, error: Exception, where: str) -> SubmissionResult:
        return self.course.applied(
            name, cleaned(ungraded(name, failure_reason(error, where), self.isolation, self.seconds))
        )

    def fail(self, name: str, error: Exception, where: str) -> None:
        """The grader failed on this student before grading (reading it, looking it up): written, never stored."""
        self.finish(name, self._ungraded(name, error, where), None)

    def _write(self, name: str, result: SubmissionResult, data: dict | None = None) -> None:
        """data: to_json(result), when it is at hand."""
        from autograder.outputs.report import feedback_html

        folder = self.out / (self.folders.get(name) or output_folders([name])[name])
        write_atomically(folder / RESULTS, json_text(to_json(result) if data is None else data))
        write_atomically(folder / FEEDBACK, feedback_html(result, self.show_hidden))
