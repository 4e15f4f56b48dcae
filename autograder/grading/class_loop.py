"""`autograde grade`'s class loop: a class read and checked, then each student's stored result reused or the
submission graded (`--jobs` at a time, behind the fault barrier), finished by the Batch (the course step
applied, written, stored), and the class's outputs written: grades.csv, report.html, the summary.

The verb (verbs/grade.py) composes it: the options, the class (read_class), the course step (admin's Course, as
a CourseStep), then grade_class."""

import sqlite3
import sys
import threading
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading import exposure, sandbox, shards
from autograder.grading.batch import Batch
from autograder.grading.course_step import CourseStep
from autograder.grading.grade import failure_reason, grade_guarded, ungraded
from autograder.grading.intake import repositories
from autograder.grading.interrupt import interrupted, wind_down
from autograder.grading.options import GradeOptions, output_problem, usable_output
from autograder.grading.part import Part, PartError, chosen_part, kept_stages, stored_hash
from autograder.grading.reuse import grading_parameters, why_regraded
from autograder.grading.submissions import Submission, find_class, read_student
from autograder.outputs import clean_line, gradesheet
from autograder.outputs.command_line import fail
from autograder.outputs.folders import GRADES, output_folders
from autograder.outputs.gradebook import Gradebook, GradebookError
from autograder.outputs.gradebook import problem as gradebook_problem
from autograder.record import GradingParameters, SubmissionResult

if TYPE_CHECKING:
    from autograder.outputs.console import Console

MAX_NOTES = 50  # notes about the class folder shown in the terminal and the report


@dataclass(frozen=True)
class ClassList:
    """The students this run grades (a shard's, with --shard), the notes about the class folder, and the whole
    class's names (so a roster student is "not submitted" only when no shard has them)."""

    students: list[tuple[str, Path]]
    notes: list[str]
    everyone: list[str]


def read_class(options: GradeOptions) -> ClassList:
    """SUBMISSIONS' students; ClassError or OSError (one line) when it cannot be graded as a class."""
    found = find_class(options.submissions, options.out)
    students, notes = repositories.class_of(found.students, found.notes, options.at is not None)
    everyone = [name for name, _ in students]
    students, notes = shards.select(students, notes, options.shard)
    return ClassList(students, notes, everyone)


def _fail(message: str) -> int:
    return fail("autograde grade", message)


def grade_class(options: GradeOptions, found: ClassList, course: CourseStep, stop: threading.Event) -> int:
    """Grade the class; the exit status (0, 1 when some could not be graded, 2, 130 when interrupted)."""
    students, notes = found.students, found.notes
    try:
        part = chosen_part([name for name, _ in students], options.students, options.stages)
    except PartError as error:
        return _fail(str(error))
    gradebook_path = options.gradebook
    problem = output_problem(options.out) or gradebook_problem(gradebook_path)
    if problem:
        return _fail(problem)
    try:
        isolation = sandbox.detect()
    except RuntimeError as error:  # e.g. not root and no working bubblewrap, without AUTOGRADE_ISOLATION=none
        return _fail(str(error))
    if stop.is_set():
        return interrupted(0, len(students))
    problem = usable_output(options.out)
    if problem:
        return _fail(problem)
    # At the rlimits level: hide the course, the class and OUT from runs, and refuse if a run could still read them.
    problem = exposure.problem(isolation, options.submissions, options.out, gradebook_path.parent)
    if problem:
        return _fail(problem)
    try:
        book = Gradebook(gradebook_path)
    except (GradebookError, sqlite3.Error, OSError) as error:
        return _fail(str(error))

    from autograder.outputs.console import Console

    console = Console(quiet=options.quiet)
    if isolation.level == "bubblewrap":
        console.say(f"Isolation: {isolation.level} — {isolation.detail}")
    else:  # said even with --quiet: grading without the sandbox is something an instructor must know
        print(f"WARNING: student code runs without the bubblewrap sandbox: {isolation.detail}. "
              "`autograde doctor` explains.", file=sys.stderr)  # fmt: skip
    if len(notes) > MAX_NOTES:  # a folder of junk must not make the report as long as the junk
        notes = [*notes[:MAX_NOTES], f"... and {len(notes) - MAX_NOTES} more entries like these"]
    notes = [clean_line(note) for note in [*notes, *course.notes()]]
    for note in notes:
        console.say(note)
    parameters = grading_parameters(isolation, options.time_limit)
    try:
        run_id = book.start_run(parameters, str(options.submissions.resolve()), course.hash)
    except sqlite3.Error as error:
        return _fail(f"cannot write to the gradebook {gradebook_path}: {error}")
    batch = Batch(options, book, run_id, parameters, isolation, course, output_folders(n for n, _ in students))

    grading = _Grading(options, isolation, stop)
    regrade_lines = _reuse_or_read(options, students, part, book, batch, parameters, console, stop, grading)
    grading.all_added()
    code = _grade_pending(grading, batch, console, stop, len(students))
    if code is not None:
        book.close()
        return code
    absent = course.absent()
    try:
        for name, final in absent.items():
            book.record_absent(run_id, name, final)
        book.finish_run(run_id)
    except sqlite3.Error as error:
        book.close()
        return _fail(f"cannot write to the gradebook {gradebook_path}: {error}")
    book.close()
    return _write_class(options, batch, [*notes, *regrade_lines], absent, console)


