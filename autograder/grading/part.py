"""`autograde grade --student NAME --stage ID`: grade part of a class again; everyone else keeps their stored result.

A part run grades the chosen students (all of them when only --stage is given) afresh, and for --stage only the
chosen stages: the student's other stages are taken over from their latest stored result. Every other student's
latest stored result is taken over as it is, so grades.csv, the report and every results.json are written for
the whole class, the same bytes a full run reusing those results writes.

A result put together from stages graded at different times is stored under its current files' hash only when
the stages taken over were graded from the same files with the same parameters; otherwise under a hash no read
of the files can give, so that the next full run grades that student again, whole.
"""

import dataclasses
import difflib

from autograder.course.stages import STAGES, stage
from autograder.record import StageResult, SubmissionResult

PARTIAL = "partial-"  # starts the stored files_hash of a result whose stages came from different files


class PartError(Exception):
    """A --student or --stage that names nothing in the class or the course (one line, for exit 2)."""


@dataclasses.dataclass(frozen=True)
class Part:
    students: frozenset[str] | None  # None: every student
    stages: frozenset[str] | None  # None: every stage

    @property
    def whole(self) -> bool:
        return self.students is None and self.stages is None

    def grades(self, student: str) -> bool:
        return self.students is None or student in self.students

    def described(self, chosen: int, everyone: int) -> str:
        """One line for the console: what this run grades and what it takes over."""
        who = "every student" if self.students is None else f"{chosen} of {everyone} students"
        what = "every stage" if self.stages is None else "stage " + ", ".join(sorted(self.stages))
        rest = "" if self.students is None else f"; the other {everyone - chosen} keep their stored results"
        return f"Grading part of the class: {what} of {who} (graded again){rest}."


def chosen_part(names: list[str], wanted_students: list[str] | None, wanted_stages: list[str] | None) -> Part:
    """The part of the class that --student and --stage name; PartError for a name that is not there."""
    students = None
    if wanted_students:
        known = set(names)
        for wanted in wanted_students:
            if wanted not in known:
                raise PartError(f"no student called {wanted!r} in SUBMISSIONS{_near(wanted, names)}")
        students = frozenset(wanted_students)
    stages = None
    if wanted_stages:
        try:
            stages = frozenset(stage(name).id for name in wanted_stages)
        except KeyError as error:
            raise PartError(error.args[0]) from None
        if stages == {s.id for s in STAGES}:
            stages = None
    return Part(students, stages)


def _near(wanted: str, names: list[str]) -> str:
    folded = {name.casefold(): name for name in names}
    matches = difflib.get_close_matches(wanted.casefold(), list(folded), n=3, cutoff=0.6)
    if matches:
        return "; did you mean " + " or ".join(folded[match] for match in matches) + "?"
    return f" (it has {len(names)} students; their names are the folders and zips in it)"


def kept_stages(part: Part, previous: SubmissionResult | None) -> dict[str, StageResult] | None:
    """The stages of a chosen student taken over from their latest stored result (None: grade every stage)."""
    if part.stages is None or previous is None or previous.ungraded is not None:
        return None
    return {stage_id: result for stage_id, result in previous.stages.items() if stage_id not in part.stages}


def stored_hash(files_hash: str, consistent: bool) -> str:
    """The files_hash a put-together result is stored under (see the module's docstring)."""
    return files_hash if consistent else PARTIAL + files_hash
