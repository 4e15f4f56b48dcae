"""`autograde gradescope OUT.zip [--policy FILE]`: a Gradescope autograder bundle; `python -m
autograder.verbs.gradescope run`: what it runs (`warm`: what setup.sh builds once).

The bundle is a zip with setup.sh and run_autograder at its top (templates in autograder/verbs/gradescope_files/)
and a copy of everything the grader reads: the autograder package, solutions/, the visible test files (their
EXAMPLES tables are the visible checks), pyproject.toml, and grade-settings.toml, the course's grading settings
(the policy file's [grade] table: the assigned stages and the bonus rule; the defaults without --policy).
Gradescope unpacks it into /autograder/source and runs setup.sh once; then, per submission, run_autograder calls
`run`, which grades /autograder/submission exactly as `autograde grade` grades one student (same checks, same
sandbox, same fallback when the container forbids namespaces, the default time limit), makes its final grade
with those settings (admin/final_grade.py) and writes /autograder/results/results.json, whose score is the
final grade's points.

Lateness is Gradescope's business there: the policy's due dates, late penalty and extensions are not bundled,
because Gradescope applies the assignment's own due dates and late policy to the score it is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import tomllib
import traceback
import zipfile
from pathlib import Path

from autograder.admin.final_grade import final_grade, points_text
from autograder.admin.settings import DEFAULT_SETTINGS, CourseSettings, parse_settings
from autograder.course.stages import ROOT, STAGES, TOTAL_POINTS
from autograder.outputs.command_line import fail

TEMPLATES = Path(__file__).resolve().parent / "gradescope_files"
EXECUTABLES = ("setup.sh", "run_autograder")
# What the grader reads, relative to the course root. The starters, READMEs, tests/ and nbgrader/ are not needed.
BUNDLED = ("autograder/**/*", "solutions/*/*.py", "assignments/*/test_*.py", "pyproject.toml", "README.md")
SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the same bytes for the same sources: no timestamps in the zip
SETTINGS_FILE = "grade-settings.toml"  # in the bundle's root (the course ROOT once unpacked), read by run()


def settings_text(settings: CourseSettings) -> str:
    """The settings as the [grade] table of a TOML file, as the policy file spells it."""
    values = settings.as_dict()
    lines = [
        "# The course's grading settings, from the [grade] table of its policy file (`autograde gradescope --policy`).",
        "# Lateness is not here: Gradescope applies the assignment's own due dates and late policy to the score.",
        "[grade]",
        f"assigned = {json.dumps(values['assigned'])}",  # a JSON list of strings is a TOML array
        f"bonus = {json.dumps(values['bonus'])}",
    ]
    if settings.bonus_cap is not None:
        cap = float(settings.bonus_cap)
        lines.append(f"bonus_cap = {int(cap) if cap.is_integer() else cap}")
    return "\n".join(lines) + "\n"


def read_settings(root: Path = ROOT) -> CourseSettings:
    """The bundle's settings (the defaults when it has none); SettingsError when they cannot be used."""
    path = root / SETTINGS_FILE
    if not path.is_file():
        return DEFAULT_SETTINGS
    return parse_settings(tomllib.loads(path.read_text(encoding="utf-8")).get("grade", {}))


def bundle_files(settings: CourseSettings = DEFAULT_SETTINGS) -> dict[str, bytes]:
    """Path in the zip -> content, sorted."""
    files = {name: (TEMPLATES / name).read_bytes() for name in EXECUTABLES}
    files[SETTINGS_FILE] = settings_text(settings).encode()
    for pattern in BUNDLED:
        for path in sorted(ROOT.glob(pattern)):
            relative = path.relative_to(ROOT)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc", ".pyo"):
                files[relative.as_posix()] = path.read_bytes()
    missing = [stage.test_path for stage in STAGES if not stage.test_path.exists()]
    if missing:
        raise FileNotFoundError(f"{missing[0].relative_to(ROOT)} is missing: the grader's visible checks read it")
    return dict(sorted(files.items()))