def _reuse_or_read(
    options: GradeOptions,
    students: list[tuple[str, Path]],
    part: Part,
    book: Gradebook,
    batch: Batch,
    parameters: GradingParameters,
    console: "Console",
    stop: threading.Event,
    grading: "_Grading",
) -> list[str]:
    """Each student's stored result finished as it is when it can stand, or the submission read and handed to
    grading at once (the first children run while the rest of the class is read).

    Returns the lines saying why results were regraded."""
    regraded: Counter[str] = Counter()
    if not part.whole:
        console.say(part.described(sum(map(part.grades, (name for name, _ in students))), len(students)))
    left_out = []
    for name, path in students:
        if stop.is_set():
            break
        if not part.grades(name):  # not read at all: its latest stored result stands, whatever the files are now
            try:
                stored = book.latest_result(name)
            except Exception as error:
                batch.fail(name, error, "while looking it up in the gradebook")
                continue
            if stored:
                batch.finish_reused(name, *stored)
            else:
                left_out.append(name)
            continue
        try:
            if options.at is None:
                submission = read_student(name, path)
            else:
                submission, commit = repositories.read_at(name, path, options.at)
                if commit is not None:
                    batch.commits[name] = commit
        except Exception as error:
            batch.fail(name, error, "while reading it")
            continue
        batch.files[name] = submission.files
        for stage_id, (was, should) in sorted(submission.renamed.items()):
            console.say(f"{name}: found {was}, graded it as {should} ({stage_id})")
        try:
            stored, reason = None if options.regrade else book.stored(name, submission.files_hash, parameters), None
            taken = None  # the stages --stage takes over from the stored result
            if not part.whole:
                stored, reason = None, None
                previous = book.latest_result(name)
                taken = kept_stages(part, previous[1] if previous else None)
                if taken is not None:
                    consistent = why_regraded(book.latest(name), submission.files_hash, parameters) is None
                    submission.files_hash = stored_hash(submission.files_hash, consistent)
            elif options.regrade:
                reason = "--regrade"
            elif not stored:
                reason = why_regraded(book.latest(name), submission.files_hash, parameters)
        except Exception as error:
            batch.fail(name, error, "while looking it up in the gradebook")
            continue
        if stored:
            batch.finish_reused(name, *stored)
        else:
            grading.add(submission, taken)
            if reason:
                regraded[reason] += 1
    if left_out:
        console.say(
            f"{len(left_out)} students have no stored result yet and are left out: {', '.join(left_out[:5])}"
            + (" ..." if len(left_out) > 5 else "")
            + "; grade them without --student"
        )
    if batch.reused and part.whole:
        console.say(f"{batch.reused} of {len(students)} submissions are unchanged since they were graded: reused.")
    regrade_lines = [f"{count} regraded: {reason}" for reason, count in regraded.most_common()]
    for line in regrade_lines:
        console.say(line)
    return regrade_lines


