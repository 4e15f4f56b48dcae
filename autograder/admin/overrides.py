"""The overrides file: the instructor's changes to stage points, and regrade requests with their outcome.

A TOML file kept in the course repository and read on every run (`autograde grade --overrides FILE`), so a
change made once stays made: the next run applies it again instead of undoing it. `autograde override` adds
an entry; editing the file by hand works as well. Two kinds of entry:

    [[overrides]]                  # a change the instructor decided
    student = "alan"               # the submission folder's name (the roster's `folder`)
    stage = "03_minimax"
    excuse = true                  # or: set = 18 (the stage's points become 18), or: adjust = -2 (added)
    reason = "medical note"
    by = "J. Smith"
    on = 2025-02-25

    [[regrades]]                   # a student's request and what came of it
    student = "grace"
    stage = "05_winning_square"
    request = "either square completes a line"
    outcome = "granted"            # "granted" (then one of excuse, set, adjust), "denied" or "pending"
    response = "the hidden check was too strict"
    by = "J. Smith"
    on = 2025-03-10

The file is checked whole before anything is graded: an unknown key, stage or student, a value out of range,
or two changes to one stage of one student is an OverridesError, one line (exit 2).
"""

import json
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from autograder.course.stages import STAGE_BY_ID
from autograder.record import Change, Regrade

ACTIONS = ("excuse", "set", "adjust")
OUTCOMES = ("granted", "denied", "pending")
COMMON_KEYS = {"student", "stage", "by", "on"}
OVERRIDE_KEYS = COMMON_KEYS | {"reason", *ACTIONS}
REGRADE_KEYS = COMMON_KEYS | {"request", "outcome", "response", *ACTIONS}
MAX_OVERRIDES_BYTES = 5_000_000
MAX_TEXT = 1_000  # characters of a reason, request or response


class OverridesError(Exception):
    """The overrides file cannot be used (why, in one line)."""


@dataclass(frozen=True)
class Overrides:
    path: str
    changes: dict[tuple[str, str], Change]  # (student, stage) -> the one change to it
    regrades: tuple[tuple[str, Regrade], ...]  # (student, request), in the file's order

    def for_student(self, student: str) -> tuple[dict[str, Change], tuple[Regrade, ...]]:
        changes = {stage: change for (who, stage), change in self.changes.items() if who == student}
        return changes, tuple(regrade for who, regrade in self.regrades if who == student)

    def students(self) -> set[str]:
        return {who for who, _ in self.changes} | {who for who, _ in self.regrades}


NO_OVERRIDES = Overrides("", {}, ())


