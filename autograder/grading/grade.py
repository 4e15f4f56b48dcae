"""`autograde grade SUBMISSIONS --out OUT`: grade a whole class.

Data flows one way: submissions.read_student -> judge.grade_stage (sandboxed child, trusted judge: a
StageResult) -> outputs.results.submission_result (the SubmissionResult record) -> OUT/<folder>/results.json
and feedback.html -> gradebook.record -> grades.csv, the summary table and report.html.

A fault barrier stands around each submission: whatever fails while reading, grading, writing or storing
one of them becomes that submission's result ("could not be graded: <reason>", zeros, flagged in the
report, the summary and the exit status), and every other student is graded, stored and written as usual.
"""

import argparse
import dataclasses
import functools
import hashlib
import math
import os
import signal
import sqlite3
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path

from autograder.admin.course import Course, load_course
from autograder.admin.overrides import OverridesError
from autograder.admin.policy import PolicyError
from autograder.admin.roster import RosterError
from autograder.course.stages import ROOT, STAGES
from autograder.grading import exposure, feedback, sandbox, shards
from autograder.grading.intake import repositories
from autograder.grading.judge import DEFAULT_SECONDS, Cancelled, grade_stage
from autograder.grading.judging import fail_all
from autograder.grading.part import PartError, chosen_part, kept_stages, stored_hash
from autograder.grading.submissions import ClassError, Submission, find_class, read_student
from autograder.grading.ungraded import ungraded_result
from autograder.outputs import clean_line, gradesheet, uncreatable, write_atomically
from autograder.outputs.folders import output_folders
from autograder.outputs.gradebook import Gradebook, GradebookError
from autograder.outputs.gradebook import problem as gradebook_problem
from autograder.outputs.report import feedback_html, report_html, write_report
from autograder.outputs.results import cleaned, json_text, submission_result, to_json
from autograder.record import GradingParameters, Outcome, StageResult, SubmissionResult
from autograder.verbs import OneLineParser, fail

# Everything whose change can change a grade (the grader, its hidden checks, the child, the references and the
# visible tests' examples); its hash is stored with each result.
SUITE_FILES = ("autograder/**/*.py", "solutions/*/*.py", "assignments/*/test_*.py")
MAX_TIME_LIMIT = 3600.0  # seconds of CPU per stage; a plain search needs about 10
MAX_JOBS = 256
MAX_NOTES = 50  # notes about the class folder shown in the terminal and the report
INTERRUPTED = 130  # the shell's code for a command stopped by SIGINT


@functools.cache
def suite_hash() -> str:
    digest = hashlib.sha256()
    paths = {path for pattern in SUITE_FILES for path in ROOT.glob(pattern) if "__pycache__" not in path.parts}
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def grader_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tictactoe-minimax-course")
    except PackageNotFoundError:
        return "unknown"


def grading_parameters(isolation: sandbox.Isolation, seconds: float) -> GradingParameters:
    """Everything besides the files that a grade depends on: results.json's extra_data.grading."""
    return GradingParameters(suite_hash(), grader_version(), float(seconds), isolation.level, isolation.cgroups)


class GradingFailure(Exception):
    """Something of the grader's failed on one submission; `where` says at which step."""

    def __init__(self, where: str, error: Exception):
        super().__init__(where)
        self.where, self.error = where, error


