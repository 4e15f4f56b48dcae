"""`autograde verify`: the course keeps itself honest.

The reference solutions must earn every point, the starters none, every known-wrong variant in
tests/variants/ must lose points on its own stage, and every alternative correct solution there
(files named ok_*.py) must earn full marks. Exits 1 on any surprise. With --mutants it proves the tests
instead, on every single-point mutant of the reference solutions (see authoring/mutants/).
"""

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.course.stages import ROOT, STAGES, Stage
from autograder.grading import sandbox
from autograder.grading.judge import grade_stage
from autograder.record import Outcome, StageResult

VARIANTS = ROOT / "tests" / "variants"
Row = tuple[str, Stage, Path, str]  # (label, stage, module file, what it must earn: "full", "zero" or "less")


def expectations(stages: list[Stage] | None = None) -> list[Row]:
    """(label, stage, module file, what it must earn: 'full', 'zero' or 'less'), of stages (all when None)."""
    rows = []
    for stage in STAGES if stages is None else stages:
        rows.append(("reference", stage, stage.solution_path, "full"))
        rows.append(("starter", stage, stage.starter_path, "zero"))
        for path in sorted((VARIANTS / stage.id).glob("*.py")):
            rows.append((path.stem, stage, path, "full" if path.stem.startswith("ok_") else "less"))
    return rows


def first_line(path: Path) -> str:
    """The variant's docstring says what mistake it makes."""
    text = path.read_text()
    quote = text.find('"""')
    return text[quote + 3 :].split("\n", 1)[0].strip() if quote != -1 else ""


def grade_course(jobs: int, stages: list[Stage] | None = None) -> list[tuple[Row, StageResult]]:
    """Every row of expectations(stages) graded by the real judge in the sandbox, jobs at a time, in order."""
    isolation = sandbox.detect()
    rows = expectations(stages)

    def grade(row: Row) -> StageResult:
        _, stage, path, _ = row
        return grade_stage(stage, path.read_text(), isolation, seconds=sandbox.DEFAULT_STAGE_SECONDS)

    with ThreadPoolExecutor(max_workers=jobs, initializer=sandbox.spawning_thread) as pool:
        return list(zip(rows, pool.map(grade, rows), strict=True))


def verdict(row: Row, result: StageResult) -> str | None:
    """None when the row earned what it must, else what went wrong, in one line."""
    _, stage, path, want = row
    ok = {"full": result.score == stage.points, "zero": result.score == 0, "less": result.score < stage.points}[want]
    if ok:
        return None
    problem = f"SURPRISE: expected {want} marks"
    if want == "less":
        return problem + f" — this mistake went unnoticed: {first_line(path)}"
    failing = [test.check for test in result.tests if test.outcome != Outcome.PASSED]
    return problem + (f" (failed: {', '.join(failing)})" if failing else " (passed everything)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde verify", description=__doc__.splitlines()[0])
    parser.add_argument(
        "stages",
        nargs="*",
        metavar="STAGE",
        help="grade the rows of these stages only (by folder or number, e.g. 03); every piece is still checked",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--mutants",
        nargs="*",
        metavar="STAGE",
        help="instead: judge every single-point mutant of the reference solutions (of these stages, e.g. 03) "
        "with the oracle, the hidden checks and the visible tests",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    from autograder.authoring import mutants

    if args.mutants is not None:
        if args.stages:
            parser.error("name the stages after --mutants: autograde verify --mutants 03")
        try:
            stages = mutants.select(args.mutants)
        except ValueError as error:
            parser.error(str(error))
        return mutants.run(stages, args.jobs)
    try:
        chosen = mutants.select(args.stages) if args.stages else None
    except ValueError as error:
        parser.error(str(error))
    from autograder.course.pieces import missing_pieces

    incomplete = [(stage.id, line) for stage in STAGES for line in missing_pieces(stage)]
    for stage_id, line in incomplete:  # a stage half added: say the piece, before grading trips on it
        print(f"{stage_id}: missing {line}")
    if incomplete:
        return 1
    graded = grade_course(args.jobs, chosen)
    surprises = 0
    print(f"{'stage':<18} {'submission':<28} {'points':>9}  verdict")
    for row, result in graded:
        label, stage, _, _ = row
        problem = verdict(row, result)
        surprises += problem is not None
        print(f"{stage.id:<18} {label:<28} {result.score:>4g}/{stage.points:<4} {problem or 'ok'}")
    print(
        f"\n{len(graded) - surprises} of {len(graded)} as expected." + (f" {surprises} surprises." if surprises else "")
    )
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
