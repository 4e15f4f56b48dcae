"""The course's grading settings: which stages are assigned and how the bonus stages count.

They live in the course policy file's [grade] table (see examples/course-policy.example.toml), so a course
changes them without editing the package; without a policy file, or without the table, every core stage is
assigned and the bonus is reported apart. The bonus rules:

- "apart" (the default): the bonus stages are graded and shown in their own column; the final grade is the
  core stages' alone.
- "extra": their points are extra credit added to the final grade, at most bonus_cap points in all (every
  bonus point when bonus_cap is left out), so a grade can go above the possible points.
- "off": they are not counted and not shown as owed: a student who skips them sees "not counted", never a
  failure.
"""

from dataclasses import dataclass
from fractions import Fraction

from autograder.course.stages import BONUS_POINTS, STAGE_BY_ID, STAGES

BONUS_RULES = ("apart", "extra", "off")
GRADE_KEYS = {"assigned", "bonus", "bonus_cap"}
CORE_IDS = tuple(stage.id for stage in STAGES if not stage.bonus)
BONUS_IDS = tuple(stage.id for stage in STAGES if stage.bonus)


class SettingsError(Exception):
    """The [grade] table cannot be used (why, in one line)."""


@dataclass(frozen=True)
class CourseSettings:
    assigned: tuple[str, ...] = CORE_IDS  # the core stages that count, in course order
    bonus: str = "apart"  # one of BONUS_RULES
    bonus_cap: Fraction | None = None  # "extra": at most this many bonus points count; None: all of them

    @property
    def possible(self) -> int:
        """The points the final grade is out of: the assigned core stages'."""
        return sum(STAGE_BY_ID[stage_id].points for stage_id in self.assigned)

    def counts(self, stage_id: str) -> str:
        """How a stage counts: "core", "not assigned", "bonus" or "bonus off"."""
        if stage_id in BONUS_IDS:
            return "bonus off" if self.bonus == "off" else "bonus"
        return "core" if stage_id in self.assigned else "not assigned"

    def as_dict(self) -> dict:
        cap = None if self.bonus_cap is None else float(self.bonus_cap)
        return {"assigned": list(self.assigned), "bonus": self.bonus, "bonus_cap": cap}


DEFAULT_SETTINGS = CourseSettings()


def parse_settings(table) -> CourseSettings:
    """The settings in the policy file's [grade] table; SettingsError when they cannot be used."""
    if not isinstance(table, dict):
        raise SettingsError('grade must be a table: [grade] with assigned = [...], bonus = "apart"')
    extra = sorted(set(table) - GRADE_KEYS)
    if extra:
        raise SettingsError(f"unknown key {extra[0]!r} in [grade] (allowed: {', '.join(sorted(GRADE_KEYS))})")
    assigned = table.get("assigned", list(CORE_IDS))
    if not isinstance(assigned, list) or not all(isinstance(stage_id, str) for stage_id in assigned):
        raise SettingsError('grade.assigned must be a list of stage folders, e.g. ["01_rules", "02_count_games"]')
    for stage_id in assigned:
        if stage_id in BONUS_IDS:
            raise SettingsError(f"grade.assigned names the bonus stage {stage_id!r}: the bonus rule says how it counts")
        if stage_id not in CORE_IDS:
            raise SettingsError(f"grade.assigned names no stage of the course: {stage_id!r} ({', '.join(CORE_IDS)})")
    if len(set(assigned)) != len(assigned):
        raise SettingsError("grade.assigned names a stage twice")
    if not assigned:
        raise SettingsError("grade.assigned is empty: a grade needs at least one stage")
    bonus = table.get("bonus", "apart")
    if bonus not in BONUS_RULES:
        raise SettingsError(f"grade.bonus must be one of {', '.join(map(repr, BONUS_RULES))}, not {bonus!r}")
    cap = table.get("bonus_cap")
    if cap is not None:
        if bonus != "extra":
            raise SettingsError(f'grade.bonus_cap is for bonus = "extra" (this course has bonus = {bonus!r})')
        if isinstance(cap, bool) or not isinstance(cap, int | float) or not 0 <= cap <= BONUS_POINTS:
            raise SettingsError(f"grade.bonus_cap must be a number of points from 0 to {BONUS_POINTS}, not {cap!r}")
        cap = Fraction(str(cap))
    ordered = tuple(stage_id for stage_id in CORE_IDS if stage_id in assigned)
    return CourseSettings(ordered, bonus, cap)
