"""Where the grader's own time goes on a class of stage-one students: the parent's CPU per student, piece by piece,
and each sandboxed run's phases in wall time: what the 40x-nbgrader target turns on besides the children, whose
cost is bench/run.py's part 3.

Run: .venv/bin/python bench/parent_cost.py [--students 100] [--runs 3] [--jobs N]

Each run is a fresh grader process (`autograde grade CLASS --out OUT --quiet --regrade`, the reference rules.py
for every student) with timers around the grader's own functions: thread CPU time (time.thread_time) for the
pieces, so a thread waiting for the GIL or a core costs nothing there, and wall time for the run's phases. The
timers add a few microseconds a call; the whole-run figures are therefore a little above bench/run.py's.
Printed, each the median over the runs: a piece's thread CPU over the whole run divided by the students, a
phase's median over the run's children, and the share of time 0, 1, 2... children were alive together.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (key, what it is, indented under the one before): thread CPU per student, in the order printed
PIECES = [
    ("worker", "a grading thread: the student's stage, start to end", 0),
    ("run", "the sandboxed run (setup, spawn, supervise, cleanup)", 1),
    ("supervise", "supervising the child (reading its pipes)", 2),
    ("reader", "the reply reader (protocol.StageReader)", 3),
    ("judge_stage", "judging the replies against the oracle", 1),
    ("table_look", "the table look at the source (tables.py)", 1),
    ("finish", "the main thread: the course step, written and stored", 0),
    ("cleaned", "cleaned (every text through clean_tree)", 1),
    ("row_html", "the student's row of the class report", 1),
    ("json_text", "results.json's text", 1),
    ("feedback_html", "feedback.html", 1),
    ("write_atomically", "the two files written", 1),
    ("record", "the gradebook insert", 1),
]
# (key, from mark, to mark, what it is): wall time per run, between the marks the wrappers below set
PHASES = [
    (
        "setup",
        "start",
        "spawn",
        "from run() to the child spawned (the run's folder, uid, cgroup, then waiting for the GIL)",
    ),
    ("alive", "spawn", "kill", "the child alive, from its spawn to the kill at its last line"),
    ("kill", "kill", "killed", "kill_all: the namespace's pid 1, then every process of the run"),
    ("after", "killed", "end", "from the kill to run() returning (reaping, the cgroup's CPU, cleanup)"),
]


def instrumented(class_dir: str, out: str, jobs: int | None) -> dict:
    """One grader run in this process with the timers in place; its figures."""
    import threading

    import autograder.grading.batch as batch
    import autograder.grading.class_loop as class_loop
    import autograder.grading.judge as judge
    import autograder.grading.sandbox as sandbox
    import autograder.grading.sandbox.runner as runner
    import autograder.outputs.report as report
    from autograder.cli import main
    from autograder.grading.protocol import StageReader
    from autograder.grading.sandbox.supervisor import Supervisor
    from autograder.outputs.gradebook import Gradebook

    cpu: dict[str, list[float]] = defaultdict(list)  # key -> thread CPU seconds of each call (append: thread-safe)
    marks = threading.local()
    phases: dict[str, list[float]] = defaultdict(list)
    events: list[tuple[float, int]] = []  # (time, +1 a child spawned / -1 a child killed)

    def timed(owner, name: str, key: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                cpu[key].append(time.thread_time() - started)

        setattr(owner, name, wrapper)

    def mark(key: str) -> None:
        if not hasattr(marks, "at"):
            marks.at = {}
        marks.at.setdefault(key, time.perf_counter())

    for owner, name, key in [
        (sandbox, "run", "run"),  # a stage's run, as judge calls it (detect's probe goes to runner.run)
        (class_loop, "grade_guarded", "worker"),
        (judge, "judge_stage", "judge_stage"),
        (judge, "table_look", "table_look"),
        (Supervisor, "supervise", "supervise"),
        (StageReader, "feed", "reader"),
        (batch.Batch, "finish", "finish"),
        (batch, "cleaned", "cleaned"),
        (batch, "json_text", "json_text"),
        (batch, "write_atomically", "write_atomically"),
        (report, "row_html", "row_html"),
        (report, "feedback_html", "feedback_html"),
        (Gradebook, "record", "record"),
    ]:
        timed(owner, name, key)

    real_run, real_spawn, real_kill = sandbox.run, runner.spawn, Supervisor.kill_all

    def run(*args, **kwargs):
        marks.at = {}
        mark("start")
        try:
            return real_run(*args, **kwargs)
        finally:
            mark("end")
            for key, begin, end, _ in PHASES:
                if begin in marks.at and end in marks.at:
                    phases[key].append(marks.at[end] - marks.at[begin])

    def spawn(*args, **kwargs):
        pid = real_spawn(*args, **kwargs)
        mark("spawn")
        events.append((time.perf_counter(), 1))
        return pid

    def kill_all(self):
        first = not hasattr(marks, "at") or "kill" not in marks.at
        mark("kill")
        real_kill(self)
        mark("killed")
        if first and "spawn" in marks.at:
            events.append((time.perf_counter(), -1))

    sandbox.run, runner.spawn, Supervisor.kill_all = run, spawn, kill_all
    started = time.perf_counter()
    arguments = ["grade", class_dir, "--out", out, "--quiet", "--regrade"] + (["--jobs", str(jobs)] if jobs else [])
    code = main(arguments)
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"parent_cost: autograde grade exited {code}")
    alive: dict[int, float] = defaultdict(float)  # children alive -> seconds, over the span of the runs
    events.sort()
    count, previous = 0, events[0][0] if events else 0.0
    for at, change in events:
        alive[count] += at - previous
        count, previous = count + change, at
    span = sum(alive.values()) or 1.0
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "cpu": {key: sum(values) for key, values in cpu.items()},  # every call of the run together
        "phases": {key: statistics.median(values) for key, values in phases.items()},
        "alive": {str(count): seconds / span for count, seconds in alive.items()},
        "wall": wall,
        "grader_cpu": own.ru_utime + own.ru_stime,
        "children_cpu": children.ru_utime + children.ru_stime,
        "first_spawn": (events[0][0] - started) if events else 0.0,
    }


def make_class(folder: Path, students: int) -> None:
    from autograder.authoring.markers import solution_code
    from autograder.course.stages import STAGE_BY_ID

    stage = STAGE_BY_ID["01_rules"]
    code = solution_code(stage.solution_path.read_text())
    for index in range(students):
        student = folder / f"student{index:03d}"
        student.mkdir(parents=True)
        (student / stage.filename).write_text(code)


def median_of(runs: list[dict], *path: str) -> float | None:
    values = []
    for figures in runs:
        value = figures
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            values.append(value)
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="grading threads (default: the grader's, one per core)")
    parser.add_argument("--one", nargs=2, metavar=("CLASS", "OUT"), help=argparse.SUPPRESS)  # a run, in a child
    args = parser.parse_args()
    if args.one:
        print(json.dumps(instrumented(args.one[0], args.one[1], args.jobs)))
        return 0
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-parent-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, args.students)
        for run in range(args.runs):
            out = Path(tmp) / f"out{run}"
            command = [sys.executable, __file__, "--one", str(class_dir), str(out)]
            command += ["--jobs", str(args.jobs)] if args.jobs else []
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"parent_cost: run {run + 1} failed:\n{done.stderr[-2000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"run {run + 1}: {runs[-1]['wall']:.2f} s", file=sys.stderr)
    print(f"{args.students} stage-one students, {args.runs} runs, --jobs {args.jobs or 'default'}: medians")
    print(
        f"\nwhole run {median_of(runs, 'wall'):.3f} s (after the imports); the first child spawned at"
        f" {median_of(runs, 'first_spawn'):.3f} s;"
        f" the grader process's CPU {median_of(runs, 'grader_cpu'):.3f} s (start-up included),"
        f" its children's {median_of(runs, 'children_cpu'):.3f} s"
    )
    print("\nThe parent's CPU per student (thread CPU time over the run / students, ms):")
    for key, what, depth in PIECES:
        value = median_of(runs, "cpu", key)
        if value is not None:
            print(f"  {'  ' * depth}{value / args.students * 1000:6.2f}  {what}")
    print("\nEach sandboxed run's phases (wall time, ms, median run):")
    for key, _, _, what in PHASES:
        value = median_of(runs, "phases", key)
        if value is not None:
            print(f"  {value * 1000:7.2f}  {what}")
    counts = sorted({count for figures in runs for count in figures["alive"]}, key=int)
    shares = ", ".join(f"{count}: {median_of(runs, 'alive', count):.0%}" for count in counts)
    print(f"\nChildren alive at once, share of the span from the first spawn to the last kill: {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
