"""The one place a student's final grade is made: raw points -> course policy -> bonus rule -> changes -> final.

Every output (grades.csv's final column, the terminal, the report, results.json's score, feedback, Gradescope,
the exports) reads the FinalGrade made here and stored in the gradebook with the run; none recomputes it.

Per stage: the raw points, less the late penalty (admin/late.py), then the instructor's change if there is one
(admin/overrides.py: excuse, set or adjust, never below 0 or above the stage's points). Then:
- the core: the assigned stages' points (admin/settings.py); when some are excused, the rest are scaled to the
  assigned points, so an excused stage neither helps nor hurts (72 of 80 counted reads 90 of 100);
- the bonus: added as extra credit up to the cap ("extra"), or reported apart, or not counted ("off").
Every value is rounded half up to 2 decimals once, where it is made.
"""

from decimal import Decimal
from fractions import Fraction

from autograder.admin.policy import round_points
from autograder.admin.settings import CourseSettings
from autograder.course.stages import STAGES
from autograder.outputs.gradesheet import points as points_text  # whole points as 10, others as 52.31
from autograder.record import Change, FinalGrade, Lateness, Regrade, StageGrade, SubmissionResult

CORE = {stage.id for stage in STAGES if not stage.bonus}
ACTION_WORDS = {"excuse": "excused", "set": "set to", "adjust": "adjusted by"}


def cents(value) -> float:
    """value rounded half up to 2 decimals, as the policy rounds its penalties (policy.round_points)."""
    return float(round_points(Fraction(str(value))))


def final_grade(
    result: SubmissionResult | None,
    settings: CourseSettings,
    changes: dict[str, Change] | None = None,
    regrades: tuple[Regrade, ...] = (),
) -> FinalGrade:
    """The final grade of a result (its lateness already applied), or of a student with no submission (None)."""
    changes = changes or {}
    if result is not None and result.ungraded is not None:
        steps = (f"Could not be graded: {result.ungraded}. This is not a grade: the course staff will look.",)
        return FinalGrade("ungraded", 0.0, settings.possible, 0.0, 0.0, 0.0, 0.0, settings.bonus, steps, {}, regrades)
    stages = {stage.id: _stage_grade(stage, result, settings, changes.get(stage.id)) for stage in STAGES}
    core = [grade for grade in stages.values() if grade.counted in ("core", "excused") and grade.stage in CORE]
    counted = [grade for grade in core if grade.counted == "core"]
    raw = cents(sum(Decimal(str(grade.raw)) for grade in core))
    penalty = cents(sum(Decimal(str(grade.penalty)) for grade in core))
    earned = sum(Decimal(str(grade.points)) for grade in counted)
    counted_possible = sum(grade.possible for grade in counted)
    steps = [f"Graded: {points_text(raw)} of {settings.possible} points in the assigned stages."]
    if penalty:
        late = "; ".join(
            f"{grade.stage} −{points_text(grade.penalty)}" for grade in core if grade.penalty and grade.counted
        )
        steps.append(f"Late penalty: −{points_text(penalty)} ({late}).")
    for grade in stages.values():
        for change in grade.changes:
            steps.append(_change_step(change))
    status = "graded" if result is not None else "not submitted"
    if not counted:
        status = "excused" if result is not None else status
        points = 0.0
        steps.append("Every assigned stage is excused: there is no grade to give.")
    elif counted_possible != settings.possible:
        points = cents(earned * settings.possible / counted_possible)
        steps.append(
            f"Excused stages do not count: {points_text(cents(earned))} of {counted_possible} counted, "
            f"scaled to {points_text(points)} of {settings.possible}."
        )
    else:
        points = cents(earned)
    bonus_earned = cents(sum(Decimal(str(g.points)) for g in stages.values() if g.counted == "bonus"))
    bonus = 0.0
    if settings.bonus == "extra" and status == "graded":
        cap = bonus_earned if settings.bonus_cap is None else min(Decimal(str(bonus_earned)), settings.bonus_cap)
        bonus = cents(cap)
        if bonus_earned:
            at_most = "" if settings.bonus_cap is None else f", at most {points_text(float(settings.bonus_cap))}"
            steps.append(f"Bonus: +{points_text(bonus)} extra credit ({points_text(bonus_earned)} earned{at_most}).")
        points = cents(Decimal(str(points)) + Decimal(str(bonus)))
    elif settings.bonus == "apart" and bonus_earned:
        steps.append(f"Bonus: {points_text(bonus_earned)} points, reported apart (not part of the grade).")
    if result is None:
        steps.insert(0, "Not submitted: nothing was handed in.")
    steps.append(f"Final grade: {points_text(points)} of {settings.possible}.")
    bonus_cap = None if settings.bonus_cap is None else float(settings.bonus_cap)
    return FinalGrade(
        status, points, settings.possible, raw, penalty, bonus, bonus_earned, settings.bonus, tuple(steps), stages,
        regrades, bonus_cap,
    )  # fmt: skip


def _stage_grade(stage, result: SubmissionResult | None, settings: CourseSettings, change: Change | None) -> StageGrade:
    if result is None:
        raw, lateness = 0.0, None
    else:
        raw, lateness = result.stages[stage.id].score, (result.lateness or {}).get(stage.id)
    penalty = _penalty(lateness)
    counted = settings.counts(stage.id)
    points = Decimal(str(raw)) - Decimal(str(penalty))
    if counted in ("not assigned", "bonus off"):
        return StageGrade(stage.id, raw, stage.points, penalty, counted, 0.0, ())
    if change is not None:
        if change.action == "excuse":
            return StageGrade(stage.id, raw, stage.points, penalty, "excused", 0.0, (change,))
        value = Decimal(str(change.value))
        points = value if change.action == "set" else points + value
        points = min(max(points, Decimal(0)), Decimal(stage.points))
    return StageGrade(stage.id, raw, stage.points, penalty, counted, cents(points), (change,) if change else ())


def _penalty(lateness: Lateness | None) -> float:
    return 0.0 if lateness is None else lateness.penalty


def _change_step(change: Change) -> str:
    what = ACTION_WORDS[change.action]
    if change.value is not None:
        sign = "+" if change.action == "adjust" and change.value >= 0 else ""
        what = f"{what} {sign}{points_text(change.value)}"
    why = f"regrade request granted: {change.reason}" if change.request else change.reason
    return f"{change.stage} {what} by {change.by} on {change.on}: {why}."
