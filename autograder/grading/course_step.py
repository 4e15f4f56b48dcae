"""The course's step of the pipeline, as the class loop sees it: what the run's policy, roster and overrides make
of each result (lateness, then the one final grade), the roster's absent students, and notes about the class.

The grading side only calls it; the `autograde grade` verb makes it (admin/course.py's Course) and passes it in,
so grading/ never imports the course's administration."""

from typing import Protocol

from autograder.record import FinalGrade, SubmissionResult


class CourseStep(Protocol):
    @property
    def hash(self) -> str:
        """The course files' bytes, recorded with the run (every shard of one class must share them)."""
        ...

    def notes(self) -> list[str]:
        """One line each about the class as the course sees it (e.g. roster students with no submission)."""
        ...

    def applied(self, student: str, result: SubmissionResult, files: dict[str, str] | None = None) -> SubmissionResult:
        """The result with its lateness and final grade beside the raw scores; files: the intake's, when read."""
        ...

    def absent(self) -> dict[str, FinalGrade]:
        """The final grade of each student the course expects and this run has no submission of."""
        ...
