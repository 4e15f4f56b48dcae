"""`autograde check [STAGE]`: run the visible tests of your stages and show, per stage, what to fix first.

It runs only the tests you can read in assignments/<stage>/ (pytest, one process per stage) against your own
copy of the assignments, so it tells you nothing the tests do not. This module uses only the standard library,
pytest and (when installed) rich: the student release ships a copy of it as check.py.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

STAGE_FOLDER = re.compile(r"^(\d\d)_(\w+)$")
# The visible tests stop a test that loops (assignments/conftest.py: 10 s each, 30 s in all, then half a second
# each), so a stage whose every test loops ends in about a minute; this is the backstop beyond that.
TIMEOUT_SECONDS = 90


@dataclass
class StageReport:
    stage: str  # the stage folder, e.g. "01_rules"
    passed: int
    total: int | None  # None when the tests could not even be collected (the module does not import)
    first_problem: str  # one line; "" when every test passed

    @property
    def ok(self) -> bool:
        return self.total is not None and self.total > 0 and self.passed == self.total


def find_root(start: Path | None = None) -> Path:
    """The course folder to check: the current folder if it holds assignments/, else the one this file is in."""
    here = Path(__file__).resolve().parent
    for candidate in (start or Path.cwd(), here, *here.parents[:2]):  # the release copy, or the course
        if (candidate / "assignments").is_dir():
            return candidate
    raise FileNotFoundError("no assignments/ folder here: run this from the folder that holds assignments/")


def stage_folders(root: Path) -> list[Path]:
    """The stage folders of assignments/, in course order."""
    folder = root / "assignments"
    return sorted(p for p in folder.iterdir() if p.is_dir() and STAGE_FOLDER.match(p.name))


def resolve(name: str, folders: list[Path]) -> Path:
    """A stage by folder name ("03_minimax"), module name ("minimax") or number ("3"), as course.stages.stage.

    The stages are read from the folders on disk so that the student's copy, which has no manifest, works alike.
    """
    for folder in folders:
        number, module = STAGE_FOLDER.match(folder.name).groups()
        if name in (folder.name, module) or (name.isdigit() and int(name) == int(number)):
            return folder
    known = ", ".join(folder.name for folder in folders)
    raise KeyError(f"no stage called {name!r}; the stages are {known}")


def run_stage(root: Path, folder: Path, timeout: float = TIMEOUT_SECONDS) -> StageReport:
    """Run pytest on one stage folder in a child process and summarise its junit XML."""
    with tempfile.TemporaryDirectory(prefix="autograde-check-") as scratch:
        xml = Path(scratch) / "junit.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            str(folder.relative_to(root)),
            "-q",
            "-p",
            "no:cacheprovider",
            f"--rootdir={root}",  # so assignments/conftest.py is loaded even where root has no pytest config
            f"--junitxml={xml}",
        ]
        # No .pyc files in the student's folders; the student's own PYTHONPATH must not shadow their modules.
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        # The visible tests as written, with no plugin the environment happens to hold (one that reorders, retries or
        # times tests would change what is reported); loading them also cost a course venv's pytest about 2 s a stage.
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        env.pop("PYTHONPATH", None)
        try:
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            message = f"the tests did not finish in {timeout:.0f} s: look for a loop or recursion that never ends"
            return StageReport(folder.name, 0, None, message)
        if not xml.exists():
            lines = (done.stderr or done.stdout).strip().splitlines()
            return StageReport(folder.name, 0, None, f"pytest could not run: {lines[-1] if lines else done.returncode}")
        return summarise(folder.name, xml.read_text(encoding="utf-8"))


def summarise(stage: str, junit_xml: str) -> StageReport:
    """Passed / total and the first failure's message, from pytest's junit XML."""
    root = ElementTree.fromstring(junit_xml)
    passed = total = 0
    first = ""
    collected = True
    for case in root.iter("testcase"):
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        skipped = any(child.tag == "skipped" for child in case)
        if problem is not None and problem.get("message") == "collection failure":
            collected = False  # the test file (or the student's module) did not import: no test ran
        elif not skipped:
            total += 1
            passed += problem is None
        if problem is not None and not first:
            first = one_line(problem.get("message") or "", problem.text or "")
    if not collected:
        return StageReport(stage, 0, None, first)
    if total == 0 and not first:
        first = "no tests were found in this stage's folder"
    return StageReport(stage, passed, total, first)


BOARD_LINE = re.compile(r"^board = (\[.*?\])")


def compact_board(line: str) -> str:
    """The board of a visible test's message ("board = ['X', ' ', ...]") in one short line: "On XO·/···/···.",
    rows left to right, a dot for an empty square; "" when the line holds no board."""
    found = BOARD_LINE.match(line)
    if not found:
        return ""
    try:
        board = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return ""
    if type(board) is not list or len(board) != 9 or not all(square in ("X", "O", " ") for square in board):
        return ""
    cells = "".join("·" if square == " " else square for square in board)
    return f"On {cells[0:3]}/{cells[3:6]}/{cells[6:9]}."


def one_line(message: str, text: str) -> str:
    """The line a student should read first: the visible test's first line and its "Try this:" line, as
    assignments/conftest.py words them (an error in the student's code is already one line)."""
    candidates = [message] if message and message != "collection failure" else []
    candidates.append(text)
    for candidate in candidates:
        lines = [line.strip() for line in candidate.strip().splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) > 1 and any(line.startswith("E ") for line in lines):
            # A raw traceback: pytest marks the exception lines with "E"; the first of them says what went wrong.
            lines = [line[1:].strip() for line in lines if line.startswith("E ")]
        advice = next((line for line in lines[1:] if line.startswith("Try this:")), "")
        board = next(filter(None, (compact_board(line) for line in lines[1:])), "")
        return " ".join(filter(None, [lines[0].removeprefix("AssertionError: "), board, advice]))
    return "a test failed (run pytest on this stage to see it)"


def check(root: Path, names: list[str] | None = None, jobs: int | None = None) -> list[StageReport]:
    """Run the visible tests of the stages named (all of them when none are), in parallel, in course order."""
    folders = stage_folders(root)
    chosen = list(dict.fromkeys(resolve(name, folders) for name in names)) if names else folders
    jobs = jobs or min(len(chosen), os.cpu_count() or 1) or 1
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda folder: run_stage(root, folder), chosen))


