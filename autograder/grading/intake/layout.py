"""Where a submission's stage files may be: the names that mark them, and the wrapper folders looked through."""

from autograder.course.stages import STAGES, Stage
from autograder.grading.intake.tree import Tree

MAX_WRAPPERS = 3  # folders around the stage files that are looked through (alice/alice/01_rules/...)
MAX_WRAPPER_CHOICES = 10  # when a level holds several folders, how many are looked into for the stage files


def candidates(stage: Stage) -> list[str]:
    """Where a stage's answer may be, most specific first: nested or flat, module or notebook."""
    names = []
    for folder in (f"{stage.id}/", ""):
        names += [f"{folder}{stage.module}.py", f"{folder}{stage.module}.ipynb", f"{folder}{stage.id}.ipynb"]
    return names


FLAT_NAMES = {name for stage in STAGES for name in candidates(stage) if "/" not in name}
STAGE_FOLDERS = {stage.id for stage in STAGES}


def is_relevant(name: str) -> bool:
    """Does an entry's name say the stage files are at this level (whatever the entry turns out to be)?"""
    return name in FLAT_NAMES or name in STAGE_FOLDERS


def locate(tree: Tree) -> tuple[str, ...]:
    """The folder inside the submission that holds the stage files, looking through wrapper folders.

    The stage files are where a stage module, notebook or folder is named. A level without one, holding
    a single folder (names starting with "." or "_", like __MACOSX, do not count) or several of which
    exactly one has stage files, wraps them (alice.zip holding alice/rules.py): look inside.
    """
    root: tuple[str, ...] = ()
    for _ in range(MAX_WRAPPERS):
        listing = tree.listing(root)
        if any(is_relevant(name) for name in listing):
            return root
        folders = sorted(n for n, kind in listing.items() if kind == "dir" and not n.startswith((".", "_")))
        if len(folders) > 1:
            folders = [f for f in folders[:MAX_WRAPPER_CHOICES] if tree.holds_stage_files(root + (f,))]
        if len(folders) != 1:
            return root
        root += (folders[0],)
    return root
