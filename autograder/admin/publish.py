"""`autograde publish OUT DEST`: hand each student of a graded OUT their own feedback, and nothing else.

DEST gets one folder (or, with --zip, one zip) per student, holding their feedback page and their results.json,
re-rendered from OUT/<folder>/results.json. Until the grades are published (--show-hidden, as for `autograde
grade`) a hidden test keeps only its title, its points and whether it passed: its output (the boards, the
arguments, the expected and the returned values) is replaced by the note the feedback pages show, and each
page and results.json is scanned with the release's leak check before it is written. Nothing handed to a
student holds another student's name or any figure of the class. Each student's folder or zip appears whole
or not at all.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from autograder.authoring.release import board_leaks, hidden_boards
from autograder.outputs import clean_line
from autograder.outputs.command_line import fail
from autograder.outputs.folders import FEEDBACK, RESULTS, clashes
from autograder.outputs.report import HIDDEN_NOTE, feedback_html
from autograder.outputs.results import from_json, json_text, to_json
from autograder.record import Outcome, SubmissionResult

MAX_RESULTS_BYTES = 2_000_000  # a results.json the grader wrote is at most about 250 KB (outputs/results.py)
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: the same bytes on every run and machine


class PublishError(Exception):
    """Something about OUT or DEST that stops the whole run (one line, exit 2)."""


def held_back(result: SubmissionResult) -> SubmissionResult:
    """The record as a student may see it before the grades are published.

    A hidden test keeps its title, points and pass or fail; its output becomes the note the pages show (or
    stays empty when there was none), its outcome says only passed or failed, and the wrong answers kept for
    the class statistics (their boards) and the counterexample the class report draws are dropped. The times are
    left out too (0): the hidden job's share of them is the student's code's to choose, so to the millisecond
    they could spell out a hidden board.
    """
    stages = {
        stage_id: dataclasses.replace(
            stage,
            seconds=0.0,
            cpu_seconds=0.0,
            tests=[
                test
                if test.visible
                else dataclasses.replace(
                    test,
                    output=HIDDEN_NOTE if test.output.strip() else "",
                    outcome=Outcome.PASSED if test.outcome == Outcome.PASSED else Outcome.FAILED,
                    mistakes=(),
                    counterexample=None,
                )
                for test in stage.tests
            ],
        )
        for stage_id, stage in result.stages.items()
    }
    return dataclasses.replace(result, stages=stages, seconds=0.0)


def student_files(result: SubmissionResult, show_hidden: bool) -> dict[str, str]:
    """What one student receives: file name -> text."""
    shown = result if show_hidden else held_back(result)
    return {FEEDBACK: feedback_html(shown, show_hidden), RESULTS: json_text(to_json(shown))}


def read_result(path: Path) -> SubmissionResult:
    """The record of a results.json the grader wrote into OUT."""
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"{path} is not a file")
    if path.stat().st_size > MAX_RESULTS_BYTES:
        raise ValueError(f"{path} is over {MAX_RESULTS_BYTES:,} bytes: not a results.json of this grader")
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, IndexError) as error:
        raise ValueError(f"{path} is not a results.json of this grader ({type(error).__name__}: {error})") from error


def graded_folders(out: Path) -> list[Path]:
    """OUT's student folders (those holding a results.json), by name; a name starting with '.' is never one."""
    if not out.is_dir():
        raise PublishError(f"{out} is not a folder")
    folders = sorted(
        entry for entry in out.iterdir() if entry.is_dir() and not entry.is_symlink() and not entry.name.startswith(".")
    )
    folders = [folder for folder in folders if (folder / RESULTS).exists()]
    if not folders:
        raise PublishError(f"{out} holds no graded students (no <student>/{RESULTS}): run `autograde grade` first")
    return folders


def check_destination(out: Path, dest: Path, force: bool) -> None:
    if dest.exists() and not dest.is_dir():
        raise PublishError(f"{dest} exists and is not a folder")
    outside, inside = out.resolve(), dest.resolve()
    if inside == outside or outside in inside.parents or inside in outside.parents:
        raise PublishError(f"{dest} must be outside {out} (and not hold it): publishing would mix the two")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise PublishError(f"{dest} already exists and is not empty; pass --force to replace its students' feedback")


