"""What a run may not read: the course's answers (reference solutions, hidden checks, the oracle, nbgrader's source
notebooks, the git history), the class and OUT (and on Gradescope the submission's metadata, whose earlier results
list hidden tests). At the rlimits level a run sees the machine's files as its uid does, so they are hidden in its
mount namespace (sandbox.hide) and then checked live: a real child of that level tries to open each one, and grading
is refused when any opens (under bubblewrap a run sees none of them, so nothing is tried).
"""

from __future__ import annotations

import json
from pathlib import Path

import autograder
from autograder.course.stages import ROOT, SOLUTIONS
from autograder.grading import sandbox

PACKAGE = Path(autograder.__file__).resolve().parent
_MAX_PROBED = 400

# A hidden file is covered by /dev/null: opening it gives a character device, not its content.
PROBE = b"""
import json, os, stat, sys
readable = []
for path in json.loads(sys.stdin.read()):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            fd = os.open(path, os.O_RDONLY)
            masked = stat.S_ISCHR(os.fstat(fd).st_mode)
            os.close(fd)
            if masked:
                continue
        readable.append(path)
    except OSError:
        pass
os.write(3, json.dumps(readable).encode())
"""


def secrets(*places: Path) -> tuple[list[Path], list[Path]]:
    """(folders to hide, paths to try): the course's answers and the grader, plus places (the class, OUT, ...)."""
    # The whole checkout first (a run needs none of it); where it cannot be covered (it holds the interpreter), the
    # parts that give answers away: the reference solutions, the grader and its checks, the tests, nbgrader's source
    # notebooks (solutions and hidden tests) and the git history (every solution ever committed).
    folders = [ROOT, SOLUTIONS, PACKAGE, ROOT / "tests", ROOT / "nbgrader", ROOT / ".git", *places]
    tried = sorted(SOLUTIONS.glob("*/*.py")) + sorted((PACKAGE / "course").rglob("*.py"))
    tried += sorted((ROOT / "nbgrader").glob("source/*/*.ipynb")) + sorted((ROOT / ".git").glob("objects/pack/*"))
    tried += [folder for folder in (ROOT, ROOT / ".git", *places) if folder.exists()]
    for place in places:
        if place.is_dir():
            tried += sorted(place.iterdir())[:50]  # the students' folders, OUT's results.json and gradebook
    return folders, tried[:_MAX_PROBED]


def problem(isolation: sandbox.Isolation, *places: Path) -> str | None:
    """Why grading must not go on at this level (a run could read a secret), or None. Hides them first."""
    if isolation.level != "rlimits":
        return None
    folders, tried = secrets(*(place.resolve() for place in places))
    sandbox.hide(folders)
    paths = [str(path) for path in tried]
    outcome = sandbox.run({"probe.py": PROBE}, "probe.py", json.dumps(paths).encode(), sandbox.PROBE_LIMITS, isolation)
    try:
        readable = json.loads(outcome.reply) if outcome.status == "exited" else None
    except ValueError:
        readable = None
    if readable is None:
        return f"could not check what student code can read at the rlimits level ({outcome.status}: {outcome.detail})"
    if not readable:
        return None
    shown = ", ".join(readable[:3]) + (f" and {len(readable) - 3} more" if len(readable) > 3 else "")
    return (
        f"refusing to grade: at the rlimits level student code runs as an unprivileged uid that can read {shown} "
        f"(a submission could copy the reference solutions or the hidden checks). Make them unreadable to other "
        f"users (e.g. chmod -R o-rwx {ROOT}, or install the grader under a folder of mode 0700), or make bubblewrap "
        f"work here (`autograde doctor`)"
    )