class _Grading:
    """The grading threads (--jobs of them), given each submission as soon as it is read.

    One submission alone (a --student rerun, a shard of one) has its stages share the cores, so the first one
    waits until a second comes or the class is all read."""

    def __init__(self, options: GradeOptions, isolation: sandbox.Isolation, stop: threading.Event) -> None:
        self.options, self.isolation, self.stop = options, isolation, stop
        self.pool = ThreadPoolExecutor(max_workers=options.jobs, initializer=sandbox.spawning_thread)
        self.futures: dict[Future, Submission] = {}
        self.first: tuple[Submission, dict | None] | None = None

    def add(self, submission: Submission, kept: dict | None) -> None:
        """Grade submission; kept: the stages --stage takes over from its stored result."""
        if self.first is None and not self.futures:
            self.first = (submission, kept)
            return
        if self.first is not None:
            self._submit(*self.first, parallel=1)
            self.first = None
        self._submit(submission, kept, parallel=1)

    def all_added(self) -> None:
        if self.first is not None:
            self._submit(*self.first, parallel=self.options.jobs)
            self.first = None

    def _submit(self, submission: Submission, kept: dict | None, parallel: int) -> None:
        if self.stop.is_set():
            return  # not started: the rerun grades it
        options = self.options
        future = self.pool.submit(
            grade_guarded, submission, self.isolation, options.time_limit, self.stop, kept, parallel
        )
        self.futures[future] = submission


def _grade_pending(
    grading: _Grading, batch: Batch, console: "Console", stop: threading.Event, class_size: int
) -> int | None:
    """Wait for each submission handed to grading, each finished by the batch as it is done, in name order of
    those done together; None when all were, the exit status when the run was interrupted (after winding it down).

    class_size: the students of this run, graded or not, for the line saying how many are stored."""
    pool, futures, isolation, options = grading.pool, grading.futures, grading.isolation, grading.options
    waiting = set(futures)
    with console.progress(len(futures)) as advance:
        while waiting and not stop.is_set():
            done, waiting = wait(waiting, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: futures[f].student):
                if stop.is_set():
                    break  # not stored: its grading may have been cut short; the rerun grades it
                submission = futures[future]
                try:
                    result = future.result()
                except Exception as error:  # the barrier returns results; anything else is one more failure
                    reason = failure_reason(error, "while grading it")
                    result = ungraded(submission.student, reason, isolation, options.time_limit)
                batch.finish_graded(submission, result)
                advance(submission.student)
    if stop.is_set():
        return wind_down(pool, futures, batch.stored, class_size)
    pool.shutdown(wait=True)
    return None


def _write_class(options: GradeOptions, batch: Batch, notes: list[str], absent: dict, console: "Console") -> int:
    """grades.csv, report.html and the summary; 1 when some submission could not be graded, else 0."""
    results = batch.results
    untimed = untimed_notes(results)
    for line in untimed:
        console.say(line)
    gradesheet.write_grades(options.out / GRADES, results)
    from autograder.outputs.report import write_report

    report = write_report(options.out, results, [*notes, *untimed], batch.folders, absent, batch.rows)
    console.summary(results, absent)
    failed = {name: result.ungraded for name, result in results.items() if result.ungraded}
    console.say(
        f"Wrote {options.out / 'grades.csv'}, {report}, and results.json and feedback.html for {len(results)} students."
    )
    for name, reason in sorted(failed.items()):  # said even with --quiet, like the exit status
        print(f"autograde grade: {clean_line(name)} could not be graded: {reason}", file=sys.stderr)
    return 1 if failed else 0


def untimed_notes(results: dict[str, SubmissionResult]) -> list[str]:
    """One line per student with a graded stage whose submission time could not be read: counted on time, flagged."""
    lines = []
    for name, result in results.items():
        stages = result.untimed
        if stages:
            lines.append(
                f"{clean_line(name)}: no submission time could be read for {', '.join(stages)}; "
                "counted on time: check when it was handed in"
            )
    return lines
