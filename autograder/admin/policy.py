"""The course policy file: due dates, a grace period, the late penalty, per-student extensions, and the [grade]
table (which stages are assigned, how the bonus counts: autograder/admin/settings.py).

The file is TOML, kept in the course repository (see course-policy.example.toml for every key). It is read
and checked whole before anything is graded: a file that does not parse, an unknown key or stage, a due date
without a time zone, or an extension for a student the class does not have is a PolicyError, one line.

The arithmetic is in pure functions, exact (datetime differences, Fraction percentages), with one rounding:
- lateness is counted from the due date (the student's extension included) in started units: a submission
  1 minute late is 1 day late with `per = "day"`; a submission within the grace period is not late at all
  (the grace forgives, it does not move the due date);
- the penalty is `percent` of the stage's possible points per started unit, at most `cap` percent; past
  `zero_after` units late the penalty is 100 %;
- the points taken off are rounded half up to 2 decimals, and never exceed the points earned (a stage never
  scores below 0); the final score is the raw score minus them.
"""

import math
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.admin.settings import DEFAULT_SETTINGS, CourseSettings, SettingsError, parse_settings
from autograder.course.stages import STAGE_BY_ID

UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}
TOP_KEYS = {"time_zone", "grace_minutes", "due", "late", "extensions", "collected_by", "grade"}
# Collection tools whose timestamp file the grader believes: the tool writes it after copying what the student
# handed in (nbgrader submit overwrites any timestamp.txt of the student's), so the student cannot choose it.
COLLECTORS = ("nbgrader",)
LATE_KEYS = {"per", "percent", "cap", "zero_after"}
EXTENSION_KEYS = {"student", "stage", "days", "hours", "due"}
CENT = Decimal("0.01")


class PolicyError(Exception):
    """The policy file cannot be used (why, in one line)."""


@dataclass(frozen=True)
class LateRule:
    per: str = "day"  # "day" or "hour"
    percent: Fraction = Fraction(0)  # of the stage's points, per started unit late
    cap: Fraction | None = None  # at most this percent in all
    zero_after: int | None = None  # more units late than this: the stage earns 0


