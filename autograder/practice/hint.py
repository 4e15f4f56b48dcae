"""`autograde hint STAGE`: one more hint for a stage each time it is run, the last one the direct answer.

The hints of a stage are written in assignments/<stage>/hints.txt, from a nudge to the answer, separated by
lines holding only `---`. How many you have seen is kept in .autograde-hints.json in the course folder, so
each run shows the next; `--reset` starts a stage (or every stage) again. Standard library only: the student
release ships a copy of it as hint.py, beside check.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

try:
    from autograder.practice.check import find_root, resolve, stage_folders
except ImportError:  # the student release: check.py sits beside this file
    from check import find_root, resolve, stage_folders

PROGRESS_FILE = ".autograde-hints.json"
HINTS_FILE = "hints.txt"
SEPARATOR = "---"


def ladder(folder: Path) -> list[str]:
    """A stage's hints in order, from its hints.txt."""
    path = folder / HINTS_FILE
    if not path.is_file():
        return []
    rungs, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() == SEPARATOR:
            rungs.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    rungs.append("\n".join(current).strip())
    return [rung for rung in rungs if rung]


def load_progress(root: Path) -> dict[str, int]:
    """{stage: hints seen}; a missing or unreadable file is no progress (it is only a convenience)."""
    try:
        data = json.loads((root / PROGRESS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {stage: seen for stage, seen in data.items() if type(seen) is int and seen >= 0}


def save_progress(root: Path, progress: dict[str, int]) -> None:
    (root / PROGRESS_FILE).write_text(json.dumps(progress, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def next_hint(root: Path, folder: Path) -> str:
    """The next hint of a stage, as printed, and the progress moved on by one."""
    rungs = ladder(folder)
    if not rungs:
        return f"{folder.name} has no hints yet."
    progress = load_progress(root)
    seen = min(progress.get(folder.name, 0), len(rungs) - 1)
    number = seen + 1
    progress[folder.name] = number
    save_progress(root, progress)
    last = number == len(rungs)
    title = "the answer" if last else f"hint {number} of {len(rungs)}"
    rung = rungs[seen]
    if last and rung.lower().startswith("the answer:"):  # hints.txt may label its last rung; the title says it
        rung = rung[len("the answer:") :].lstrip()
    text = f"{folder.name}, {title}:\n\n{rung}\n"
    if number < len(rungs):
        text += f"\nRun this again for the next hint ({len(rungs) - number} left, the last one the answer)."
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde hint", description=__doc__.splitlines()[0])
    parser.add_argument("stage", nargs="?", metavar="STAGE", help="3, 03_minimax or minimax")
    parser.add_argument("--reset", action="store_true", help="start the stage's hints (every stage's) again")
    parser.add_argument("--root", type=Path, help="the folder that holds assignments/ (default: here)")
    args = parser.parse_args(argv)
    try:
        root = (args.root or find_root()).resolve()
        folders = stage_folders(root)
        folder = resolve(args.stage, folders) if args.stage else None
    except (FileNotFoundError, KeyError) as error:
        print(f"autograde hint: {error.args[0]}", file=sys.stderr)
        return 2
    if args.reset:
        progress = load_progress(root) if folder else {}
        progress.pop(folder.name, None) if folder else None
        save_progress(root, progress)
        print(f"Hints start again for {folder.name if folder else 'every stage'}.")
        return 0
    if folder is None:
        print("autograde hint: name a stage, e.g. `autograde hint 3`", file=sys.stderr)
        return 2
    print(next_hint(root, folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