def grade_submission(
    submission: Submission,
    isolation: sandbox.Isolation,
    seconds: float = DEFAULT_SECONDS,
    stop: threading.Event | None = None,
    kept: dict[str, StageResult] | None = None,
) -> SubmissionResult:
    """Every stage of one student, each in its own sandboxed child; returns the record of their results.

    kept: stages taken over as they are (from a stored result; --stage grades only the others).
    Raises Cancelled once stop is set (the run was interrupted), GradingFailure when the grader itself failed.
    """
    started = time.perf_counter()
    budget = sandbox.student_budget(seconds)  # wall-clock time for all the stages together, however they use it
    deadline = time.monotonic() + budget
    stages: dict[str, StageResult] = {}
    for stage in STAGES:
        if stop is not None and stop.is_set():
            raise Cancelled(f"interrupted before {stage.id}")
        if kept and stage.id in kept:
            stages[stage.id] = kept[stage.id]
            continue
        if stage.id in submission.problems:
            missing = stage.id in submission.not_submitted
            stages[stage.id] = fail_all(
                stage, Outcome.MISSING if missing else Outcome.ERROR, submission.problems[stage.id]
            )
            continue
        source = submission.sources[stage.id]
        wall_left = deadline - time.monotonic()
        if wall_left <= 0:
            stages[stage.id] = fail_all(stage, Outcome.TIMEOUT, feedback.out_of_budget(budget), phase="import")
            continue
        try:
            result = grade_stage(stage, source.text, isolation, seconds, wall_left)
        except Cancelled:
            raise
        except Exception as error:
            raise GradingFailure(f"while grading {stage.id}", error) from error
        if source.notes:
            result.message = "; ".join(filter(None, [*source.notes, result.message]))
        stages[stage.id] = result
    notes = list(submission.notes)
    for stage_id, result in stages.items():
        if result.message and stage_id not in submission.problems:
            notes.append(f"{stage_id}: {result.message}")
    grading = grading_parameters(isolation, seconds)
    return submission_result(submission.student, stages, isolation, notes, time.perf_counter() - started, grading)


def failure_reason(error: BaseException, where: str) -> str:
    """One line for a failure of the grader's: the step, the exception and where in the grader it was raised."""
    if isinstance(error, GradingFailure):
        where, error = error.where, error.error
    try:
        text = str(error)
    except Exception:  # an exception whose str() fails still gets its type named
        text = ""
    frames = traceback.extract_tb(error.__traceback__)
    place = f" ({Path(frames[-1].filename).name} line {frames[-1].lineno})" if frames else ""
    described = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return clean_line(f"the grader failed {where}: {described}{place}", 500)


def ungraded(student: str, reason: str, isolation: sandbox.Isolation, seconds: float) -> SubmissionResult:
    return ungraded_result(student, reason, isolation, 0.0, grading_parameters(isolation, seconds))


def _grade_guarded(
    submission: Submission, isolation, seconds: float, stop: threading.Event, kept: dict | None = None
) -> SubmissionResult:
    """grade_submission behind the fault barrier (runs in a worker thread)."""
    try:
        return grade_submission(submission, isolation, seconds, stop, kept)
    except Cancelled:
        raise
    except Exception as error:
        if stop.is_set():  # the interruption killed its children: not a fault of the submission
            raise Cancelled("interrupted") from error
        return ungraded(submission.student, failure_reason(error, "while grading it"), isolation, seconds)


def grade_student(
    name: str, path: Path, isolation: sandbox.Isolation, seconds: float = DEFAULT_SECONDS
) -> SubmissionResult:
    """read_student and grade_submission behind the fault barrier: always a record, cleaned and ready to write.

    Gradescope's run grades its one submission through this; the record's ungraded says whether it failed.
    """
    try:
        submission = read_student(name, path)
    except Exception as error:
        return cleaned(ungraded(name, failure_reason(error, "while reading it"), isolation, seconds))
    try:
        result = cleaned(grade_submission(submission, isolation, seconds))
        json_text(to_json(result))  # what cannot be written is a failure too
        return result
    except Exception as error:
        return cleaned(ungraded(name, failure_reason(error, "while grading it"), isolation, seconds))


# ---------------------------------------------------------------------------------------------------------------
# Checks before anything is graded or written


