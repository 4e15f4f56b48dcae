"""Where each student's files go: one folder name per student under OUT (and DEST), safe on every disk.

Every verb that turns a student's name into a path asks here (grade, merge, the report's links, publish), and
every name any verb writes at the top of OUT or DEST is listed here (RESERVED), so a student named
`tournament.json` or `similar.html` can never take the place of a run's own file. A folder name is

- the student's name, when nothing below applies;
- "_" + the name for a name that starts with "." or that a disk could take for a reserved name (find_class
  never lists a name that starts with "_", so this is no other student's folder);
- the name + "~" + 10 hex digits of the SHA-256 of the name when a disk that ignores case or Unicode form
  (exFAT, FAT, APFS, NTFS, ext4 with casefold) could take it for a classmate's: `ADA` beside `ada`, `é` in NFC
  beside NFD, `STRASSE` beside `straße`, fullwidth letters. Of such a group, a name that is already in folded
  form keeps its plain folder (`ada`); every other gets the suffix (`ADA~9f86d081...`);
- with "_" for each character FAT, exFAT or NTFS refuse (`\\ : * ? " < > |`), + "~" + the hash;
- cut to MAX_FOLDER_BYTES of UTF-8 (at a character) + "~" + the hash when it is longer: filesystems allow 255
  bytes per name, and DEST's temporary names and zips add a few.

The result is the same for the same class, whatever the order, and distinct after folding.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

# The files of a run, named here once: OUT/grades.csv, OUT/report.html and OUT/gradebook.db, and in each student's
# folder results.json and feedback.html.
GRADES = "grades.csv"
REPORT = "report.html"
GRADEBOOK = "gradebook.db"
RESULTS = "results.json"
FEEDBACK = "feedback.html"
# Every file or folder a verb writes at the top of OUT (grade, merge, similar, tournament, stats' inputs) or of
# DEST (publish: one folder or zip per student). A verb that adds an output adds its name here.
RESERVED = frozenset(
    {
        GRADES,
        REPORT,
        GRADEBOOK,
        f"{GRADEBOOK}-wal",
        f"{GRADEBOOK}-shm",
        f"{GRADEBOOK}-journal",
        "tournament.html",
        "tournament.json",
        "similar.html",
        RESULTS,
        FEEDBACK,
    }
)
MAX_FOLDER_BYTES = 200  # of a folder's name: 255 per name on every common filesystem, less room for DEST's extras
HASH_DIGITS = 10
# What FAT, exFAT and NTFS refuse in a name (Linux takes them all but "/"); a name shown with backslash
# escapes (printable()) holds "\\".
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]')


def fold(name: str) -> str:
    """The name as a disk that ignores case and Unicode form may see it (NFKC case folding; trailing dots and
    spaces dropped, as FAT and NTFS drop them). Two names with one fold may be one folder."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return folded.rstrip(". ")


def _reserved(name: str) -> bool:
    return fold(name) in _RESERVED_FOLDS or name.startswith(".") or not name


_RESERVED_FOLDS = frozenset(fold(name) for name in RESERVED)


def _suffixed(name: str, key: str) -> str:
    """name cut to fit MAX_FOLDER_BYTES with "~" + hash(key); never ends with a dot or a space."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    room = MAX_FOLDER_BYTES - 1 - HASH_DIGITS
    cut = name.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return f"{cut}~{digest}"


def output_folders(names: Iterable[str]) -> dict[str, str]:
    """Each name -> its folder name, distinct after folding; the same mapping for the same set of names."""
    names = sorted(set(names), key=lambda name: name.encode("utf-8", "surrogatepass"))
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(fold(name), []).append(name)
    folders: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        folder = "_" + name if _reserved(name) else name
        shared = len(groups[fold(name)]) > 1
        unsafe = _UNSAFE.search(folder) is not None
        if shared and name != fold(name) or unsafe or len(folder.encode("utf-8", "surrogatepass")) > MAX_FOLDER_BYTES:
            folder = _suffixed(_UNSAFE.sub("_", folder), name)
        folders[name] = folder
    # A folder could still fold like another one (a name crafted as `ada~<the hash of ADA>`): add a further
    # hash, in a fixed order, until every folder is distinct.
    for name in names:
        folder = folders[name]
        round_ = 0
        while fold(folder) in taken:
            round_ += 1
            folder = _suffixed(folders[name], f"{name}\0{round_}")
        folders[name] = folder
        taken.add(fold(folder))
    return folders


def blocked_output(out: Path, name: str) -> str | None:
    """Why a verb cannot write its file OUT/name (a folder or link there, e.g. a student's folder an older grader
    made for a student named like it), in one line; None when it can. Asked before any work is done."""
    path = out / name
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return f"{path} is in the way: it is not a file (a student's folder of that name?); move it elsewhere first"
    return None


def clashes(names: Iterable[str]) -> list[list[str]]:
    """Groups of names that would be one folder on a disk that ignores case or Unicode form, each sorted."""
    groups: dict[str, list[str]] = {}
    for name in sorted(names):
        groups.setdefault(fold(name), []).append(name)
    return [group for group in groups.values() if len(group) > 1]