def load_overrides(path: Path) -> Overrides:
    """The overrides in the TOML file at path; OverridesError (one line) when it cannot be used."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise OverridesError(f"cannot read the overrides file {path}: {error.strerror or error}") from error
    if len(raw) > MAX_OVERRIDES_BYTES:
        raise OverridesError(f"the overrides file {path} is larger than {MAX_OVERRIDES_BYTES:,} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise OverridesError(f"the overrides file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise OverridesError(f"the overrides file {path} is not valid TOML: {error}") from None
    try:
        return parse_overrides(str(path), data)
    except OverridesError as error:
        raise OverridesError(f"{path}: {error}") from None


def parse_overrides(path: str, data: dict) -> Overrides:
    extra = sorted(set(data) - {"overrides", "regrades"})
    if extra:
        raise OverridesError(f"unknown table {extra[0]!r} (the file holds [[overrides]] and [[regrades]])")
    changes: dict[tuple[str, str], Change] = {}
    regrades = []
    for kind, keys in (("overrides", OVERRIDE_KEYS), ("regrades", REGRADE_KEYS)):
        entries = data.get(kind, [])
        if not isinstance(entries, list):
            raise OverridesError(f"{kind} must be a list of tables: [[{kind}]]")
        for number, entry in enumerate(entries, start=1):
            where = f"{kind} entry {number}"
            if not isinstance(entry, dict):
                raise OverridesError(f"{where} must be a table ([[{kind}]])")
            unknown = sorted(set(entry) - keys)
            if unknown:
                raise OverridesError(f"unknown key {unknown[0]!r} in {where} (allowed: {', '.join(sorted(keys))})")
            student = _text(entry, "student", where)
            where = f"{where} (student {student!r})"
            stage_id = _text(entry, "stage", where)
            if stage_id not in STAGE_BY_ID:
                raise OverridesError(f"{where} names no stage of the course: {stage_id!r} ({', '.join(STAGE_BY_ID)})")
            by, on = _text(entry, "by", where), _date(entry, where)
            if kind == "overrides":
                change = _change(entry, stage_id, _text(entry, "reason", where), by, on, "", where)
            else:
                outcome = entry.get("outcome")
                if outcome not in OUTCOMES:
                    raise OverridesError(f"{where}: outcome must be one of {', '.join(map(repr, OUTCOMES))}")
                request = _text(entry, "request", where)
                response = _text(entry, "response", where, required=False)
                regrades.append((student, Regrade(stage_id, request, outcome, response, by, on)))
                actions = [action for action in ACTIONS if action in entry]
                if outcome != "granted":
                    if actions:
                        raise OverridesError(f"{where}: a {outcome} request changes nothing; leave out {actions[0]}")
                    continue
                change = _change(entry, stage_id, response or "regrade granted", by, on, request, where)
            if (student, stage_id) in changes:
                raise OverridesError(
                    f"{where}: {stage_id} of {student!r} is changed twice; keep one entry with the result"
                )
            changes[(student, stage_id)] = change
    return Overrides(path, changes, tuple(regrades))


def check_students(overrides: Overrides, students: set[str], where: str) -> None:
    """OverridesError for an entry naming a student who is not among students (the roster's or the class's)."""
    for student in sorted(overrides.students()):
        if student not in students:
            raise OverridesError(f"{overrides.path}: an entry names {student!r}, who is not a student of {where}")


def _change(entry: dict, stage_id: str, reason: str, by: str, on: str, request: str, where: str) -> Change:
    actions = [action for action in ACTIONS if action in entry]
    if len(actions) != 1:
        raise OverridesError(f"{where} needs exactly one of excuse = true, set = POINTS or adjust = POINTS")
    action, value = actions[0], entry[actions[0]]
    possible = STAGE_BY_ID[stage_id].points
    if action == "excuse":
        if value is not True:
            raise OverridesError(f"{where}: excuse must be true (leave the entry out to count the stage)")
        return Change(stage_id, "excuse", None, reason, by, on, request)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OverridesError(f"{where}: {action} must be a number of points, not {value!r}")
    low = 0 if action == "set" else -possible
    if not low <= value <= possible:
        raise OverridesError(f"{where}: {action} = {value} is outside {low} to {possible} ({stage_id}'s points)")
    return Change(stage_id, action, float(value), reason, by, on, request)


def _text(entry: dict, key: str, where: str, required: bool = True) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise OverridesError(f'{where} needs {key} = "..." (text)')
    if len(value) > MAX_TEXT:
        raise OverridesError(f"{where}: {key} is longer than {MAX_TEXT} characters")
    return value.strip()


def _date(entry: dict, where: str) -> str:
    value = entry.get("on")
    if isinstance(value, datetime):
        return value.isoformat(timespec="minutes")
    if isinstance(value, date):
        return value.isoformat()
    raise OverridesError(f"{where} needs on = the date it was decided, e.g. on = 2025-03-10")


def entry_text(kind: str, fields: dict) -> str:
    """One [[overrides]] or [[regrades]] entry as TOML, for `autograde override` to append."""
    lines = [f"[[{kind}]]"]
    for key, value in fields.items():
        if isinstance(value, bool):
            shown = "true" if value else "false"
        elif isinstance(value, int | float):
            shown = str(value)
        elif isinstance(value, date):
            shown = value.isoformat()
        else:
            # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped and JSON leaves as it is.
            shown = json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
        lines.append(f"{key} = {shown}")
    return "\n".join(lines) + "\n"
