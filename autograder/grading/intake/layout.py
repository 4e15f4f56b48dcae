"""Where a submission's stage files may be: the names that mark them, near misses of those names, and the wrapper
folders looked through.

Near misses are accepted, never guessed at: a name that differs from the contract only in letter case, a copy
marker (`rules (1).py`, `rules - Copy.py`), a `.txt` added by an editor, or a stage folder's separators and
leading zero (`1_rules`, `01-rules`) is graded as the name it should have been, with a note saying so. Two near
misses for one module are refused (which one did the student mean?), and an exact name always wins.
"""

import re

from autograder.course.stages import STAGES, Stage
from autograder.grading.intake.tree import Tree

MAX_WRAPPERS = 3  # folders around the stage files that are looked through (alice/alice/01_rules/...)
MAX_WRAPPER_CHOICES = 10  # when a level holds several folders, how many are looked into for the stage files

_COPY_MARKER = re.compile(r"(?:\s*\(\d{1,3}\)|\s*-?\s*copy(?:\s*\(\d{1,3}\))?)$")  # "rules (1)", "rules - copy"
_SEPARATORS = re.compile(r"[\s._-]+")


def candidates(stage: Stage) -> list[str]:
    """Where a stage's answer may be, most specific first: nested or flat, module or notebook."""
    names = []
    for folder in (f"{stage.id}/", ""):
        names += [f"{folder}{stage.module}.py", f"{folder}{stage.module}.ipynb", f"{folder}{stage.id}.ipynb"]
    return names


def file_key(name: str) -> str:
    """A file name as near misses share it: no letter case, no copy marker, no ".txt" after ".py" or ".ipynb"."""
    name = name.casefold()
    if name.endswith((".py.txt", ".ipynb.txt")):
        name = name[:-4]
    stem, dot, extension = name.rpartition(".")
    if not dot:
        return name
    return f"{_COPY_MARKER.sub('', stem)}.{extension}"


def folder_key(name: str) -> str:
    """A stage folder's name as near misses share it: "01_rules", "1-Rules", "01 rules (1)" -> "1_rules"."""
    name = _SEPARATORS.sub("_", _COPY_MARKER.sub("", name.casefold())).strip("_")
    return name.lstrip("0") or name


FLAT_NAMES = {name for stage in STAGES for name in candidates(stage) if "/" not in name}
STAGE_FOLDERS = {stage.id for stage in STAGES}
_NEAR_FILES = {file_key(name) for name in FLAT_NAMES}
_NEAR_FOLDERS = {folder_key(name) for name in STAGE_FOLDERS}


def is_relevant(name: str) -> bool:
    """Does an entry's name say the stage files are at this level (whatever the entry turns out to be)?"""
    return name in FLAT_NAMES or name in STAGE_FOLDERS


def is_near(name: str) -> bool:
    """Is a name a stage file's or folder's, or a near miss of one?"""
    return is_relevant(name) or file_key(name) in _NEAR_FILES or folder_key(name) in _NEAR_FOLDERS


def near_misses(tree: Tree, root: tuple[str, ...], stage: Stage) -> list[tuple[str, str]]:
    """The files that are near misses of a stage's names: [(path as found, the name it should have)], in order.

    Looked for only where an exact name would be: in the stage folder (or a near miss of it) and at root.
    """
    wanted = {file_key(name.rsplit("/", 1)[-1]): name.rsplit("/", 1)[-1] for name in candidates(stage)}
    listing = tree.listing(root)
    key = folder_key(stage.id)
    folders = sorted(name for name, kind in listing.items() if kind == "dir" and folder_key(name) == key)
    found = []
    for folder in [*folders, None]:
        names = tree.listing((*root, folder)) if folder else listing
        for name in sorted(names):
            should = wanted.get(file_key(name))
            if names[name] != "file" or should is None or (folder in (stage.id, None) and name == should):
                continue
            shown = f"{folder}/{name}" if folder else name
            found.append((shown, f"{stage.id}/{should}" if folder else should))
    return found


def locate(tree: Tree) -> tuple[str, ...]:
    """The folder inside the submission that holds the stage files, looking through wrapper folders.

    The stage files are where a stage module, notebook or folder is named (or nearly). A level without one,
    holding a single folder (names starting with "." or "_", like __MACOSX, do not count) or several of which
    exactly one has stage files, wraps them (alice.zip holding alice/rules.py): look inside.
    """
    root: tuple[str, ...] = ()
    for _ in range(MAX_WRAPPERS):
        listing = tree.listing(root)
        if any(is_near(name) for name in listing):
            return root
        folders = sorted(n for n, kind in listing.items() if kind == "dir" and not n.startswith((".", "_")))
        if len(folders) > 1:
            folders = [f for f in folders[:MAX_WRAPPER_CHOICES] if tree.holds_stage_files(root + (f,))]
        if len(folders) != 1:
            return root
        root += (folders[0],)
    return root