def time_limit_problem(text: str) -> tuple[float | None, str | None]:
    try:
        seconds = float(text)
    except ValueError:
        return None, f"--time-limit must be a number of seconds, not {text!r}"
    if not math.isfinite(seconds) or seconds <= 0:
        return None, f"--time-limit must be a positive number of seconds, not {text}"
    if seconds > MAX_TIME_LIMIT:
        return None, f"--time-limit {text} is too large (at most {MAX_TIME_LIMIT:g} CPU seconds per stage)"
    return seconds, None


def jobs_problem(text: str) -> tuple[int | None, str | None]:
    try:
        jobs = int(text)
    except ValueError:
        return None, f"--jobs must be a whole number, not {text!r}"
    if jobs < 1:
        return None, f"--jobs must be at least 1, not {jobs}"
    if jobs > MAX_JOBS:
        return None, f"--jobs {jobs} is too many (at most {MAX_JOBS})"
    return jobs, None


def output_problem(out: Path) -> str | None:
    """Why OUT could not be written, found without creating anything, or None."""
    if out.exists():
        if not out.is_dir():
            return f"cannot write to {out}: it is not a folder"
        if not os.access(out, os.W_OK | os.X_OK):
            return f"cannot write to {out}: permission denied"
        return None
    why = uncreatable(out)
    return f"cannot write to {out}: {why}" if why else None


