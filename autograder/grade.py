"""`autograde grade SUBMISSIONS --out OUT`: grade a whole class.

Data flows one way: submissions.read_student -> judge.grade_stage (sandboxed child, trusted judge)
-> outputs.results.results_json -> gradebook.record -> OUT/<student>/results.json, grades.csv.
"""

import argparse
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autograder import sandbox
from autograder.course import ROOT, STAGES
from autograder.gradebook import Gradebook
from autograder.judge import DEFAULT_SECONDS, StageResult, fail_all, grade_stage
from autograder.outputs import gradesheet, write_atomically
from autograder.outputs.report import write_pages
from autograder.outputs.results import results_json
from autograder.submissions import ClassError, Submission, find_class, read_student

# Everything whose change can change a grade; its hash is stored with each result.
SUITE_FILES = ("autograder/*.py", "autograder/checks/*.py", "solutions/*/*.py", "assignments/*/test_*.py")


def suite_hash() -> str:
    digest = hashlib.sha256()
    for pattern in SUITE_FILES:
        for path in sorted(ROOT.glob(pattern)):
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def grade_submission(submission: Submission, isolation: sandbox.Isolation, seconds: float = DEFAULT_SECONDS) -> dict:
    """Every stage of one student, each in its own sandboxed child; returns their results.json."""
    started = time.perf_counter()
    stages: dict[str, StageResult] = {}
    for stage in STAGES:
        if stage.id in submission.problems:
            problem = submission.problems[stage.id]
            stages[stage.id] = fail_all(stage, "missing" if "not submitted" in problem else "error", problem)
            continue
        source = submission.sources[stage.id]
        result = grade_stage(stage, source.text, isolation, seconds)
        if source.notes:
            result.message = "; ".join(filter(None, [*source.notes, result.message]))
        stages[stage.id] = result
    notes = list(submission.notes)
    for stage_id, result in stages.items():
        if result.message and stage_id not in submission.problems:
            notes.append(f"{stage_id}: {result.message}")
    return results_json(submission.student, stages, isolation, notes, time.perf_counter() - started)


def usable_output(out: Path) -> str | None:
    """Why OUT cannot be written, or None."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        return f"cannot write to {out}: {error.strerror or error}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde grade", description="Grade a folder of submissions.")
    parser.add_argument("submissions", type=Path, help="a folder with one folder or .zip per student")
    parser.add_argument("--out", type=Path, required=True, help="where grades.csv and each student's results go")
    parser.add_argument("--gradebook", type=Path, help="the SQLite gradebook (default: OUT/gradebook.db)")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="students graded at once (default: cores)"
    )
    parser.add_argument("--regrade", action="store_true", help="grade again even when files and tests are unchanged")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_SECONDS,
        metavar="SECONDS",
        help="CPU seconds per stage (default: %(default)s)",
    )
    parser.add_argument(
        "--show-hidden", action="store_true", help="show hidden tests' details on the feedback pages (after publishing)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    args = parser.parse_args(argv)

    try:
        students, class_notes = find_class(args.submissions, args.out)
    except ClassError as error:
        print(f"autograde grade: {error}", file=sys.stderr)
        return 2
    for note in class_notes:
        print(f"autograde grade: {note}", file=sys.stderr)
    problem = usable_output(args.out)
    if problem:
        print(f"autograde grade: {problem}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("autograde grade: --jobs must be at least 1", file=sys.stderr)
        return 2

    from autograder.outputs.console import Console

    console = Console(quiet=args.quiet)
    isolation = sandbox.detect()
    if isolation.level == "bubblewrap":
        console.say(f"Isolation: {isolation.level} — {isolation.detail}")
    else:  # said even with --quiet: grading without the sandbox is something an instructor must know
        print(f"WARNING: student code runs without the bubblewrap sandbox ({isolation.detail}); "
              "limits and an unprivileged uid still apply. `autograde doctor` explains.", file=sys.stderr)  # fmt: skip
    gradebook = Gradebook(args.gradebook or args.out / "gradebook.db")
    suite = suite_hash()
    run_id = gradebook.start_run(suite, isolation.level, str(args.submissions.resolve()))
    results: dict[str, dict] = {}
    pending = []
    for name, path in students:
        submission = read_student(name, path)
        stored = None if args.regrade else gradebook.stored(name, submission.files_hash, suite)
        if stored:
            gradebook.reuse(run_id, name, stored[0])
            results[name] = stored[1]
            write_atomically(args.out / name / "results.json", _json(stored[1]))
        else:
            pending.append(submission)
    if results:
        console.say(f"{len(results)} of {len(students)} submissions are unchanged since they were graded: reused.")

    with console.progress(len(pending)) as advance, ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(grade_submission, s, isolation, args.time_limit): s for s in pending}
        try:
            for future in as_completed(futures):
                submission = futures[future]
                result = future.result()
                gradebook.record(run_id, submission.student, submission.files_hash, suite, result)
                write_atomically(args.out / submission.student / "results.json", _json(result))
                results[submission.student] = result
                advance(submission.student)
        except KeyboardInterrupt:
            for future in futures:
                future.cancel()
            print(
                f"\ninterrupted: {len(results)} of {len(students)} submissions are graded and stored; "
                "run the same command again to finish the rest.",
                file=sys.stderr,
            )
            return 130
    gradebook.finish_run(run_id)
    gradebook.close()
    gradesheet.write_grades(args.out / "grades.csv", results)
    report = write_pages(args.out, results, show_hidden=args.show_hidden)
    console.summary(results)
    console.say(
        f"Wrote {args.out / 'grades.csv'}, {report}, and results.json and feedback.html for {len(results)} students."
    )
    return 0


def _json(results: dict) -> str:
    return json.dumps(results, indent=2, ensure_ascii=False) + "\n"
