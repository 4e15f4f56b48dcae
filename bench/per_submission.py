"""The cost of grading one submission, for planning a class on N machines (README: "Past one machine").

Run: .venv/bin/python bench/per_submission.py [--runs 3] [--jobs 1] [SUBMISSIONS]

Grades the example class (examples/submissions by default) RUNS times with `autograde grade --regrade --jobs 1`
and prints, per submission: the median wall time (results.json's execution_time: all seven stages), the median
CPU time of its stage children (as the sandbox measured them), and the whole run's wall and CPU time (the grader
and all its children, start-up included) divided by the class's size.
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="?", type=Path, default=ROOT / "examples" / "submissions")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    walls, cpus, run_walls, run_cpus = [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "out"
            command = [sys.executable, "-m", "autograder", "grade", str(args.submissions), "--out", str(out)]
            command += ["--quiet", "--regrade", "--jobs", str(args.jobs)]
            started, cpu = time.perf_counter(), children_cpu()
            subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
            wall, cpu = time.perf_counter() - started, children_cpu() - cpu
            results = [json.loads(path.read_text()) for path in sorted(out.glob("*/results.json"))]
            for data in results:
                walls.append(data["execution_time"])
                cpus.append(sum(stage["cpu_seconds"] for stage in data["extra_data"]["stages"].values()))
            run_walls.append(wall / len(results))
            run_cpus.append(cpu / len(results))
    n = len(walls) // args.runs
    print(f"{n} submissions x {args.runs} runs, --jobs {args.jobs}")
    print(f"per submission, median: wall {statistics.median(walls):.2f} s, stage children's CPU "
          f"{statistics.median(cpus):.2f} s")  # fmt: skip
    print(f"per submission, whole run / class size, median of runs: wall {statistics.median(run_walls):.2f} s, "
          f"CPU {statistics.median(run_cpus):.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
