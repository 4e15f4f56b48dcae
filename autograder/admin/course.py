"""`autograde grade --policy FILE --roster FILE --overrides FILE`: the course's files, each checked before
anything is graded, then applied to every student: lateness, then the one final grade (admin/final_grade.py)."""

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from autograder.admin.final_grade import final_grade
from autograder.admin.late import apply_policy
from autograder.admin.overrides import NO_OVERRIDES, Overrides, load_overrides
from autograder.admin.overrides import check_students as check_override_students
from autograder.admin.policy import Policy, check_students, load_policy
from autograder.admin.roster import Roster, load_roster
from autograder.admin.settings import DEFAULT_SETTINGS, CourseSettings
from autograder.grading.shards import shard_of
from autograder.outputs import clean_tree
from autograder.record import FinalGrade, SubmissionResult

MAX_LISTED = 20  # names listed in one note


@dataclass(frozen=True)
class Course:
    """The run's policy, roster and overrides (each may be absent) and where each student's submission is.

    paths: the students this run grades (a shard's, with --shard); everyone: the whole class's names, so a
    roster student is "not submitted" only when no shard has them. hash: the three files' bytes, which every
    shard of one class must share (`autograde merge` checks it).
    """

    policy: Policy | None
    roster: Roster | None
    paths: dict[str, Path]
    overrides: Overrides = NO_OVERRIDES
    everyone: frozenset[str] = frozenset()
    shard: tuple[int, int] | None = None
    hash: str = ""

    @property
    def settings(self) -> CourseSettings:
        return DEFAULT_SETTINGS if self.policy is None else self.policy.settings

    def notes(self) -> list[str]:
        """One line each: roster students with no submission, submissions not in the roster."""
        if self.roster is None:
            return []
        missing, unknown = self.roster.compare(self.everyone or set(self.paths))
        unknown = [name for name in unknown if name in self.paths]
        notes = []
        if missing:
            notes.append(f"{_count(missing)} in the roster with no submission (not submitted): {_names(missing)}")
        if unknown:
            notes.append(f"not in the roster {self.roster.path} (left out of the exports): {_names(unknown)}")
        return notes

    def applied(self, student: str, result: SubmissionResult, files: dict[str, str] | None = None) -> SubmissionResult:
        """The result with what the course makes of it: the policy's lateness, then the final grade (the raw
        scores unchanged).

        files: the intake's Submission.files for the student, when this run read it (see late.apply_policy)."""
        if self.policy is not None and student in self.paths and result.ungraded is None:
            result = dataclasses.replace(
                result, lateness=apply_policy(self.policy, student, self.paths[student], result, files)
            )
        changes, regrades = self.overrides.for_student(student)
        return dataclasses.replace(result, final=final_grade(result, self.settings, changes, regrades))

    def absent(self) -> dict[str, FinalGrade]:
        """The roster's students no shard of the class has, each "not submitted"; with --shard K/N, those that
        fall in shard K, so that every one is recorded by exactly one shard."""
        if self.roster is None:
            return {}
        missing, _ = self.roster.compare(self.everyone or set(self.paths))
        if self.shard is not None:
            missing = [name for name in missing if shard_of(name, self.shard[1]) == self.shard[0]]
        finals = {name: final_grade(None, self.settings, *self.overrides.for_student(name)) for name in missing}
        # cleaned as every graded result is (outputs.results.cleaned): its texts reach the pages and the gradebook
        return {name: FinalGrade.from_dict(clean_tree(final.as_dict())) for name, final in finals.items()}


def load_course(
    policy: Path | None,
    roster: Path | None,
    students: list[tuple[str, Path]],
    overrides: Path | None = None,
    everyone: list[str] | None = None,
    shard: tuple[int, int] | None = None,
    folder_column: str | None = None,
) -> Course:
    """Read and check the three files; PolicyError, RosterError or OverridesError (one line each) before
    anything is graded.

    An extension or override must name a student of the roster when one is given, else of the class (everyone).
    """
    loaded_roster = None if roster is None else load_roster(roster, folder_column)
    loaded_policy = None if policy is None else load_policy(policy)
    loaded_overrides = NO_OVERRIDES if overrides is None else load_overrides(overrides)
    names = set(everyone) if everyone is not None else {name for name, _ in students}
    known, where = names, "the class"
    if loaded_roster is not None:
        known, where = set(loaded_roster.students), f"the roster {loaded_roster.path}"
    if loaded_policy is not None:
        check_students(loaded_policy, known, where)
    check_override_students(loaded_overrides, known | names, where)
    digest = hashlib.sha256()
    for path in (policy, overrides, roster):
        digest.update(b"-" if path is None else hashlib.sha256(path.read_bytes()).digest())
    return Course(
        loaded_policy, loaded_roster, dict(students), loaded_overrides, frozenset(names), shard, digest.hexdigest()
    )


def _count(names: list[str]) -> str:
    return "1 student" if len(names) == 1 else f"{len(names)} students"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
