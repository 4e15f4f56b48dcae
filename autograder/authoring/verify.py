"""`autograde verify`: the course keeps itself honest.

The reference solutions must earn every point, the starters none, every known-wrong variant in
tests/variants/ must lose points on its own stage, and every alternative correct solution there
(files named ok_*.py) must earn full marks. Exits 1 on any surprise.
"""

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.course.stages import ROOT, STAGES, Stage
from autograder.grading import sandbox
from autograder.grading.judge import grade_stage

VARIANTS = ROOT / "tests" / "variants"


def expectations() -> list[tuple[str, Stage, Path, str]]:
    """(label, stage, module file, what it must earn: 'full', 'zero' or 'less')."""
    rows = []
    for stage in STAGES:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograde verify", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    isolation = sandbox.detect()
    rows = expectations()

    def grade(row):
        _, stage, path, _ = row
        return grade_stage(stage, path.read_text(), isolation)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(grade, rows))
    surprises = 0
    print(f"{'stage':<18} {'submission':<28} {'points':>9}  verdict")
    for (label, stage, path, want), result in zip(rows, results, strict=True):
        ok = {
            "full": result.score == stage.points,
            "zero": result.score == 0,
            "less": result.score < stage.points,
        }[want]
        surprises += not ok
        verdict = "ok" if ok else f"SURPRISE: expected {want} marks"
        if not ok and want != "less":
            failing = [t.check for t in result.tests if t.outcome != "passed"]
            verdict += f" (failed: {', '.join(failing)})" if failing else " (passed everything)"
        if not ok and want == "less":
            verdict += f" — this mistake went unnoticed: {first_line(path)}"
        print(f"{stage.id:<18} {label:<28} {result.score:>4g}/{stage.points:<4} {verdict}")
    print(f"\n{len(rows) - surprises} of {len(rows)} as expected." + (f" {surprises} surprises." if surprises else ""))
    return 1 if surprises else 0


if __name__ == "__main__":
    sys.exit(main())
