"""What grading writes: results.json per student, grades.csv, the summary table and the pages.

Every string that reaches a file, the gradebook or the terminal may come from a submission (names, exception
messages, returned values), so it goes through clean() first: capped, and without the lone surrogates that
UTF-8 encoders (files, SQLite, json with ensure_ascii=False) refuse or the control characters a terminal obeys.
"""

import os
import re
import secrets
from pathlib import Path

MAX_TEXT = 20_000  # any one string of a student's record, once capped where it is built (see results.py)

_SURROGATES = re.compile("[\ud800-\udfff]")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 and C1 controls and DEL; tab and newline stay
_LINE_BREAKS = re.compile("[\t\n\u2028\u2029]")  # what clean() leaves that still breaks a line
_NUMBERS = re.compile("([0-9]+)")


def name_order(name: str) -> tuple:
    """The sort key of students' names everywhere they are listed: as people sort them, the same on any machine.

    Without case, numbers by value (student2 before student10), then by code point to break ties (Ada, ada).
    Numbers compare by length and digits, never converted: a name of 5,000 digits is still a name.
    """
    parts = _NUMBERS.split(name.casefold())  # text, number, text, ...: the same kinds at the same places
    key = tuple(_number(part) if index % 2 else part for index, part in enumerate(parts))
    return key, name


def _number(digits: str) -> tuple[int, str, str]:
    value = digits.lstrip("0")
    return len(value), value, digits


def clean(text, limit: int = MAX_TEXT) -> str:
    """text capped at limit characters (saying how much was cut), lone surrogates shown as U+FFFD, controls dropped."""
    text = str(text)
    if len(text) > limit:  # cut first: cleaning (and everything after) stays proportional to the cap
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"
    elif text.isprintable():  # no surrogate and no control (both unprintable): nothing to do, and it is most text
        return text
    return _CONTROLS.sub("", _SURROGATES.sub("\ufffd", text))


def clean_line(text, limit: int = 500) -> str:
    """clean() for text shown on one line (a name, a reason): line breaks and tabs become spaces."""
    return _LINE_BREAKS.sub(" ", clean(text, limit))


def clean_tree(value):
    """A JSON-like value with every string in it (keys included) passed through clean()."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(key) if isinstance(key, str) else key: clean_tree(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_tree(item) for item in value]
    return value


def write_atomically(path: Path, text: str) -> None:
    """Write text so that a reader (or a crash) never sees half a file.

    The file gets the usual permissions (0666 less the umask, as open() gives): tempfile's 0600 would keep the
    other TAs on a shared server from reading grades.csv.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}"
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def uncreatable(path: Path) -> str | None:
    """Why path could not be created (its nearest existing folder is not a writable folder), or None."""
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{ancestor} is not writable"
    return None