def write_bundle(out: Path, settings: CourseSettings = DEFAULT_SETTINGS) -> int:
    """Write the zip; returns how many files it holds."""
    files = bundle_files(settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            executable = name in EXECUTABLES
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return len(files)


# ---------------------------------------------------------------------------------------------------------------
# Inside Gradescope


def student_name(root: Path) -> str:
    """Who submitted, from Gradescope's submission_metadata.json (for extra_data only), else "submission"."""
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        users = metadata.get("users") or [{}]
        return str(users[0].get("email") or users[0].get("name") or "submission")
    except (OSError, ValueError, AttributeError, IndexError, TypeError):
        return "submission"


def run(root: Path) -> int:
    """Grade root/submission as one student and write root/results/results.json; 1 if the grader failed.

    The submission is graded behind the same fault barrier as in `autograde grade`: a failure of the grader on
    it gives "could not be graded: <reason>" with zeros, never a traceback instead of a results.json. Its final
    grade is made with the bundle's settings, by the one function that makes every final grade.
    """
    from autograder.grading import exposure, sandbox
    from autograder.grading.grade import grade_student
    from autograder.outputs import clean_tree, write_atomically
    from autograder.outputs.results import failure_json, json_text, to_json

    started = time.perf_counter()
    results_path = root / "results" / "results.json"
    # Logged to Gradescope's debugging output (staff only): which grader copy ran, under which isolation.
    print(f"grader: {Path(__file__).resolve().parent}", flush=True)
    possible = TOTAL_POINTS
    try:
        settings = read_settings()
        possible = settings.possible
        print(f"grade settings: {json.dumps(settings.as_dict())}", flush=True)
        isolation = sandbox.detect()
        print(f"isolation: {isolation.level}: {isolation.detail}", flush=True)
        # The metadata's previous_submissions hold earlier results.json files, hidden tests included.
        problem = exposure.problem(isolation, root / "results", root / "submission_metadata.json")
        if problem:  # said in results.json's output, which the staff see first when they test the assignment
            raise RuntimeError(problem)
        cores = len(os.sched_getaffinity(0))  # the container's: its stages share them
        result = grade_student(
            student_name(root), root / "submission", isolation, sandbox.DEFAULT_STAGE_SECONDS, parallel=cores
        )
        if result.ungraded:
            print(f"could not be graded: {result.ungraded}", flush=True)
        status = 1 if result.ungraded else 0
        result = dataclasses.replace(result, final=final_grade(result, settings))
        for step in result.final.steps:
            print(f"final: {step}", flush=True)
        results = to_json(result)
    except Exception as error:  # the grader's own failure: still write results.json so the student sees why
        traceback.print_exc()
        results = clean_tree(failure_json(f"{type(error).__name__}: {error}", time.perf_counter() - started))
        status = 1
    write_atomically(results_path, json_text(results))
    print(f"score: {points_text(results['score'])} of {possible}; wrote {results_path}", flush=True)
    return status


def warm() -> int:
    """Build every stage's checks and plan into the grader's cache (setup.sh, once per image): each submission's
    run then reads them, which costs milliseconds instead of about a second."""
    from autograder.course.cache import trusted_folder
    from autograder.course.checks import stage_outline
    from autograder.grading.plan import stage_plan

    for stage in STAGES:
        stage_plan(stage.id)
        stage_outline(stage.id)  # what a result lists for a stage that was not handed in
    folder = trusted_folder()
    print(f"cache: {len(STAGES)} stages' checks and plans in {folder}" if folder else "cache: none can be kept here")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["warm"]:
        return warm()
    if argv[:1] == ["run"]:
        parser = argparse.ArgumentParser(
            prog="python -m autograder.verbs.gradescope run", description="Grade ROOT/submission into ROOT/results."
        )
        parser.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's root (/autograder)")
        return run(parser.parse_args(argv[1:]).root)
    parser = argparse.ArgumentParser(prog="autograde gradescope", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the zip to write, e.g. gradescope.zip (upload it to Gradescope)")
    parser.add_argument(
        "--policy",
        type=Path,
        help="the course policy file: its [grade] table (assigned stages, bonus rule) is bundled; lateness is not",
    )
    args = parser.parse_args(argv)
    if args.out.suffix != ".zip":
        return fail("autograde gradescope", f"{args.out} should end in .zip (Gradescope takes a zip)")
    settings, lateness = DEFAULT_SETTINGS, False
    if args.policy is not None:
        from autograder.admin.policy import PolicyError, load_policy

        try:
            policy = load_policy(args.policy)
        except PolicyError as error:
            return fail("autograde gradescope", f"{error}")
        settings, lateness = policy.settings, bool(policy.due or policy.extensions)
    try:
        count = write_bundle(args.out, settings)
    except FileNotFoundError as error:
        print(f"autograde gradescope: {error}", file=sys.stderr)
        return 1
    print(f"Wrote {args.out} ({count} files). Upload it as the autograder of a Gradescope programming assignment.")
    extra = ""
    if settings.bonus == "extra":
        cap = "all of them" if settings.bonus_cap is None else f"at most {float(settings.bonus_cap):g}"
        extra = f", the bonus stages' points added as extra credit ({cap})"
    print(f"Give the assignment {settings.possible} points in Gradescope: the score is out of that{extra}.")
    if lateness:
        print("The policy's due dates, late penalty and extensions are not bundled: set them in Gradescope.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
