"""`autograde grade --policy FILE --roster FILE`: both files checked before anything is graded, then applied."""

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from autograder.admin.late import apply_policy
from autograder.admin.policy import Policy, check_students, load_policy
from autograder.admin.roster import Roster, load_roster
from autograder.grading.record import SubmissionResult

MAX_LISTED = 20  # names listed in one note


@dataclass(frozen=True)
class Course:
    """The run's policy and roster (either may be None) and where each student's submission is."""

    policy: Policy | None
    roster: Roster | None
    paths: dict[str, Path]

    def notes(self) -> list[str]:
        """One line each: roster students with no submission, submissions not in the roster."""
        if self.roster is None:
            return []
        missing, unknown = self.roster.compare(set(self.paths))
        notes = []
        if missing:
            notes.append(f"{_count(missing)} in the roster with no submission (zeros in exports): {_names(missing)}")
        if unknown:
            notes.append(f"not in the roster {self.roster.path} (left out of the exports): {_names(unknown)}")
        return notes

    def applied(self, student: str, result: SubmissionResult, files: dict[str, str] | None = None) -> SubmissionResult:
        """The result with what the policy makes of it (the raw scores unchanged); itself without a policy.

        files: the intake's Submission.files for the student, when this run read it (see late.apply_policy)."""
        if self.policy is None or student not in self.paths:
            return result
        lateness = apply_policy(self.policy, student, self.paths[student], result, files)
        return dataclasses.replace(result, lateness=lateness)


def load_course(policy: Path | None, roster: Path | None, students: list[tuple[str, Path]]) -> Course:
    """Read and check both files; PolicyError or RosterError (one line each) before anything is graded.

    An extension must name a student of the roster when one is given, else a student of the class.
    """
    loaded_roster = None if roster is None else load_roster(roster)
    loaded_policy = None if policy is None else load_policy(policy)
    if loaded_policy is not None:
        if loaded_roster is not None:
            check_students(loaded_policy, set(loaded_roster.students), f"the roster {loaded_roster.path}")
        else:
            check_students(loaded_policy, {name for name, _ in students}, "the class")
    return Course(loaded_policy, loaded_roster, dict(students))


def _count(names: list[str]) -> str:
    return "1 student" if len(names) == 1 else f"{len(names)} students"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
