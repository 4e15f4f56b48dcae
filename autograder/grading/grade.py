"""One submission behind the fault barrier: every stage graded in its sandboxed child, and whatever of the
grader's fails on the way (reading, grading, writing) turned into that submission's result.

Data flows one way: submissions.read_student -> judge.grade_stage (sandboxed child, trusted judge: a
StageResult) -> outputs.results.submission_result (the SubmissionResult record). The class loop
(class_loop.py) writes, stores and reports the records of a whole class; Gradescope's run grades its one
submission through grade_student.

The barrier: whatever fails while reading, grading, writing or storing one submission becomes that
submission's result ("could not be graded: <reason>", zeros, flagged in the report, the summary and the exit
status), and every other student is graded, stored and written as usual.
"""

import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.course.stages import STAGES
from autograder.grading import feedback, sandbox
from autograder.grading.judge import Cancelled, grade_stage
from autograder.grading.judging import fail_all
from autograder.grading.reuse import grading_parameters
from autograder.grading.submissions import Submission, read_student
from autograder.grading.ungraded import ungraded_result
from autograder.outputs import clean_line
from autograder.outputs.results import cleaned, json_text, submission_result, to_json
from autograder.record import Outcome, StageResult, SubmissionResult


class GradingFailure(Exception):
    """Something of the grader's failed on one submission; `where` says at which step."""

    def __init__(self, where: str, error: Exception):
        super().__init__(where)
        self.where, self.error = where, error


def grade_submission(
    submission: Submission,
    isolation: sandbox.Isolation,
    seconds: float,
    stop: threading.Event | None = None,
    kept: dict[str, StageResult] | None = None,
    parallel: int = 1,
) -> SubmissionResult:
    """Every stage of one student, each in its own sandboxed child; returns the record of their results.

    seconds: the CPU limit of each stage (--time-limit), which also sets the student's wall-clock budget.
    kept: stages taken over as they are (from a stored result; --stage grades only the others).
    parallel: how many stages may run at once (a class of one on several cores: a Gradescope container); the
    stages share the one wall-clock budget, and the record is the same whichever order they end in.
    Raises Cancelled once stop is set (the run was interrupted), GradingFailure when the grader itself failed.
    """
    started = time.perf_counter()
    budget = sandbox.student_budget(seconds)  # wall-clock time for all the stages together, however they use it
    deadline = time.monotonic() + budget

    def graded(stage) -> StageResult:
        if stop is not None and stop.is_set():
            raise Cancelled(f"interrupted before {stage.id}")
        source = submission.sources[stage.id]
        wall_left = deadline - time.monotonic()
        if wall_left <= 0:
            return fail_all(stage, Outcome.TIMEOUT, feedback.out_of_budget(budget), phase="import")
        try:
            result = grade_stage(stage, source.text, isolation, seconds=seconds, wall_left=wall_left)
        except Cancelled:
            raise
        except Exception as error:
            raise GradingFailure(f"while grading {stage.id}", error) from error
        if source.notes:
            result.message = "; ".join(filter(None, [*source.notes, result.message]))
        return result

    if stop is not None and stop.is_set():
        raise Cancelled("interrupted before its first stage")
    stages: dict[str, StageResult] = {}
    to_run = []
    for stage in STAGES:
        if kept and stage.id in kept:
            stages[stage.id] = kept[stage.id]
        elif stage.id in submission.problems:
            missing = stage.id in submission.not_submitted
            stages[stage.id] = fail_all(
                stage, Outcome.MISSING if missing else Outcome.ERROR, submission.problems[stage.id]
            )
        else:
            to_run.append(stage)
    if parallel > 1 and len(to_run) > 1:
        with ThreadPoolExecutor(max_workers=min(parallel, len(to_run)), initializer=sandbox.spawning_thread) as pool:
            futures = [(stage, pool.submit(graded, stage)) for stage in to_run]
            for stage, future in futures:  # the first failure in stage order is the one raised
                stages[stage.id] = future.result()
    else:
        for stage in to_run:
            stages[stage.id] = graded(stage)
    stages = {stage.id: stages[stage.id] for stage in STAGES}  # in the course's order, however they ended
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


def grade_guarded(
    submission: Submission,
    isolation,
    seconds: float,
    stop: threading.Event,
    kept: dict | None = None,
    parallel: int = 1,
) -> SubmissionResult:
    """grade_submission behind the fault barrier (runs in a worker thread)."""
    try:
        return grade_submission(submission, isolation, seconds, stop, kept, parallel)
    except Cancelled:
        raise
    except Exception as error:
        if stop.is_set():  # the interruption killed its children: not a fault of the submission
            raise Cancelled("interrupted") from error
        return ungraded(submission.student, failure_reason(error, "while grading it"), isolation, seconds)


def grade_student(
    name: str, path: Path, isolation: sandbox.Isolation, seconds: float, parallel: int = 1
) -> SubmissionResult:
    """read_student and grade_submission behind the fault barrier: always a record, cleaned and ready to write.

    Gradescope's run grades its one submission through this, its stages `parallel` at a time; the record's
    ungraded says whether it failed.
    """
    try:
        submission = read_student(name, path)
    except Exception as error:
        return cleaned(ungraded(name, failure_reason(error, "while reading it"), isolation, seconds))
    try:
        result = cleaned(grade_submission(submission, isolation, seconds, parallel=parallel))
        json_text(to_json(result))  # what cannot be written is a failure too
        return result
    except Exception as error:
        return cleaned(ungraded(name, failure_reason(error, "while grading it"), isolation, seconds))
