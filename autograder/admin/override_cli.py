"""`autograde override FILE ...`: add one change, or one regrade request with its outcome, to the overrides file.

    autograde override FILE --student S --stage ID (--excuse | --set N | --adjust N) --reason TEXT
                            [--by NAME] [--on DATE] [--roster FILE]
    autograde override FILE --regrade --student S --stage ID --request TEXT --outcome granted|denied|pending
                            [--set N | --adjust N | --excuse] [--response TEXT] [--by NAME] [--on DATE]

The entry is appended (admin/overrides.py entry_text) to what FILE already holds, byte for byte, so comments
and entries written by hand stay as they were; FILE is created if missing. Before anything is written the
whole new file is read as `autograde grade --overrides FILE` reads it: when it would not load (an unknown stage,
points out of range, a second change to one stage of one student, a broken file to begin with), the command
refuses in one line, exit 2, and FILE is left unchanged. The new file replaces the old one atomically, and
the folder holding it stays locked from the read to the replace, so two TAs adding entries at once both keep theirs.
"""

import argparse
import contextlib
import fcntl
import getpass
import math
import os
import re
import sys
import tomllib
from datetime import date
from pathlib import Path

from autograder.admin.overrides import (
    ACTIONS,
    MAX_OVERRIDES_BYTES,
    NO_OVERRIDES,
    OUTCOMES,
    Overrides,
    OverridesError,
    entry_text,
    parse_overrides,
)
from autograder.admin.roster import RosterError, load_roster
from autograder.course.stages import stage as find_stage
from autograder.outputs import clean_line, write_atomically
from autograder.outputs.command_line import OneLineParser, fail

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
SURROGATE = re.compile("[\ud800-\udfff]")


class OverrideError(Exception):
    """The entry was refused (why, in one line); FILE is unchanged."""


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograde override",
        description="Add an excuse, a changed score or a regrade request (with its outcome) to the overrides file.",
        epilog="Exit status: 0 when the entry was added; 2 when it was refused (FILE is left as it was).",
    )
    parser.add_argument("file", type=Path, help="the overrides file (TOML), created if missing: course-overrides.toml")
    parser.add_argument(
        "--regrade", action="store_true", help="record a student's regrade request and its outcome ([[regrades]])"
    )
    parser.add_argument("--student", required=True, help="the student's submission folder (the roster's `folder`)")
    parser.add_argument("--stage", required=True, help="the stage: 3, 03_minimax or minimax")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--excuse", action="store_true", help="the stage does not count for this student")
    action.add_argument("--set", metavar="POINTS", help="the stage's points become POINTS (0 to the stage's points)")
    action.add_argument("--adjust", metavar="POINTS", help="add POINTS (negative to take off) to the stage's points")
    parser.add_argument("--reason", help="why (an override needs one; the student reads it)")
    parser.add_argument("--request", help="--regrade: what the student asked")
    parser.add_argument("--outcome", choices=OUTCOMES, help="--regrade: granted (with a change), denied or pending")
    parser.add_argument("--response", help="--regrade: the answer to the student")
    parser.add_argument("--by", help="who decided (default: your login name)")
    parser.add_argument("--on", metavar="YYYY-MM-DD", help="when it was decided (default: today)")
    parser.add_argument("--roster", type=Path, help="check that the student is in this roster (CSV)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    problem = _combination_problem(args)
    if problem:
        parser.error(problem)
    try:
        kind, fields = _entry(args)
        if args.roster is not None:
            _check_roster(args.roster, fields["student"])
        path = args.file.resolve()  # a linked file is updated where it lives, not replaced by a copy
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.parent):
            old, existing = _current(path, args.file)
            _check_not_changed_yet(existing, kind, fields, args.file)
            new = _appended(old, entry_text(kind, fields))
            _check_loads(new, args.file)
            write_atomically(path, new)
    except OverrideError as error:
        return fail("autograde override", str(error))
    except OSError as error:
        reason = f"{error.strerror}: {error.filename}" if error.strerror else error
        return fail("autograde override", f"cannot write {args.file}: {clean_line(str(reason))}")
    print(f"Added to {clean_line(str(args.file))}: {clean_line(_described(kind, fields))}.")
    print(f"Every `autograde grade --overrides {clean_line(str(args.file))}` applies it from now on.")
    return 0


@contextlib.contextmanager
def _locked(folder: Path):
    """folder locked against every other `autograde override` while the file is read, checked and replaced. The
    folder, not the file: the replace gives the file a new inode, which a second command could lock meanwhile."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


def _combination_problem(args) -> str | None:
    """Which options do not belong together (or are missing), in one line; None when they fit."""
    action = _action(args)
    if not args.regrade:
        for flag in ("request", "outcome", "response"):
            if getattr(args, flag) is not None:
                return f"--{flag} is for a regrade request: add --regrade"
        if action is None:
            return "say what changes: --excuse, --set POINTS or --adjust POINTS"
        if args.reason is None:
            return "--reason TEXT is required: the student reads why their points changed"
        return None
    if args.reason is not None:
        return "a regrade's answer to the student is --response, not --reason"
    if args.request is None or args.outcome is None:
        return "--regrade needs --request TEXT (what the student asked) and --outcome granted|denied|pending"
    if args.outcome == "granted" and action is None:
        return "a granted request changes the stage: add --excuse, --set POINTS or --adjust POINTS"
    if args.outcome != "granted" and action is not None:
        return f"a {args.outcome} request changes nothing: leave out --{action}"
    return None


def _action(args) -> str | None:
    if args.excuse:
        return "excuse"
    return next((name for name in ACTIONS[1:] if getattr(args, name) is not None), None)


def _entry(args) -> tuple[str, dict]:
    """The entry's kind ("overrides" or "regrades") and its fields, in the order they are written."""
    student = _text(args.student, "--student")
    try:
        stage_id = find_stage(args.stage.strip()).id
    except KeyError as error:
        raise OverrideError(error.args[0]) from None
    fields: dict = {"student": student, "stage": stage_id}
    action = _action(args)
    change = {} if action is None else {action: True if action == "excuse" else _points(getattr(args, action), action)}
    if args.regrade:
        fields["request"] = _text(args.request, "--request")
        fields["outcome"] = args.outcome
        fields.update(change)
        if args.response is not None:
            fields["response"] = _text(args.response, "--response")
        kind = "regrades"
    else:
        fields.update(change)
        fields["reason"] = _text(args.reason, "--reason")
        kind = "overrides"
    fields["by"] = _text(args.by if args.by is not None else _login(), "--by")
    fields["on"] = _date(args.on)
    return kind, fields


