"""`autograde merge OUT1 OUT2 ... --out OUT`: one class's outputs from the runs of its shards (grade --shard K/N).

Each OUTi's gradebook gives its latest finished run: the parameters it was graded with, every student's stored
result with what the course made of it (lateness and the final grade, carried whole, never recomputed), and
the roster's students with no submission that fell in that shard. The runs must agree on everything a grade
depends on (the suite hash, the grader's version, the time limit, the isolation and its cgroups, and the
policy, overrides and roster files), and a student found in two runs must have the same result in both;
otherwise nothing is written (one line, exit 2). OUT then gets what one run over the whole class writes:
grades.csv, every results.json and feedback.html, report.html, and a gradebook holding the merged run.
"""

import argparse
import json
import sqlite3
import sys
from pathlib import Path

from autograder.outputs import clean_line, gradesheet, write_atomically
from autograder.outputs.command_line import fail
from autograder.outputs.folders import GRADEBOOK, GRADES, RESULTS, output_folders
from autograder.outputs.gradebook import Gradebook, GradebookError, StoredRun
from autograder.outputs.gradebook import problem as gradebook_problem
from autograder.outputs.report import write_pages
from autograder.outputs.results import cleaned, json_text, to_json
from autograder.record import FinalGrade, GradingParameters, SubmissionResult

PARAMETER_NAMES = {
    "suite": "another suite (grader, hidden tests or references)",
    "grader_version": "another grader version",
    "time_limit": "another time limit",
    "isolation": "another isolation",
    "cgroups": "another cgroups mode",
}


class MergeError(Exception):
    """The runs cannot be merged; the message says why, in one line."""


def comparable(result: SubmissionResult) -> str:
    """A result without its timings: two runs grading the same files must agree on everything else."""
    data = to_json(result)
    data.pop("execution_time")
    for stage in data["extra_data"]["stages"].values():
        stage.pop("seconds")
        stage.pop("cpu_seconds")
    return json.dumps(data, sort_keys=True)


def read_run(out: Path) -> tuple[StoredRun, int]:
    """A shard's latest finished run and how many rows its grades.csv has."""
    path = out / GRADEBOOK
    if not path.is_file():
        raise MergeError(f"{out} holds no gradebook.db: is it the --out of an `autograde grade` run?")
    why = gradebook_problem(path)
    if why:
        raise MergeError(why)
    try:
        book = Gradebook(path)
        try:
            run = book.last_run()
        finally:
            book.close()
    except (GradebookError, sqlite3.Error) as error:
        raise MergeError(f"cannot read {path}: {error}") from None
    if run is None:
        raise MergeError(f"{path} holds no finished run (was that run interrupted?)")
    try:
        rows = max(0, len((out / GRADES).read_text().splitlines()) - 1)
    except OSError:
        rows = len(run.students)
    return run, rows


def merged(outs: list[Path]) -> tuple[StoredRun, list[str]]:
    """The runs together (their parameters and course, every student, every absent one), and notes (students
    a shard could not grade)."""
    parameters: GradingParameters | None = None
    course_hash = ""
    first: Path | None = None
    students: dict[str, tuple[str, SubmissionResult, Path]] = {}
    absent: dict[str, FinalGrade] = {}
    notes = []
    for out in outs:
        run, rows = read_run(out)
        these, stored = run.parameters, run.students
        if parameters is None:
            parameters, course_hash, first = these, run.course_hash, out
        else:
            for name, what in PARAMETER_NAMES.items():
                mine, theirs = getattr(parameters, name), getattr(these, name)
                if mine != theirs:
                    raise MergeError(f"{out} was graded with {what} than {first} ({theirs} vs {mine}); regrade it")
            if run.course_hash != course_hash:
                raise MergeError(
                    f"{out} was graded with another course policy, overrides or roster than {first}; "
                    "grade every shard with the same --policy, --overrides and --roster"
                )
        for student, final in run.absent.items():
            absent.setdefault(student, final)
        for student, (files_hash, result) in stored.items():
            if student in students and comparable(students[student][1]) != comparable(result):
                other = students[student][2]
                raise MergeError(f"{student!r} has different results in {other} and {out}; regrade one of them")
            students.setdefault(student, (files_hash, result, out))
        if rows > len(stored):
            notes.append(
                f"{out}: {rows - len(stored)} student(s) could not be graded there and are not stored; "
                "grade that shard again, then merge"
            )
    absent = {name: final for name, final in sorted(absent.items()) if name not in students}
    together = {name: (files, result) for name, (files, result, _out) in students.items()}
    return StoredRun(parameters, course_hash, together, absent), notes


def write_merged(out: Path, outs: list[Path], show_hidden: bool = False) -> tuple[int, list[str]]:
    """Write OUT from the runs; returns (students, notes). MergeError when the runs cannot be merged."""
    run, notes = merged(outs)
    parameters, students = run.parameters, run.students
    why = gradebook_problem(out / GRADEBOOK)
    if why:
        raise MergeError(why)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, SubmissionResult] = {}
    for student, (_files, result) in sorted(students.items()):
        results[student] = cleaned(result)
    book = Gradebook(out / GRADEBOOK)
    try:
        run_id = book.start_run(
            parameters, "merge of " + ", ".join(str(path.resolve()) for path in outs), run.course_hash
        )
        for student, (files_hash, result) in sorted(students.items()):
            book.record(run_id, student, files_hash, parameters, result)
        for student, final in run.absent.items():
            book.record_absent(run_id, student, final)
        book.finish_run(run_id)
    finally:
        book.close()
    folders = output_folders(results)  # of the whole class: shards' names may clash only once merged (ADA, ada)
    for student, result in results.items():
        write_atomically(out / folders[student] / RESULTS, json_text(to_json(result)))
    gradesheet.write_grades(out / GRADES, results)
    write_pages(out, results, show_hidden, [f"merged from {len(outs)} runs", *notes], folders, run.absent)
    return len(results), notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde merge", description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", metavar="OUT_K", help="the --out folders of the shards' runs")
    parser.add_argument("--out", type=Path, required=True, help="where the merged outputs go")
    parser.add_argument("--show-hidden", action="store_true", help="hidden tests' details on the feedback pages")
    args = parser.parse_args(argv)
    if args.out.resolve() in {run.resolve() for run in args.runs}:
        return fail("autograde merge", "--out must be a folder other than the runs merged")
    try:
        count, notes = write_merged(args.out, args.runs, args.show_hidden)
    except (MergeError, OSError) as error:
        return fail("autograde merge", str(error))
    for line in notes:
        print(f"autograde merge: {clean_line(line)}", file=sys.stderr)
    print(f"Merged {len(args.runs)} runs into {args.out}: {count} students.")
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