def usable_output(out: Path) -> str | None:
    """Create OUT; why it cannot be written, or None."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        return f"cannot write to {out}: {error.strerror or error}"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Ctrl-C


@contextmanager
def first_interrupt_sets(stop: threading.Event):
    """SIGINT sets stop (the batch winds down and says what is stored); a second one leaves at once, quietly."""

    def on_interrupt(signum, frame):
        if stop.is_set():
            sandbox.stop_all(wait=2.0)  # quietly, but not before every run is killed and removed
            os._exit(INTERRUPTED)
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        # After a first Ctrl-C every run is already stopped and the grader is leaving: a second one is ignored.
        # (Python's own handler would not do: the interpreter puts the default back while it shuts down, and a
        # Ctrl-C then would end it by the signal, with no exit code of ours.)
        signal.signal(signal.SIGINT, signal.SIG_IGN if stop.is_set() else previous)


# ---------------------------------------------------------------------------------------------------------------
# The class


def why_regraded(latest: dict | None, files_hash: str, parameters: GradingParameters) -> str | None:
    """Why a student's latest stored result is not the one to reuse, or None when there was none.

    latest: gradebook.latest's files_hash and parameters, None where an older gradebook did not record them.
    """
    if latest is None:
        return None
    if latest["files_hash"] != files_hash:
        return "the files changed"
    if latest["suite"] != parameters.suite:
        return "the grader or its hidden tests changed"
    if latest["time_limit"] is None:  # stored by a grader that recorded only the suite
        return "the stored result does not record its time limit and isolation"
    if latest["grader_version"] != parameters.grader_version:
        return "the grader or its hidden tests changed"
    changes = []
    if latest["time_limit"] != parameters.time_limit:
        changes.append(f"the time limit changed ({latest['time_limit']:g} s -> {parameters.time_limit:g} s)")
    if latest["isolation"] != parameters.isolation:
        changes.append(f"the isolation changed ({latest['isolation']} -> {parameters.isolation})")
    if latest["cgroups"] != parameters.cgroups:
        changes.append(f"the sandbox's cgroups changed ({latest['cgroups']} -> {parameters.cgroups})")
    return " and ".join(changes) or None


class Batch:
    """One run's students: each result cleaned, written, stored, or turned into "could not be graded"."""

    def __init__(
        self,
        out: Path,
        book: Gradebook,
        run_id: int,
        parameters: GradingParameters,
        isolation,
        args,
        course=None,
        folders: dict[str, str] | None = None,
    ):
        self.out, self.book, self.run_id, self.parameters = out, book, run_id, parameters
        self.folders = folders or {}  # student -> their folder under OUT (outputs/folders.py), for the whole class
        self.course: Course = course or Course(None, None, {})
        self.isolation, self.seconds, self.show_hidden = isolation, args.time_limit, args.show_hidden
        self.results: dict[str, SubmissionResult] = {}  # each cleaned, as its results.json was written
        self.commits: dict[str, repositories.Commit] = {}  # --at: the commit each student was graded at
        self.files: dict[str, dict[str, str]] = {}  # the file the intake graded per stage: its time is the one read
        self.stored = self.reused = 0

    def finish(self, name: str, result: SubmissionResult, store: Callable[[SubmissionResult], None] | None) -> None:
        """Write the student's files, then store the result (store None: an ungraded result, never stored).

        Files first: a result the gradebook holds is always one that was written; if storing fails, the files
        are overwritten with the "could not be graded" result.
        """
        try:
            result = cleaned(self.course.applied(name, self._with_commit(name, result), self.files.get(name)))
            if store is not None:
                # Drawn once for this student alone: a result the class report could not draw would stop it.
                report_html({name: result})
        except Exception as error:
            result, store = self._ungraded(name, error, "while rendering its results"), None
        if store is not None:
            try:
                self._write(name, result)
            except Exception as error:
                result, store = self._ungraded(name, error, "while writing its results"), None
        if store is not None:
            try:
                store(result)
                self.stored += 1
            except Exception as error:
                result, store = self._ungraded(name, error, "while storing it in the gradebook"), None
        if store is None:
            try:
                self._write(name, result)
            except Exception:  # e.g. its output folder cannot be made: grades.csv and the report still show it
                pass
        self.results[name] = result

    def _with_commit(self, name: str, result: SubmissionResult) -> SubmissionResult:
        """--at: the commit the files came from, also on a result reused from the gradebook."""
        return dataclasses.replace(result, commit=self.commits[name]) if name in self.commits else result

    def finish_graded(self, submission: Submission, result: SubmissionResult) -> None:
        result = self._with_commit(submission.student, result)  # stored with it, for `autograde merge`
        if result.ungraded is not None:
            self.finish(submission.student, result, None)
            return

        def store(applied: SubmissionResult):  # the raw result, with its lateness and final grade beside it
            self.book.record(self.run_id, submission.student, submission.files_hash, self.parameters, applied)

        self.finish(submission.student, result, store)

    def finish_reused(self, name: str, submission_id: int, result: SubmissionResult) -> None:
        def store(applied: SubmissionResult):
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

    def _write(self, name: str, result: SubmissionResult) -> None:
        folder = self.out / (self.folders.get(name) or output_folders([name])[name])
        write_atomically(folder / "results.json", json_text(to_json(result)))
        write_atomically(folder / "feedback.html", feedback_html(result, self.show_hidden))


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograde grade",
        description="Grade a folder of submissions.",
        epilog=(
            "Exit status: 0 when every submission was graded; 1 when some could not be graded (each is listed "
            "in report.html and on stderr with the reason, with zeros in grades.csv, and is tried again on the "
            "next run); 2 for a wrong option, SUBMISSIONS, OUT or gradebook, or no usable sandbox (nothing is "
            "graded or written); 130 when interrupted by Ctrl-C (what was stored stays; the same command grades "
            "the rest)."
        ),
    )
    parser.add_argument("submissions", type=Path, help="a folder with one folder or .zip per student")
    parser.add_argument("--out", type=Path, required=True, help="where grades.csv and each student's results go")
    parser.add_argument("--gradebook", type=Path, help="the SQLite gradebook (default: OUT/gradebook.db)")
    parser.add_argument(
        "--jobs",
        default=str(min(os.cpu_count() or 1, MAX_JOBS)),
        help=f"students graded at once, 1 to {MAX_JOBS} (default: cores)",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="grade again even when the files and everything else are unchanged"
    )
    parser.add_argument(
        "--time-limit",
        default=str(DEFAULT_SECONDS),
        metavar="SECONDS",
        help="CPU seconds per stage, counted over all of the stage's processes; a wall-clock backstop only stops "
        f"code that waits instead of computing (default: %(default)s, at most {MAX_TIME_LIMIT:g})",
    )
    parser.add_argument(
        "--show-hidden", action="store_true", help="show hidden tests' details on the feedback pages (after publishing)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    parser.add_argument("--policy", type=Path, help="the course policy (TOML): due dates, late penalty, extensions")
    parser.add_argument("--roster", type=Path, help="the class roster (CSV: folder,id,name,email,section)")
    parser.add_argument(
        "--folder-column",
        metavar="NAME",
        help="the roster column naming each submission folder (default: folder; SIS Login ID in a Canvas export)",
    )
    parser.add_argument(
        "--overrides", type=Path, help="the instructor's changes and regrade outcomes (TOML; `autograde override`)"
    )
    parser.add_argument(
        "--student",
        action="append",
        metavar="NAME",
        help="grade only this student again (repeatable); the others keep their stored results",
    )
    parser.add_argument(
        "--stage",
        action="append",
        metavar="ID",
        help="grade only this stage again (3, 03_minimax or minimax; repeatable); the others are taken over",
    )
    parser.add_argument(
        "--at",
        metavar="TIMESTAMP",
        help="git repositories only: grade each as it was at this time (ISO 8601 with a zone), at its last commit "
        "then, without touching its working tree",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only slice K of N (by a hash of each student's name); `autograde merge` combines the N outputs",
    )
    return parser


def _fail(message: str) -> int:
    return fail("autograde grade", message)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.time_limit, problem = time_limit_problem(args.time_limit)
    if problem:
        return _fail(problem)
    args.jobs, problem = jobs_problem(args.jobs)
    if problem:
        return _fail(problem)
    args.at, problem = repositories.parse_at(args.at) if args.at is not None else (None, None)
    if problem:
        return _fail(problem)
    args.shard, problem = shards.parse_shard(args.shard) if args.shard is not None else (None, None)
    if problem:
        return _fail(problem)
    stop = threading.Event()
    with first_interrupt_sets(stop):
        return _grade_class(args, stop)


def _grade_class(args, stop: threading.Event) -> int:
    try:
        found = find_class(args.submissions, args.out)
    except (ClassError, OSError) as error:
        return _fail(str(error))
    try:
        students, notes = repositories.class_of(found.students, found.notes, args.at is not None)
    except ClassError as error:
        return _fail(str(error))
    everyone = [name for name, _ in students]
    students, notes = shards.select(students, notes, args.shard)
    try:
        course = load_course(
            args.policy, args.roster, students, args.overrides, everyone, args.shard, args.folder_column
        )
    except (PolicyError, RosterError, OverridesError, OSError) as error:
        return _fail(str(error))
    try:
        part = chosen_part([name for name, _ in students], args.student, args.stage)
    except PartError as error:
        return _fail(str(error))
    gradebook_path = args.gradebook or args.out / "gradebook.db"
    problem = output_problem(args.out) or gradebook_problem(gradebook_path)
    if problem:
        return _fail(problem)
    try:
        isolation = sandbox.detect()
    except RuntimeError as error:  # e.g. not root and no working bubblewrap, without AUTOGRADE_ISOLATION=none
        return _fail(str(error))
    if stop.is_set():
        return _interrupted(0, len(students))
    problem = usable_output(args.out)
    if problem:
        return _fail(problem)
    # At the rlimits level: hide the course, the class and OUT from runs, and refuse if a run could still read them.
    problem = exposure.problem(isolation, args.submissions, args.out, gradebook_path.parent)
    if problem:
        return _fail(problem)
    try:
        book = Gradebook(gradebook_path)
    except (GradebookError, sqlite3.Error, OSError) as error:
        return _fail(str(error))

    from autograder.outputs.console import Console

    console = Console(quiet=args.quiet)
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
    parameters = grading_parameters(isolation, args.time_limit)
    try:
        run_id = book.start_run(parameters, str(args.submissions.resolve()), course.hash)
    except sqlite3.Error as error:
        return _fail(f"cannot write to the gradebook {gradebook_path}: {error}")
    batch = Batch(args.out, book, run_id, parameters, isolation, args, course, output_folders(n for n, _ in students))

    pending: list[Submission] = []
    kept: dict[str, dict] = {}  # student -> the stages --stage takes over
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
            if args.at is None:
                submission = read_student(name, path)
            else:
                submission, commit = repositories.read_at(name, path, args.at)
                if commit is not None:
                    batch.commits[name] = commit
        except Exception as error:
            batch.fail(name, error, "while reading it")
            continue
        batch.files[name] = submission.files
        for stage_id, (was, should) in sorted(submission.renamed.items()):
            console.say(f"{name}: found {was}, graded it as {should} ({stage_id})")
        try:
            stored, reason = None if args.regrade else book.stored(name, submission.files_hash, parameters), None
            if not part.whole:
                stored, reason = None, None
                previous = book.latest_result(name)
                taken = kept_stages(part, previous[1] if previous else None)
                if taken is not None:
                    kept[name] = taken
                    consistent = why_regraded(book.latest(name), submission.files_hash, parameters) is None
                    submission.files_hash = stored_hash(submission.files_hash, consistent)
            elif args.regrade:
                reason = "--regrade"
            elif not stored:
                reason = why_regraded(book.latest(name), submission.files_hash, parameters)
        except Exception as error:
            batch.fail(name, error, "while looking it up in the gradebook")
            continue
        if stored:
            batch.finish_reused(name, *stored)
        else:
            pending.append(submission)
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

    pool = ThreadPoolExecutor(max_workers=args.jobs)
    futures: dict[Future, Submission] = {}
    if not stop.is_set():
        futures = {
            pool.submit(_grade_guarded, s, isolation, args.time_limit, stop, kept.get(s.student)): s for s in pending
        }
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
                    result = ungraded(submission.student, reason, isolation, args.time_limit)
                batch.finish_graded(submission, result)
                advance(submission.student)
    if stop.is_set():
        code = _wind_down(pool, futures, batch.stored, len(students))
        book.close()
        return code
    pool.shutdown(wait=True)
    absent = course.absent()
    try:
        for name, final in absent.items():
            book.record_absent(run_id, name, final)
        book.finish_run(run_id)
    except sqlite3.Error as error:
        book.close()
        return _fail(f"cannot write to the gradebook {gradebook_path}: {error}")
    book.close()

    results = batch.results
    untimed = untimed_notes(results)
    for line in untimed:
        console.say(line)
    gradesheet.write_grades(args.out / "grades.csv", results)
    report = write_report(args.out, results, [*notes, *regrade_lines, *untimed], batch.folders, absent)
    console.summary(results, absent)
    failed = {name: result.ungraded for name, result in results.items() if result.ungraded}
    console.say(
        f"Wrote {args.out / 'grades.csv'}, {report}, and results.json and feedback.html for {len(results)} students."
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


def _wind_down(pool: ThreadPoolExecutor, futures: dict, stored: int, students: int) -> int:
    """After Ctrl-C: stop every stage, let the workers see it, and say what is stored."""
    sandbox.stop_all()
    pool.shutdown(wait=False, cancel_futures=True)
    running = {future for future in futures if not future.done()}
    deadline = time.monotonic() + 5
    while running and time.monotonic() < deadline:
        running = wait(running, timeout=0.2)[1]
        if running:
            sandbox.stop_all()  # a stage that started just after the first call
    code = _interrupted(stored, students)
    if running:  # a worker that does not end would hold the interpreter's exit: leave now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _interrupted(stored: int, students: int) -> int:
    print(
        f"\ninterrupted: {stored} of {students} submissions are graded and stored; "
        "run the same command again to grade the rest.",
        file=sys.stderr,
    )
    return INTERRUPTED