@dataclass(frozen=True)
class Extension:
    student: str
    stage: str | None  # None: every stage
    delay: timedelta = timedelta(0)  # added to the due date ...
    due: datetime | None = None  # ... or a new due date instead

    def describe(self) -> str:
        if self.due is not None:
            return f"until {self.due.isoformat(timespec='minutes')}"
        days, seconds = self.delay.days, self.delay.seconds
        if seconds == 0:
            return f"{days} day{'s' * (days != 1)}"
        hours = int(self.delay.total_seconds() // 3600)
        return f"{hours} hour{'s' * (hours != 1)}"


@dataclass(frozen=True)
class Policy:
    path: str
    due: dict[str, datetime]  # stage id -> its due date (aware); a stage not listed is never late
    grace: timedelta = timedelta(0)
    late: LateRule = field(default_factory=LateRule)
    extensions: tuple[Extension, ...] = ()
    collected_by: str | None = None  # one of COLLECTORS: timestamp.txt is its record; None: no timestamp file counts
    settings: CourseSettings = DEFAULT_SETTINGS  # the [grade] table: assigned stages and the bonus rule

    def extension(self, student: str, stage_id: str) -> Extension | None:
        """The student's extension for the stage: one for that stage, else one for every stage, else None."""
        for wanted in (stage_id, None):
            for extension in self.extensions:
                if extension.student == student and extension.stage == wanted:
                    return extension
        return None

    def due_for(self, student: str, stage_id: str) -> tuple[datetime | None, Extension | None]:
        """The due date that applies to this student's stage, and the extension that made it (or None)."""
        due = self.due.get(stage_id)
        extension = self.extension(student, stage_id)
        if due is None or extension is None:
            return due, None
        return (extension.due if extension.due is not None else due + extension.delay), extension


# ---------------------------------------------------------------------------------------------------------------
# The arithmetic


def late_units(submitted: datetime, due: datetime, grace: timedelta, per: str) -> int:
    """Started units (days or hours) between the due date and the submission; 0 when on time or within grace."""
    late = submitted - due
    if late <= grace or late <= timedelta(0):
        return 0
    whole, rest = divmod(late, UNITS[per])  # exact: timedelta arithmetic in microseconds
    return whole + (rest > timedelta(0))


def penalty_percent(units: int, rule: LateRule) -> Fraction:
    """The share of the stage's points taken off for that many units late, in percent."""
    if units <= 0:
        return Fraction(0)
    if rule.zero_after is not None and units > rule.zero_after:
        return Fraction(100)
    percent = rule.percent * units
    if rule.cap is not None:
        percent = min(percent, rule.cap)
    return min(percent, Fraction(100))


def round_points(value: Fraction) -> Decimal:
    """Round half up to 2 decimals: 1.005 -> 1.01, 2.5 -> 2.50."""
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(CENT, rounding=ROUND_HALF_UP)


def penalty_points(raw: float, possible: int, percent: Fraction) -> Decimal:
    """Points taken off: percent of the possible points, rounded half up to 2 decimals, at most the raw score."""
    earned = Decimal(str(raw))
    return min(round_points(Fraction(possible) * percent / 100), earned)


def final_score(raw: float, possible: int, percent: Fraction) -> Decimal:
    return Decimal(str(raw)) - penalty_points(raw, possible, percent)


# ---------------------------------------------------------------------------------------------------------------
# Reading the file


def load_policy(path: Path) -> Policy:
    """The policy in the TOML file at path; PolicyError (one line) when it cannot be used."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PolicyError(f"cannot read the policy file {path}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise PolicyError(f"the policy file {path} is not UTF-8 text") from error
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"the policy file {path} is not valid TOML: {error}") from error
    try:
        return _policy(str(path), data)
    except PolicyError as error:
        raise PolicyError(f"{path}: {error}") from error


def check_students(policy: Policy, students: set[str], where: str) -> None:
    """PolicyError for an extension to a student who is not among students (the roster's or the class's)."""
    for extension in policy.extensions:
        if extension.student not in students:
            raise PolicyError(f"{policy.path}: the extension for {extension.student!r} names no student in {where}")


def _unknown(table: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise PolicyError(f"unknown key {extra[0]!r} in {where} (allowed: {', '.join(sorted(allowed))})")


def _number(value, where: str, whole: bool = False) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        raise PolicyError(f"{where} must be a {'whole ' if whole else ''}number, not {value!r}")
    if value < 0 or not math.isfinite(value):
        raise PolicyError(f"{where} must be 0 or more, not {value!r}")
    return Fraction(str(value))


def _datetime(value, zone: ZoneInfo | None, where: str) -> datetime:
    """An aware datetime from a TOML offset date-time, or a local one read in the policy's time_zone."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value
        if zone is None:
            raise PolicyError(
                f"{where} = {value.isoformat()} has no time zone: add an offset (e.g. {value.isoformat()}+01:00) "
                'or set time_zone = "Europe/Berlin" at the top of the file'
            )
        return value.replace(tzinfo=zone)
    if isinstance(value, date | time):
        raise PolicyError(f"{where} = {value.isoformat()} needs a date and a time, e.g. 2025-03-07T23:59:00+01:00")
    raise PolicyError(f"{where} must be a date and time, e.g. 2025-03-07T23:59:00+01:00, not {value!r}")


def _stage(stage_id, where: str) -> str:
    if stage_id not in STAGE_BY_ID:
        raise PolicyError(f"{where} names no stage of the course: {stage_id!r} (stages: {', '.join(STAGE_BY_ID)})")
    return stage_id


def _policy(path: str, data: dict) -> Policy:
    _unknown(data, TOP_KEYS, "the policy")
    zone = None
    if "time_zone" in data:
        try:
            zone = ZoneInfo(str(data["time_zone"]))
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise PolicyError(f"time_zone = {data['time_zone']!r} is not a time zone (e.g. 'Europe/Berlin')") from error
    grace = timedelta(minutes=float(_number(data.get("grace_minutes", 0), "grace_minutes")))
    due_table = data.get("due", {})
    if not isinstance(due_table, dict):
        raise PolicyError("due must be a table: [due] then one line per stage, 01_rules = 2025-03-07T23:59:00")
    due = {_stage(stage, "[due]"): _datetime(value, zone, f"due.{stage}") for stage, value in due_table.items()}
    late_table = data.get("late", {})
    if not isinstance(late_table, dict):
        raise PolicyError("late must be a table: [late] with per, percent, cap, zero_after")
    _unknown(late_table, LATE_KEYS, "[late]")
    per = late_table.get("per", "day")
    if per not in UNITS:
        raise PolicyError(f'late.per must be "day" or "hour", not {per!r}')
    cap = late_table.get("cap")
    zero_after = late_table.get("zero_after")
    rule = LateRule(
        per=per,
        percent=_number(late_table.get("percent", 0), "late.percent"),
        cap=None if cap is None else _number(cap, "late.cap"),
        zero_after=None if zero_after is None else int(_number(zero_after, "late.zero_after", whole=True)),
    )
    extensions = data.get("extensions", [])
    if not isinstance(extensions, list):
        raise PolicyError("extensions must be a list of tables: [[extensions]] with student, days (and stage)")
    parsed = tuple(_extension(entry, number, zone) for number, entry in enumerate(extensions, start=1))
    seen = set()
    for extension in parsed:
        key = (extension.student, extension.stage)
        if key in seen:
            which = extension.stage or "every stage"
            raise PolicyError(f"two extensions for {extension.student!r} on {which}")
        seen.add(key)
    collected_by = data.get("collected_by")
    if collected_by is not None and collected_by not in COLLECTORS:
        raise PolicyError(
            f"collected_by = {collected_by!r} is not a collection tool whose timestamp files the grader knows "
            f"({', '.join(map(repr, COLLECTORS))}); leave it out when students hand in their own folders"
        )
    try:
        settings = parse_settings(data.get("grade", {}))
    except SettingsError as error:
        raise PolicyError(str(error)) from None
    return Policy(path, due, grace, rule, parsed, collected_by, settings)


def _extension(entry, number: int, zone: ZoneInfo | None) -> Extension:
    where = f"extension {number}"
    if not isinstance(entry, dict):
        raise PolicyError(f"{where} must be a table ([[extensions]])")
    _unknown(entry, EXTENSION_KEYS, where)
    student = entry.get("student")
    if not isinstance(student, str) or not student:
        raise PolicyError(f'{where} needs student = "<the student\'s folder name>"')
    stage = None if "stage" not in entry else _stage(entry["stage"], f"{where} (student {student!r})")
    given = [key for key in ("days", "hours", "due") if key in entry]
    if len(given) != 1:
        raise PolicyError(f"{where} (student {student!r}) needs exactly one of days, hours or due")
    if "due" in entry:
        return Extension(student, stage, due=_datetime(entry["due"], zone, f"{where}.due"))
    amount = _number(entry[given[0]], f"{where}.{given[0]}")
    delay = timedelta(days=float(amount)) if given[0] == "days" else timedelta(hours=float(amount))
    return Extension(student, stage, delay=delay)
