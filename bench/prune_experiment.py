"""CPU time of the prune experiment's child (08_alpha_beta), as the parent reads it: reference alpha-beta, the
known-wrong variants that do not prune, and plain minimax. Prints the median of RUNS runs of each, in seconds.

    .venv/bin/python bench/prune_experiment.py
"""

import statistics
import sys

from autograder.course.stages import ROOT, STAGE_BY_ID
from autograder.grading import sandbox
from autograder.grading.judge import child_source, memo_limits
from autograder.grading.plan import stage_plan

RUNS = 5
STAGE = STAGE_BY_ID["08_alpha_beta"]
SOURCES = {
    "reference": STAGE.solution_path,
    "ok_infinite_window": ROOT / "tests/variants/08_alpha_beta/ok_infinite_window.py",
    "wrong_fresh_window": ROOT / "tests/variants/08_alpha_beta/wrong_fresh_window.py",
    "wrong_no_pruning (plain minimax)": ROOT / "tests/variants/08_alpha_beta/wrong_no_pruning.py",
}


def main() -> int:
    isolation = sandbox.detect()
    plan = stage_plan(STAGE.id)
    for label, path in SOURCES.items():
        files = {"child.py": child_source(), STAGE.filename: path.read_bytes()}
        times = [
            sandbox.run(files, "child.py", plan.memo_job, memo_limits(), isolation).cpu_seconds for _ in range(RUNS)
        ]
        print(f"{label:36} median {statistics.median(times):.3f} s  (min {min(times):.3f}, max {max(times):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
