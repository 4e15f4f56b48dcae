"""`autograde grade`'s options: read once from argv into a GradeOptions, every one checked before anything is
graded or written; and the checks of OUT, which the class loop makes once the sandbox is known."""

import argparse
import math
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograder.grading import shards
from autograder.grading.intake import repositories
from autograder.grading.sandbox import DEFAULT_STAGE_SECONDS
from autograder.outputs import uncreatable
from autograder.outputs.command_line import OneLineParser
from autograder.outputs.folders import GRADEBOOK

MAX_TIME_LIMIT = 3600.0  # the largest --time-limit, CPU seconds per stage: an hour, 60 times DEFAULT_STAGE_SECONDS
MAX_JOBS = 256


class OptionsError(Exception):
    """An option's value that cannot be used (one line, for exit 2)."""


@dataclass(frozen=True)
class GradeOptions:
    submissions: Path
    out: Path
    gradebook: Path  # OUT/gradebook.db unless --gradebook
    jobs: int
    regrade: bool
    time_limit: float  # CPU seconds per stage: the one limit every stage's runs share
    show_hidden: bool
    quiet: bool
    policy: Path | None
    roster: Path | None
    folder_column: str | None
    overrides: Path | None
    students: tuple[str, ...] | None  # --student, None: every student
    stages: tuple[str, ...] | None  # --stage, None: every stage
    at: datetime | None
    shard: tuple[int, int] | None  # (K, N)


def parse_options(argv: list[str] | None) -> GradeOptions:
    """The options of argv; argparse exits 2 for a malformed command line, OptionsError for a value that is wrong."""
    args = _parser().parse_args(argv)
    time_limit = _checked(time_limit_problem(args.time_limit))
    jobs = _checked(jobs_problem(args.jobs))
    at = None if args.at is None else _checked(repositories.parse_at(args.at))
    shard = None if args.shard is None else _checked(shards.parse_shard(args.shard))
    return GradeOptions(
        submissions=args.submissions,
        out=args.out,
        gradebook=args.gradebook or args.out / GRADEBOOK,
        jobs=jobs,
        regrade=args.regrade,
        time_limit=time_limit,
        show_hidden=args.show_hidden,
        quiet=args.quiet,
        policy=args.policy,
        roster=args.roster,
        folder_column=args.folder_column,
        overrides=args.overrides,
        students=None if args.student is None else tuple(args.student),
        stages=None if args.stage is None else tuple(args.stage),
        at=at,
        shard=shard,
    )


def _checked(parsed: tuple):
    value, problem = parsed
    if problem:
        raise OptionsError(problem)
    return value


def time_limit_problem(text: str) -> tuple[float | None, str | None]:
    try:
        seconds = float(text)
    except ValueError:
        return None, f"--time-limit must be a number of seconds, not {text!r}"
    if not math.isfinite(seconds) or seconds <= 0:
        return None, f"--time-limit must be a positive number of seconds, not {text}"
    if seconds > MAX_TIME_LIMIT:
        return None, f"--time-limit {text} is too large (at most {MAX_TIME_LIMIT:g} CPU seconds per stage)"
    return seconds, None


def jobs_problem(text: str) -> tuple[int | None, str | None]:
    try:
        jobs = int(text)
    except ValueError:
        return None, f"--jobs must be a whole number, not {text!r}"
    if jobs < 1:
        return None, f"--jobs must be at least 1, not {jobs}"
    if jobs > MAX_JOBS:
        return None, f"--jobs {jobs} is too many (at most {MAX_JOBS})"
    return jobs, None


def output_problem(out: Path) -> str | None:
    """Why OUT could not be written, found without creating anything, or None."""
    if out.exists():
        if not out.is_dir():
            return f"cannot write to {out}: it is not a folder"
        if not os.access(out, os.W_OK | os.X_OK):
            return f"cannot write to {out}: permission denied"
        return None
    why = uncreatable(out)
    return f"cannot write to {out}: {why}" if why else None


def usable_output(out: Path) -> str | None:
    """Create OUT; why it cannot be written, or None."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        return f"cannot write to {out}: {error.strerror or error}"
    return None


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograde grade",
        description="Grade a folder of submissions.",
        epilog=(
            "Exit status: 0 when every submission was graded; 1 when some could not be graded (each is listed "
            "in report.html and on stderr with the reason, with zeros in grades.csv, and is tried again on the "
            "next run); 2 for a wrong option, SUBMISSIONS, OUT or gradebook, or no usable sandbox (nothing is "
            "graded or written); 130 when interrupted by Ctrl-C (what was stored stays; the same command grades "
            "the rest)."
        ),
    )
    parser.add_argument("submissions", type=Path, help="a folder with one folder or .zip per student")
    parser.add_argument("--out", type=Path, required=True, help="where grades.csv and each student's results go")
    parser.add_argument("--gradebook", type=Path, help="the SQLite gradebook (default: OUT/gradebook.db)")
    parser.add_argument(
        "--jobs",
        default=str(min(os.cpu_count() or 1, MAX_JOBS)),
        help=f"students graded at once, 1 to {MAX_JOBS} (default: cores)",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="grade again even when the files and everything else are unchanged"
    )
    parser.add_argument(
        "--time-limit",
        default=str(DEFAULT_STAGE_SECONDS),
        metavar="SECONDS",
        help="CPU seconds per stage, counted over all of the stage's processes; a wall-clock backstop only stops "
        f"code that waits instead of computing (default: %(default)s, at most {MAX_TIME_LIMIT:g})",
    )
    parser.add_argument(
        "--show-hidden", action="store_true", help="show hidden tests' details on the feedback pages (after publishing)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    parser.add_argument("--policy", type=Path, help="the course policy (TOML): due dates, late penalty, extensions")
    parser.add_argument("--roster", type=Path, help="the class roster (CSV: folder,id,name,email,section)")
    parser.add_argument(
        "--folder-column",
        metavar="NAME",
        help="the roster column naming each submission folder (default: folder; SIS Login ID in a Canvas export)",
    )
    parser.add_argument(
        "--overrides", type=Path, help="the instructor's changes and regrade outcomes (TOML; `autograde override`)"
    )
    parser.add_argument(
        "--student",
        action="append",
        metavar="NAME",
        help="grade only this student again (repeatable); the others keep their stored results",
    )
    parser.add_argument(
        "--stage",
        action="append",
        metavar="ID",
        help="grade only this stage again (3, 03_minimax or minimax; repeatable); the others are taken over",
    )
    parser.add_argument(
        "--at",
        metavar="TIMESTAMP",
        help="git repositories only: grade each as it was at this time (ISO 8601 with a zone), at its last commit "
        "then, without touching its working tree",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only slice K of N (by a hash of each student's name); `autograde merge` combines the N outputs",
    )
    return parser
