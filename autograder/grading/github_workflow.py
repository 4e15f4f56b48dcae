"""`autograde grading-workflow PATH`: write the GitHub Actions workflow that grades a class in shards with the
course's policy, roster and overrides, merges them and exports the final grades for the LMS, for the instructor's
private grading repository (github_files/grade-class.yml; its comments say how, docs/github-grading.md more)."""

import argparse
import sys
from pathlib import Path

from autograder.outputs.command_line import fail

WORKFLOW = Path(__file__).parent / "github_files" / "grade-class.yml"
COURSE_FILES = ("course-policy.toml", "roster.csv", "course-overrides.toml")  # the workflow's env: POLICY, ROSTER...


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="autograde grading-workflow",
        description="Write the GitHub Actions workflow that grades a class (grade-class.yml).",
    )
    parser.add_argument("path", type=Path, help="where to write it, e.g. .github/workflows/grade-class.yml")
    parser.add_argument("--force", action="store_true", help="replace PATH if it exists")
    args = parser.parse_args(argv)
    if args.path.exists() and not args.force:
        return fail("autograde grading-workflow", f"{args.path} exists; pass --force to replace it")
    try:
        args.path.parent.mkdir(parents=True, exist_ok=True)
        args.path.write_bytes(WORKFLOW.read_bytes())
    except OSError as error:
        return fail("autograde grading-workflow", f"cannot write {args.path}: {error.strerror or error}")
    print(
        f"Wrote {args.path}: add the secret CLASSROOM_TOKEN; commit {', '.join(COURSE_FILES)} at the repository's "
        "root (each when the course has it); then run it from the Actions tab."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