def render(reports: list[StageReport]) -> None:
    """Print the table, with rich when it is installed and as plain text otherwise."""
    rows = [
        (report.stage, "—" if report.total is None else f"{report.passed}/{report.total}", report.first_problem)
        for report in reports
    ]
    try:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table
    except ImportError:
        width = max(len(row[0]) for row in rows)
        print(f"{'stage':<{width}}  {'passed':>7}  first thing to fix")
        for stage, passed, problem in rows:
            print(f"{stage:<{width}}  {passed:>7}  {problem or 'nothing: all visible tests pass'}")
        return
    table = Table(title="Visible tests of your stages")
    table.add_column("stage", no_wrap=True)
    table.add_column("tests passed", justify="right", no_wrap=True)
    table.add_column("first thing to fix")
    for report, (stage, passed, problem) in zip(reports, rows, strict=True):
        style = "green" if report.ok else "red"
        # The message may hold code like [1, 0, 0], which rich would read as markup.
        text = escape(problem) if problem else "[green]nothing: all visible tests pass[/green]"
        table.add_row(stage, f"[{style}]{passed}[/{style}]", text)
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde check", description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", metavar="STAGE", help="3, 03_minimax or minimax (default: every stage)")
    parser.add_argument("--root", type=Path, help="the folder that holds assignments/ (default: here)")
    args = parser.parse_args(argv)
    try:
        root = (args.root or find_root()).resolve()
        if not (root / "assignments").is_dir():
            raise FileNotFoundError(f"{root} has no assignments/ folder")
        reports = check(root, args.stages)
    except (FileNotFoundError, KeyError) as error:
        print(f"autograde check: {error.args[0]}", file=sys.stderr)
        return 2
    render(reports)
    passing = sum(report.ok for report in reports)
    if passing == len(reports):
        print(f"All visible tests pass in {passing} stage(s). The grader's hidden tests check more boards.")
        return 0
    print(f"{len(reports) - passing} of {len(reports)} stage(s) have something to fix; start with the first row.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