def _text(value: str, flag: str) -> str:
    """value, stripped; OverrideError when it is empty or cannot be written as UTF-8 (a lone surrogate).

    A command line whose bytes are not UTF-8 arrives with each such byte as a lone surrogate (Python's
    surrogateescape), which no TOML file can hold. Quotes, newlines and control characters are fine: entry_text
    escapes them.
    """
    found = SURROGATE.search(value)
    if found:
        code = ord(found.group(0))
        byte = f" (byte 0x{code - 0xDC00:02x})" if 0xDC80 <= code <= 0xDCFF else ""
        raise OverrideError(f"{flag} is not UTF-8 text{byte}: write it in UTF-8 (is the terminal's locale UTF-8?)")
    value = value.strip()
    if not value:
        raise OverrideError(f"{flag} is empty")
    return value


def _points(text: str, action: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise OverrideError(f"--{action} must be a number of points, not {text!r}") from None
    if not math.isfinite(value):
        raise OverrideError(f"--{action} must be a number of points, not {text!r}")
    return int(value) if value.is_integer() else value


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no LOGNAME/USER and no passwd entry (some containers)
        raise OverrideError("cannot tell who you are here: give --by NAME") from None


def _date(text: str | None) -> date:
    if text is None:
        return date.today()
    try:
        if not ISO_DATE.fullmatch(text.strip()):
            raise ValueError
        return date.fromisoformat(text.strip())
    except ValueError:
        raise OverrideError(f"--on must be a date as YYYY-MM-DD, e.g. 2025-03-10, not {text!r}") from None


def _check_roster(roster: Path, student: str) -> None:
    try:
        loaded = load_roster(roster)
    except RosterError as error:
        raise OverrideError(str(error)) from None
    if student not in loaded.students:
        raise OverrideError(f"{student!r} is not in the roster {roster} (its `folder` column)")


def _current(path: Path, shown: Path) -> tuple[str, Overrides]:
    """FILE's text ("" when it does not exist yet) and its entries; OverrideError when it is unusable already."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "", NO_OVERRIDES
    except OSError as error:
        raise OverrideError(f"cannot read {shown}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise OverrideError(f"{shown} is not UTF-8 text; nothing was added") from None
    try:
        return text, parse_overrides(str(shown), tomllib.loads(text))
    except (tomllib.TOMLDecodeError, OverridesError) as error:
        raise OverrideError(f"{shown} has a problem already ({error}): fix it first; nothing was added") from None


def _check_not_changed_yet(existing: Overrides, kind: str, fields: dict, shown: Path) -> None:
    """A second change to one stage of one student is refused: the file keeps one, with its reason."""
    if kind == "regrades" and fields["outcome"] != "granted":
        return
    earlier = existing.changes.get((fields["student"], fields["stage"]))
    if earlier is not None:
        raise OverrideError(
            f"{shown} already changes {fields['stage']} of {fields['student']!r} ({earlier.action}, "
            f"by {earlier.by} on {earlier.on}): edit that entry by hand, so the file keeps one change per stage"
        )


def _appended(old: str, entry: str) -> str:
    """old with entry after it, a blank line between, in the file's own line endings."""
    newline = "\r\n" if "\r\n" in old else "\n"
    if old and not old.endswith("\n"):
        old += newline
    separator = newline if old.strip() else ""
    return old + separator + entry.replace("\n", newline)


def _check_loads(text: str, shown: Path) -> None:
    """The new file must load as grading will load it (admin/overrides.py), or nothing is written."""
    if len(text.encode("utf-8")) > MAX_OVERRIDES_BYTES:
        raise OverrideError(f"{shown} would be larger than {MAX_OVERRIDES_BYTES:,} bytes")
    try:
        parse_overrides(str(shown), tomllib.loads(text))
    except tomllib.TOMLDecodeError as error:  # entry_text writes valid TOML; this is the last guard
        raise OverrideError(f"the new entry would not be valid TOML ({error})") from None
    except OverridesError as error:
        raise OverrideError(f"{shown}: {error}") from None


def _described(kind: str, fields: dict) -> str:
    who = f"{fields['student']}'s {fields['stage']}"
    change = next((key for key in ACTIONS if key in fields), None)
    what = {"excuse": "excused", "set": f"set to {fields.get('set')}", "adjust": f"adjusted by {fields.get('adjust')}"}
    if kind == "overrides":
        return f"{who} {what[change]} ({fields['reason']}), by {fields['by']} on {fields['on']}"
    decided = f", {what[change]}" if change else ""
    return f"regrade request on {who} {fields['outcome']}{decided}, by {fields['by']} on {fields['on']}"


if __name__ == "__main__":
    sys.exit(main())