def zip_bytes(folder: str, files: dict[str, str]) -> bytes:
    """A zip of the files under folder/, the same bytes on every run."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{name}", ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name].encode("utf-8"))
    return buffer.getvalue()


def _put_in_place(built: Path, target: Path) -> None:
    """Move a finished folder or file to target, replacing what is there (--force) without a half state."""
    if not target.exists() and not target.is_symlink():
        os.rename(built, target)
        return
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=".publish-old-"))  # short: a name may be 200 bytes
    os.rename(target, old / "previous")
    os.rename(built, target)
    shutil.rmtree(old)


def publish_student(dest: Path, folder: str, files: dict[str, str], as_zip: bool) -> Path:
    """Write one student's files to DEST/<folder>/ or DEST/<folder>.zip, whole or not at all; returns it."""
    if as_zip:
        target = dest / f"{folder}.zip"
        handle, temporary = tempfile.mkstemp(dir=dest, prefix=".publish-zip-")
        built = Path(temporary)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(zip_bytes(folder, files))
            os.chmod(built, 0o644)
            _put_in_place(built, target)
        except BaseException:
            built.unlink(missing_ok=True)
            raise
        return target
    target = dest / folder
    built = Path(tempfile.mkdtemp(dir=dest, prefix=".publish-partial-"))
    try:
        for name, text in files.items():
            (built / name).write_text(text, encoding="utf-8", newline="")
        os.chmod(built, 0o755)
        _put_in_place(built, target)
    except BaseException:
        shutil.rmtree(built, ignore_errors=True)
        raise
    return target


def publish(out: Path, dest: Path, as_zip: bool = False, show_hidden: bool = False, force: bool = False):
    """Publish every graded student of OUT into DEST; returns (written paths, problems, one line each).

    A student the grader could not grade, whose results.json does not read, or whose files would show a hidden
    test's board gets nothing, and a problem saying why; every other student is published.
    """
    folders = graded_folders(out)
    check_destination(out, dest, force)
    dest.mkdir(parents=True, exist_ok=True)
    secrets = {} if show_hidden else hidden_boards(enumerated=True)
    written, problems = [], []
    # OUT's folders are distinct after folding when one grader run wrote them all (outputs/folders.py); folders
    # left by other runs may not be, and on a DEST that ignores case two students would share one folder.
    clashing = {name for group in clashes(folder.name for folder in folders) for name in group}
    for group in clashes(folder.name for folder in folders):
        shown = ", ".join(clean_line(name) for name in group)
        problems.append(f"{shown}: one folder on a disk that ignores case; grade the class again into a new OUT")
    for folder in folders:
        if folder.name in clashing:
            continue
        shown_name = clean_line(folder.name)
        try:
            result = read_result(folder / RESULTS)
        except (ValueError, OSError) as error:
            problems.append(f"{shown_name}: not published: {clean_line(error)}")
            continue
        if result.ungraded is not None:
            problems.append(f"{shown_name}: not published: it could not be graded ({clean_line(result.ungraded)})")
            continue
        files = student_files(result, show_hidden)
        leaks = [leak for name, text in files.items() for leak in board_leaks(f"{folder.name}/{name}", text, secrets)]
        if leaks:
            problems.append(f"{shown_name}: not published: its files would show a hidden test's board ({leaks[0]})")
            continue
        written.append(publish_student(dest, folder.name, files, as_zip))
    return written, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde publish", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a folder `autograde grade` wrote (its --out)")
    parser.add_argument("dest", type=Path, help="where to write one folder (or zip) per student (new or empty)")
    parser.add_argument("--zip", action="store_true", help="one <student>.zip each instead of a folder")
    parser.add_argument(
        "--show-hidden", action="store_true", help="show hidden tests' details too (once the grades are published)"
    )
    parser.add_argument("--force", action="store_true", help="write into a DEST that already holds files")
    args = parser.parse_args(argv)
    try:
        written, problems = publish(args.out, args.dest, args.zip, args.show_hidden, args.force)
    except (PublishError, OSError) as error:
        return fail("autograde publish", str(error))
    for problem in problems:
        print(f"autograde publish: {problem}", file=sys.stderr)
    kind = "zips" if args.zip else "folders"
    held = "with the hidden tests' details" if args.show_hidden else "hidden tests' details held back"
    print(f"Published {len(written)} student {kind} to {args.dest} ({held}).")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
