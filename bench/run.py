"""`make bench`: how fast the grader is, against nbgrader, on a whole class, per stage child, and in the lesson.

Run: .venv/bin/python bench/run.py [--quick] [--runs 3] [--class-runs 3] [--parts 1,2,3,4,5]

Five parts, each figure a median of several runs with its spread (min-max):

1. The same N submissions of stage one (N = 1, 20, 100) graded by `nbgrader autograde` (the stage's notebook) and
   by `autograde grade` (the same code as .py and as .ipynb), one after the other, in subprocesses of the real
   CLIs; N = 1 is one submission's whole command, and 20 -> 100 gives the marginal cost of one more submission.
2. A class of 100 seven-stage submissions (correct, typical mistakes, time-limit hitters) with --jobs 1 and
   --jobs = cores, and 100 correct ones: wall time against the children's CPU time over the cores, submissions
   per minute, peak memory.
3. Per stage child: start-up of the sandbox and interpreter, student code, judging in the parent, and the same
   child with no sandbox as the floor.
4. The lesson's figures: plain versus memoized score of the empty board in the reference solutions.
5. Gradescope: the bundle's run_autograder on one full submission, against its children's CPU time.

It writes bench/results.md (unless --quick, which only prints; pass --out to write anyway).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import importlib.util
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from autograder.authoring.markers import solution_code  # noqa: E402
from autograder.course.oracle import load_reference  # noqa: E402
from autograder.course.stages import STAGE_BY_ID, STAGES  # noqa: E402
from autograder.grading import judge, sandbox  # noqa: E402

BIN = Path(sys.executable).parent
VARIANTS = ROOT / "tests" / "variants"
STAGE_ONE = STAGE_BY_ID["01_rules"]
MIX_TIME_LIMIT = 5  # --time-limit for the mixed class, so each time-limit hitter costs 5 CPU seconds, not 60
CLASS_SIZE = [100]  # set by main(): the class-of-100 target is judged only on a class of 100
TRIVIAL_CHILD = b"import os\nos.write(3, b'ok')\n"


# ---------------------------------------------------------------------------------------------------------------
# Figures: medians with their spread


@dataclass
class Figure:
    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    def show(self, unit: str = "s", digits: int = 2, scale: float = 1.0) -> str:
        if not self.values:
            return "-"
        values = [v * scale for v in self.values]
        text = f"{statistics.median(values):,.{digits}f}{unit}"
        if len(values) == 1:
            return f"{text} (1 run)"
        return f"{text} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"### {self.title}", "", "| " + " | ".join(self.headers) + " |"]
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + self.notes
        return "\n".join(lines) + "\n"

    def print(self) -> None:
        from rich.console import Console
        from rich.table import Table as RichTable

        table = RichTable(title=self.title, title_justify="left")
        for header in self.headers:
            table.add_column(header)
        for row in self.rows:
            table.add_row(*row)
        console = Console(width=max(120, shutil.get_terminal_size().columns))
        console.print(table)
        for note in self.notes:
            console.print(note, markup=False, highlight=False)
        console.print()


# ---------------------------------------------------------------------------------------------------------------
# Running a command: wall time and memory (polled from /proc: no psutil, no /usr/bin/time)


@dataclass
class Measured:
    seconds: float
    largest_rss: int  # bytes: the largest single process of the tree (wait4's ru_maxrss: the grader itself)
    tree_rss: int  # bytes: the most the whole process tree held at once, sampled every 0.2 s
    returncode: int
    log: str


def _tree_rss(root: int) -> int:
    parents, rss = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            parents[int(name)] = int(fields[1])
            rss[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def measure(command: list[str], cwd: Path, env: dict | None = None) -> Measured:
    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        peak, done = [0], threading.Event()

        def poll() -> None:
            while not done.wait(0.2):
                peak[0] = max(peak[0], _tree_rss(process.pid))

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        poller.join()
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    return Measured(seconds, usage.ru_maxrss * 1024, peak[0], process.returncode, text)


def checked(result: Measured, what: str) -> Measured:
    if result.returncode != 0:
        raise SystemExit(f"bench: {what} failed (exit {result.returncode}):\n{result.log[-3000:]}")
    return result


def grade_command(submissions: Path, out: Path, *extra: str) -> list[str]:
    base = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--quiet", "--regrade"]
    return [*base, *extra]


def read_totals(out: Path) -> list[float]:
    with open(out / "grades.csv", newline="") as handle:
        return [float(row["total"]) for row in csv.DictReader(handle)]


def reference(stage_id: str) -> str:
    return solution_code(STAGE_BY_ID[stage_id].solution_path.read_text())


def mb(value: float) -> str:
    return f"{value / 2**20:,.0f} MB"


# ---------------------------------------------------------------------------------------------------------------
# The machine


def machine() -> dict[str, str]:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        memory = f"{kb / 2**20:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    isolation = sandbox.detect()
    return {
        "cores": str(os.cpu_count()),
        "cpu": model,
        "memory": memory,
        "python": f"{platform.python_version()} (grader), {sandbox.child_python()[0]} (children)",
        "kernel": platform.release(),
        "isolation": f"{isolation.level}: {isolation.detail}",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


# ---------------------------------------------------------------------------------------------------------------
# Part 1: against nbgrader on the same stage-one submissions


def nbgrader_env() -> dict:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONWARNINGS": "ignore"}


def nbgrader_course(folder: Path) -> tuple[Path, dict]:
    """A fresh copy of nbgrader/ with stage one generated; returns (course, the released notebook)."""
    course = folder / "course"
    shutil.copytree(ROOT / "nbgrader", course, ignore=shutil.ignore_patterns("gradebook.db", "release", "submitted"))
    checked(
        measure([str(BIN / "nbgrader"), "generate_assignment", STAGE_ONE.id, "--force"], course, nbgrader_env()),
        "nbgrader generate_assignment",
    )
    released = json.loads((course / "release" / STAGE_ONE.id / f"{STAGE_ONE.id}.ipynb").read_text())
    return course, released


def filled(released: dict, code: str) -> dict:
    notebook = json.loads(json.dumps(released))
    answers = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "answer"]
    if len(answers) != 1:
        raise SystemExit("bench: the released stage-one notebook has no single cell with grade_id 'answer'")
    answers[0]["source"] = code
    return notebook


def part_one(sizes: list[int], runs: int, say) -> tuple[Table, dict, dict]:
    table = Table(
        "1. Against nbgrader: the same N stage-one submissions (reference code), seconds per submission",
        ["N", "nbgrader autograde", "autograde grade .py", "autograde grade .ipynb", "ratio .py", "ratio .ipynb"],
    )
    code = reference(STAGE_ONE.id)
    cold = warm_cache(code)
    ratios, whole = {}, {}  # whole: size -> the .py grader's whole-command seconds, run by run
    for size in sizes:
        figures = {name: Figure() for name in ("nbgrader", "py", "ipynb")}
        for run in range(runs):
            with tempfile.TemporaryDirectory(prefix="bench-nb-") as tmp:
                tmp = Path(tmp)
                course, released = nbgrader_course(tmp)
                notebook = json.dumps(filled(released, code), indent=1)
                for i in range(size):
                    student = f"student{i:03d}"
                    folder = course / "submitted" / student / STAGE_ONE.id
                    folder.mkdir(parents=True)
                    (folder / f"{STAGE_ONE.id}.ipynb").write_text(notebook)
                    for kind, name, text in (
                        ("py", STAGE_ONE.filename, code),
                        ("ipynb", f"{STAGE_ONE.id}.ipynb", notebook),
                    ):
                        (tmp / kind / student).mkdir(parents=True)
                        (tmp / kind / student / name).write_text(text)
                command = [str(BIN / "nbgrader"), "autograde", STAGE_ONE.id, "--force"]
                result = checked(measure(command, course, nbgrader_env()), "nbgrader autograde")
                figures["nbgrader"].add(result.seconds / size)
                say(f"  N={size} run {run + 1}: nbgrader {result.seconds:.1f} s")
                for kind in ("py", "ipynb"):
                    out = tmp / f"out-{kind}"
                    result = checked(measure(grade_command(tmp / kind, out), ROOT), f"autograde grade ({kind})")
                    totals = read_totals(out)
                    if totals != [STAGE_ONE.points] * size:
                        raise SystemExit(f"bench: {kind} submissions did not all get full marks: {totals[:5]}...")
                    figures[kind].add(result.seconds / size)
                    if kind == "py":
                        whole.setdefault(size, []).append(result.seconds)
                    say(f"  N={size} run {run + 1}: autograde grade .{kind} {result.seconds:.1f} s")
        ratio = {
            k: Figure([n / o for n, o in zip(figures["nbgrader"].values, figures[k].values, strict=True)])
            for k in ("py", "ipynb")
        }
        ratios[size] = ratio
        ratio["ipynb_over_py"] = Figure(
            [n / p for n, p in zip(figures["ipynb"].values, figures["py"].values, strict=True)]
        )
        table.rows.append(
            [
                str(size),
                figures["nbgrader"].show(" s", 3),
                figures["py"].show(" s", 3),
                figures["ipynb"].show(" s", 3),
                ratio["py"].show("x", 1),
                ratio["ipynb"].show("x", 1),
            ]
        )
    table.notes.append(
        f"nbgrader: `nbgrader autograde {STAGE_ONE.id} --force` in a fresh copy of nbgrader/ (one kernel per notebook, "
        "sequential, no isolation). autograde: `python -m autograder grade SUBMISSIONS --out OUT --quiet --regrade` "
        f"with the default --jobs ({os.cpu_count()} = cores) and {sandbox.detect().level} isolation, a fresh OUT each "
        "run; only stage one is present. Ratio: nbgrader's seconds per submission over ours (per run, then median). "
        "Every submission got full marks from both. The suites differ in size: the notebook's hidden tests call "
        "winner and to_move on 160 sampled boards each, while autograde's hidden checks call them on every "
        f"reachable position ({len(judge.stage_plan(STAGE_ONE.id).steps):,} calls in all), so autograde does "
        "about 30 times the checking per submission. Before the runs, one submission is graded once to build "
        f"stage one's checks and plan into the grader's cache, as an instructor's first run does: that run took "
        f"{cold:.2f} s (with a cache already warm, as here, every later run reads them)."
    )
    return table, ratios, whole


def warm_cache(code: str) -> float:
    """Grade one stage-one submission once, so the runs measured read the cache (course/cache.py) as every run
    after an instructor's first does; returns that run's seconds."""
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        folder = Path(tmp) / "in" / "student000"
        folder.mkdir(parents=True)
        (folder / STAGE_ONE.filename).write_text(code)
        return checked(measure(grade_command(Path(tmp) / "in", Path(tmp) / "out"), ROOT), "warming the cache").seconds


def whole_command_figures(totals: dict) -> tuple[Figure | None, Figure | None, tuple[int, int] | None]:
    """One submission's whole command (N=1), and the marginal cost per submission between the two largest N
    (per run, then median)."""
    single = Figure(totals[1]) if 1 in totals else None
    sizes = sorted(size for size in totals if size > 1)
    if len(sizes) < 2:
        return single, None, None
    low, high = sizes[-2], sizes[-1]
    marginal = Figure([(b - a) / (high - low) for a, b in zip(totals[low], totals[high], strict=True)])
    return single, marginal, (low, high)


# ---------------------------------------------------------------------------------------------------------------
# Part 2: a whole class


def endless(stage_id: str) -> str:
    """The reference code of a stage whose first function never returns (overrides the real one)."""
    function = STAGE_BY_ID[stage_id].functions[0]
    return reference(stage_id) + f"\n\ndef {function}(board, *rest):\n    while True:\n        pass\n"


def build_class(folder: Path, size: int, mixed: bool) -> dict[str, int]:
    """size students, all correct or ~70% correct, ~25% one typical mistake, ~5% one stage that never ends."""
    perfect = {stage.id: reference(stage.id) for stage in STAGES}
    wrong = [(path.parent.name, path) for stage in STAGES for path in sorted((VARIANTS / stage.id).glob("wrong_*.py"))]
    mistakes = round(size * 0.25) if mixed else 0
    slow = max(1, round(size * 0.05)) if mixed else 0
    kinds = {"correct": 0, "mistake": 0, "time limit": 0}
    for i in range(size):
        sources = dict(perfect)
        if i >= size - slow:
            stage_id = STAGES[i % len(STAGES)].id
            sources[stage_id] = endless(stage_id)
            kinds["time limit"] += 1
        elif i >= size - slow - mistakes:
            stage_id, path = wrong[i % len(wrong)]
            sources[stage_id] = path.read_text()
            kinds["mistake"] += 1
        else:
            kinds["correct"] += 1
        for stage_id, text in sources.items():
            stage = STAGE_BY_ID[stage_id]
            target = folder / f"student{i:03d}" / stage.id / stage.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return kinds


def part_two(size: int, runs: int, say) -> tuple[Table, dict]:
    cores = os.cpu_count() or 1
    table = Table(
        f"2. A whole class: {size} submissions of all seven stages",
        [
            "class",
            "--jobs",
            "wall time",
            "children CPU / cores",
            "wall / that",
            "submissions/min",
            "grader peak RSS",
            "tree peak RSS",
            "full marks",
        ],
    )
    found = {}
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        tmp = Path(tmp)
        mixed_kinds = build_class(tmp / "mixed", size, mixed=True)
        build_class(tmp / "correct", size, mixed=False)
        mixed_name = ", ".join(f"{n} {k}" for k, n in mixed_kinds.items())
        plans = [
            ("mixed", mixed_name, 1, ["--time-limit", str(MIX_TIME_LIMIT)]),
            ("mixed", mixed_name, cores, ["--time-limit", str(MIX_TIME_LIMIT)]),
            ("correct", "all correct", 2, []),
        ]
        if cores != 2:
            plans.append(("correct", "all correct", cores, []))
        figures = {i: (Figure(), Figure(), Figure(), Figure(), Figure(), Figure()) for i in range(len(plans))}
        full = {}
        for run in range(runs):
            for i, (kind, _, jobs, extra) in enumerate(plans):
                out = tmp / f"out-{i}-{run}"
                result = checked(
                    measure(grade_command(tmp / kind, out, "--jobs", str(jobs), *extra), ROOT), f"{kind} --jobs {jobs}"
                )
                wall, per_minute, largest, tree, spread, efficiency = figures[i]
                wall.add(result.seconds)
                spread.add(children_cpu(out) / jobs)
                efficiency.add(result.seconds / (children_cpu(out) / jobs))
                per_minute.add(size / result.seconds * 60)
                largest.add(result.largest_rss)
                tree.add(result.tree_rss)
                full[i] = sum(total == 100 for total in read_totals(out))
                shutil.rmtree(out)
                say(f"  run {run + 1}: {kind} class, --jobs {jobs}: {result.seconds:.1f} s")
        for i, (kind, name, jobs, _) in enumerate(plans):
            wall, per_minute, largest, tree, spread, efficiency = figures[i]
            table.rows.append(
                [
                    name,
                    str(jobs),
                    wall.show(" s", 1),
                    spread.show(" s", 1),
                    efficiency.show("x", 2),
                    per_minute.show("", 1),
                    mb(largest.median),
                    mb(tree.median),
                    f"{full[i]}/{size}",
                ]
            )
            found[(kind, jobs)] = wall
            found[(kind, jobs, "efficiency")] = efficiency
    table.notes.append(
        f"The mixed class is graded with --time-limit {MIX_TIME_LIMIT} (CPU seconds per stage), so each of its "
        "time-limit hitters (one stage's first function loops forever) costs about that much; the correct class "
        "uses the default limit. Mistakes are the known-wrong variants of tests/variants/ (one stage each). "
        "Grader peak RSS: the largest single process of the run (wait4's ru_maxrss; the grader, each child is a "
        "separate, smaller process). Tree peak RSS: the grader and its children together, sampled every 0.2 s. "
        "Children CPU: the CPU time of every stage's processes, as the sandbox measured it (each results.json), "
        "summed over the class and divided by --jobs: the wall time a grader that costs nothing would take."
    )
    return table, found


def children_cpu(out: Path) -> float:
    """The CPU seconds of every stage child of a graded class, as the sandbox measured them."""
    total = 0.0
    for path in out.glob("*/results.json"):
        total += sum(stage["cpu_seconds"] for stage in json.loads(path.read_text())["extra_data"]["stages"].values())
    return total


# ---------------------------------------------------------------------------------------------------------------
# Part 3: where the time goes, per stage child


def bare_start(python: str, folder: Path) -> float:
    script = folder / "trivial.py"
    script.write_bytes(b"pass\n")
    started = time.perf_counter()
    subprocess.run([python, "-I", "-S", str(script)], check=True)
    return time.perf_counter() - started


def sandboxed_start(isolation: sandbox.Isolation) -> float:
    started = time.perf_counter()
    outcome = sandbox.run({"trivial.py": TRIVIAL_CHILD}, "trivial.py", b"", sandbox.PROBE_LIMITS, isolation)
    assert outcome.reply == b"ok", outcome
    return time.perf_counter() - started


def student_calls(stage, steps) -> float:
    """The student's own share: the reference module's functions called on every step's board, in this process."""
    module = load_reference(stage.id)
    started = time.perf_counter()
    for step in steps:
        function = getattr(module, step["call"])
        if step.get("memo"):
            module.memo.clear()
        function(list(step["args"][0]), *step["args"][1:])
    return time.perf_counter() - started


def unsandboxed_child(python: str, folder: Path, files: dict[str, bytes], job: bytes, more: bytes = b"") -> float:
    """The stage child with no sandbox: `python -I -S child.pyc` (child.py when the interpreters differ) in a folder,
    job on stdin, replies on fd 3, the hidden job (more) on fd 4 as the sandbox hands it over (here at once: only
    the time is measured)."""
    for name, content in files.items():
        (folder / name).write_bytes(content)
    read_end, write_end = os.pipe()
    more_read, more_write = os.pipe()
    chunks: list[bytes] = []

    def drain() -> None:
        while data := os.read(read_end, 1 << 16):
            chunks.append(data)

    def hand_over() -> None:
        with os.fdopen(more_write, "wb") as pipe:
            pipe.write(more)

    def descriptors() -> None:
        os.dup2(write_end, 3)
        os.dup2(more_read, sandbox.MORE_FD)

    started = time.perf_counter()
    process = subprocess.Popen(
        [python, "-I", "-S", str(folder / judge.child_program()[0])],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        close_fds=False,  # pass_fds would close fd 3 and 4 after preexec_fn made them
        preexec_fn=descriptors,
    )
    os.close(write_end)
    os.close(more_read)
    threads = [threading.Thread(target=drain), threading.Thread(target=hand_over)]
    for thread in threads:
        thread.start()
    process.communicate(job)
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    os.close(read_end)
    assert b"".join(chunks).count(b'"done": true') == (2 if more else 1), "the unsandboxed child did not finish"
    return seconds


def part_three(runs: int, say) -> tuple[Table, list[dict], Figure, Figure]:
    isolation = sandbox.detect()
    python, _ = sandbox.child_python()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        tmp = Path(tmp)
        bare, boxed, uncounted = Figure(), Figure(), Figure()
        # The same sandbox without the run's cgroup: what measuring CPU (and holding memory and processes) for the
        # whole stage costs per child.
        no_cgroup = dataclasses.replace(isolation, cgroups="none")
        for _ in range(max(runs, 20)):  # cheap: more runs, interleaved
            bare.add(bare_start(python, tmp))
            boxed.add(sandboxed_start(isolation))
            uncounted.add(sandboxed_start(no_cgroup))
        timed: list[float] = []
        real_run = sandbox.run

        def timed_run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return real_run(*args, **kwargs)
            finally:
                timed.append(time.perf_counter() - started)

        for stage in STAGES:
            source = reference(stage.id)
            plan = judge.stage_plan(stage.id)
            steps, job = plan.steps, plan.job
            program, child_bytes = judge.child_program()
            files = {program: child_bytes, stage.filename: source.encode()}
            child, parent, student, floor = Figure(), Figure(), Figure(), Figure()
            # warm the oracle's caches: they are per grader process
            judge.grade_stage(stage, source, isolation, seconds=sandbox.DEFAULT_STAGE_SECONDS)
            for _ in range(max(runs, 7)):  # interleaved: sandboxed, then the same child without a sandbox
                sandbox.run = timed_run
                try:
                    timed.clear()
                    started = time.perf_counter()
                    result = judge.grade_stage(stage, source, isolation, seconds=sandbox.DEFAULT_STAGE_SECONDS)
                    total = time.perf_counter() - started
                finally:
                    sandbox.run = real_run
                assert result.score == result.max_score, f"{stage.id}: the reference lost points"
                child.add(sum(timed))  # 04_memoization's memo experiment (and 08's prune one) has a child of its own
                parent.add(total - sum(timed))
                student.add(student_calls(stage, steps))
                floor.add(unsandboxed_child(python, tmp, files, job, plan.hidden_job if plan.hidden_ids else b""))
            rows.append(
                {
                    "stage": stage.id,
                    "steps": len(steps),
                    "child": child,
                    "student": student,
                    "parent": parent,
                    "floor": floor,
                }
            )
            say(f"  {stage.id}: child {child.median * 1000:.0f} ms, judging {parent.median * 1000:.0f} ms")
    start_cost = boxed.median - bare.median
    table = Table(
        "3. Where the time goes, per stage child (reference solutions; milliseconds)",
        [
            "stage",
            "calls",
            "sandboxed child",
            "student calls",
            "child, no sandbox (floor)",
            "child - floor",
            "judging (parent)",
            "overhead / bare start",
        ],
    )
    for row in rows:
        # The sandbox costs its start-up once per child; it does not slow the student's computation. The start-up
        # is measured on a trivial child over many interleaved runs, where the difference of two long, noisy child
        # runs (child - floor) is not a measurement of anything below its spread.
        sandbox_overhead = row["child"].median - row["floor"].median
        overhead = start_cost + row["parent"].median
        row["ratio"] = overhead / bare.median
        table.rows.append(
            [
                row["stage"],
                f"{row['steps']:,}",
                row["child"].show("", 0, 1000),
                row["student"].show("", 0, 1000),
                row["floor"].show("", 0, 1000),
                f"{sandbox_overhead * 1000:.0f}",
                row["parent"].show("", 0, 1000),
                f"{row['ratio']:.1f}x" + (" ✓" if row["ratio"] <= 2 else " ✗"),
            ]
        )
    table.notes += [
        f"Start-up of a trivial child: bare `{python} -I -S` {bare.show(' ms', 1, 1000)}; under the sandbox "
        f"({isolation.level}, uid switch, rlimits, temporary folder) {boxed.show(' ms', 1, 1000)}, so starting the "
        f"sandbox costs {start_cost * 1000:.1f} ms more ({len(bare.values)} interleaved runs each). Of that, the "
        f"run's cgroup (cgroup {isolation.cgroups}: created, entered, its CPU time read while it runs, removed), "
        f"which holds the stage's CPU time, memory and processes for all its processes together, costs "
        f"{(boxed.median - uncounted.median) * 1000:.1f} ms: the same sandbox without it starts in "
        f"{uncounted.show(' ms', 1, 1000)}.",
        "Sandboxed child: wall time of sandbox.run for the stage's whole job (start-up, import, every call, replies). "
        "Student calls: the reference module's functions called on every board of the job, in this process. "
        "Floor: the same child program and both jobs with no sandbox (`python -I -S child.pyc`, stdin, fd 3 and fd 4 "
        "pipes); child - floor is shown for reference, within the spread of those two runs for the long stages. "
        "Judging = grade_stage minus sandbox.run: parsing the replies and comparing them with the oracle's answers. "
        "Overhead / bare start = (the sandbox's start-up cost above + judging) / bare interpreter start; "
        "target: at most 2x.",
    ]
    return table, rows, bare, boxed


# ---------------------------------------------------------------------------------------------------------------
# Part 4: the lesson's own figures


def part_four(runs: int) -> Table:
    plain, memoized = load_reference("03_minimax"), load_reference("04_memoization")
    table = Table(
        "4. The lesson's figures: score of the empty board in the reference solutions",
        ["solution", "time", "calls of score", "positions searched"],
    )
    for name, module in (("plain minimax (stage 3)", plain), ("memoized (stage 4)", memoized)):
        original = module.score
        seconds, calls, searched = Figure(), 0, 0
        for _ in range(max(runs, 5)):
            if hasattr(module, "memo"):
                module.memo.clear()
            started = time.perf_counter()
            assert original([" "] * 9) == 0
            seconds.add(time.perf_counter() - started)
        counter = [0]

        def counted(board, original=original, counter=counter):
            counter[0] += 1
            return original(board)

        module.score = counted  # the recursion looks the global name up, so every call is counted
        if hasattr(module, "memo"):
            module.memo.clear()
        counted([" "] * 9)
        module.score = original
        calls = counter[0]
        searched = len(module.memo) if hasattr(module, "memo") else calls
        table.rows.append([name, seconds.show(" ms", 1, 1000), f"{calls:,}", f"{searched:,}"])
    table.notes.append(
        "Time: uncounted calls, memo cleared before each (median of 5 or more). Positions searched: calls that had to "
        "search (plain minimax searches on every call; the memoized one only for boards not yet in memo, i.e. "
        "memo's size afterwards). The lesson says 549,946 versus 5,478."
    )
    return table


# ---------------------------------------------------------------------------------------------------------------
# Part 5: Gradescope's run_autograder on one full submission


def unpacked_bundle(root: Path) -> None:
    """The Gradescope bundle laid out as Gradescope does (ROOT/source, ROOT/run_autograder), its bytecode and
    cache built as setup.sh builds them into the image."""
    from autograder.verbs import gradescope

    archive_path = root / "autograder.zip"
    gradescope.write_bundle(archive_path)
    source = root / "source"
    with zipfile.ZipFile(archive_path) as archive:
        for info in archive.infolist():
            path = source / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(info))
            path.chmod((info.external_attr >> 16) & 0o777)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    env = {**os.environ, "PYTHONPATH": str(source), "AUTOGRADE_CACHE": str(root / "cache")}
    checked(measure([sys.executable, "-m", "compileall", "-q", str(source / "autograder")], source, env), "compileall")
    checked(measure([sys.executable, "-m", "autograder.verbs.gradescope", "warm"], source, env), "warm")


def part_five(runs: int, say) -> tuple[Table, Figure | None]:
    table = Table(
        "5. Gradescope: run_autograder on one full submission (all ten stages, reference code)",
        ["cores", "wall time", "children CPU", "wall - children CPU", "score"],
    )
    over = Figure()
    with tempfile.TemporaryDirectory(prefix="bench-gs-") as tmp:
        root = Path(tmp)
        unpacked_bundle(root)
        for stage in STAGES:
            target = root / "submission" / stage.id / stage.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(reference(stage.id))
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
        env["AUTOGRADE_CACHE"] = str(root / "cache")
        env.pop("PYTHONPATH", None)
        wall, cpu, score = Figure(), Figure(), None
        for run in range(runs):
            result = checked(measure([str(root / "run_autograder")], root, env), "run_autograder")
            data = json.loads((root / "results" / "results.json").read_text())
            spent = sum(stage["cpu_seconds"] for stage in data["extra_data"]["stages"].values())
            wall.add(result.seconds)
            cpu.add(spent)
            over.add(result.seconds - spent)
            score = data["score"]
            say(f"  run {run + 1}: run_autograder {result.seconds:.2f} s, children CPU {spent:.2f} s")
    cores = len(os.sched_getaffinity(0))
    table.rows.append([str(cores), wall.show(" s"), cpu.show(" s"), over.show(" s"), f"{score}"])
    table.notes.append(
        "The bundle of `autograde gradescope`, unpacked as Gradescope does, its bytecode compiled and its cache "
        "warmed as setup.sh does once per image; each run is `run_autograder` (bash, then the grader) on the same "
        "submission, as one Gradescope container grades it, its stages in parallel on the container's cores. "
        "Children CPU: the CPU time of every stage's processes, as the sandbox measured it (results.json)."
    )
    return table, over


# ---------------------------------------------------------------------------------------------------------------
# The report


def verdicts(figures: dict) -> list[str]:
    """Each floor of the speed issue against this run's figure: met or MISSED."""
    lines = ["## Targets", ""]

    def floor(ok: bool, text: str) -> None:
        lines.append(f"- {'met' if ok else 'MISSED'}: {text}")

    ratios = figures.get("ratios") or {}
    if figures.get("single"):
        single = figures["single"].median
        floor(single <= 0.6, f"one stage-one submission, the whole `autograde grade`, at most 0.6 s: {single:.2f} s.")
    if figures.get("marginal"):
        marginal, (low, high) = figures["marginal"].median, figures["marginal_sizes"]
        floor(
            marginal <= 0.030,
            f"marginal cost per stage-one submission from {low} to {high} students at most 30 ms: "
            f"{marginal * 1000:.0f} ms.",
        )
    if ratios:
        size = max(ratios)
        ratio = ratios[size]["py"].median
        floor(
            ratio >= 40 and sandbox.detect().level == "bubblewrap",
            f"at least 40x nbgrader on {size} stage-one submissions with full isolation: {ratio:.1f}x (.py), "
            f"{ratios[size]['ipynb'].median:.1f}x (.ipynb), {sandbox.detect().level} isolation.",
        )
        over = ratios[size]["ipynb_over_py"].median
        floor(over <= 1.2, f"the .ipynb path within 1.2x of the .py path: {over:.2f}x.")
    class_walls = figures.get("class_walls") or {}
    cores = os.cpu_count() or 1
    if ("correct", cores, "efficiency") in class_walls:
        efficiency = class_walls[("correct", cores, "efficiency")].median
        floor(
            efficiency <= 1.10,
            f"a class of {CLASS_SIZE[0]} full submissions within 1.10x of its children's CPU time over the "
            f"{cores} cores: {efficiency:.2f}x.",
        )
    if figures.get("gradescope"):
        over = figures["gradescope"].median
        floor(over <= 1.0, f"Gradescope's run_autograder on one full submission within its children's CPU time + 1 s: "
              f"{over:+.2f} s.")  # fmt: skip
    return lines + [""]


def what_limits(ratios: dict, class_walls: dict, child_rows: list, bare: Figure | None, boxed: Figure | None) -> list:
    lines = ["## What limits it", ""]
    if child_rows:
        student = sum(row["student"].median for row in child_rows)
        child = sum(row["child"].median for row in child_rows)
        parent = sum(row["parent"].median for row in child_rows)
        floor = sum(row["floor"].median for row in child_rows)
        lines.append(
            f"One correct seven-stage submission costs {child + parent:.2f} s of one core: {student:.2f} s in the "
            f"student's own calls, {floor - student:.2f} s more for the unsandboxed children (7 interpreter starts, "
            f"imports and per-call bookkeeping), {child - floor:.2f} s for the sandbox and "
            f"{parent:.2f} s judging in the parent."
        )
        lines.append("")
        if ("correct", 2) in class_walls and CLASS_SIZE[0] == 100:
            wall = class_walls[("correct", 2)].median
            lines.append(
                f"**A class of 100.** 100 x {child + parent:.2f} s over 2 cores is "
                f"{100 * (child + parent) / 2:.0f} s before any per-run cost; measured {wall:.0f} s. The floor is the "
                f"student code the hidden checks call ({student:.2f} s per submission, {100 * student / 2:.0f} s for "
                "the class on 2 cores): the plain searches of stages 2, 3 and 6 (count_games, score/choose_move, "
                "count_results over about a thousand sampled boards each) dominate. Isolation itself is "
                f"{child - floor:.2f} s per submission."
            )
            lines.append("")
        first = child_rows[0]
        if ratios and ratios[max(ratios)]["py"].median < 40:
            size = max(ratios)
            lines.append(
                f"**40x nbgrader.** At N={size} the ratio is {ratios[size]['py'].median:.1f}x. A stage-one child "
                f"costs {first['child'].median * 1000:.0f} ms, of which the student's {first['steps']:,} calls take "
                f"{first['student'].median * 1000:.0f} ms and the same child without a sandbox "
                f"{first['floor'].median * 1000:.0f} ms; the parent spends {first['parent'].median * 1000:.0f} ms "
                "judging. Our suite also makes about 30 times nbgrader's calls."
            )
            lines.append("")
        heavy = [row for row in child_rows if row["ratio"] > 2]
        if heavy:
            lines.append(
                "**Overhead per stage child.** Starting the sandbox costs "
                f"{(boxed.median - bare.median) * 1000:.0f} ms over a bare {bare.median * 1000:.0f} ms start, but the "
                "stages with thousands of calls ("
                + ", ".join(f"{row['stage']} {row['steps']:,} calls" for row in heavy)
                + ") add enough judging in the parent, comparing every one of their calls, to pass 2x."
            )
            lines.append("")
    return lines if len(lines) > 2 else []  # without part 3's per-child figures there is nothing to say


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke test: small sizes, one run each, no results.md")
    parser.add_argument("--runs", type=int, help="repetitions of parts 1, 3 and 4 (default 3; --quick 1)")
    parser.add_argument("--class-runs", type=int, help="repetitions of part 2 (default 3; --quick 1)")
    parser.add_argument("--parts", default="1,2,3,4,5", help="which parts to run (default: all)")
    parser.add_argument("--out", type=Path, help="where to write the report (default bench/results.md; --quick none)")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    class_runs = args.class_runs or (1 if args.quick else 3)
    sizes = [1, 5] if args.quick else [1, 20, 100]
    class_size = 10 if args.quick else 100
    CLASS_SIZE[0] = class_size
    parts = {int(p) for p in args.parts.split(",") if p.strip()}
    out = args.out or (None if args.quick else ROOT / "bench" / "results.md")

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    started = time.perf_counter()
    facts = machine()
    say("Machine: " + "; ".join(f"{k} {v}" for k, v in facts.items()))
    tables, ratios, walls, child_rows, bare, boxed = [], {}, {}, [], None, None
    found: dict = {}  # the whole-command and Gradescope figures the targets read
    if 4 in parts:
        say("Part 4: the lesson's figures")
        tables.append(part_four(runs))
    if 3 in parts:
        say("Part 3: per stage child")
        table, child_rows, bare, boxed = part_three(runs, say)
        tables.append(table)
    if 1 in parts:
        if importlib.util.find_spec("nbgrader") is None:
            raise SystemExit("bench: nbgrader is not installed: pip install -e '.[notebooks]' (make bench does)")
        say(f"Part 1: against nbgrader, N = {sizes}")
        table, ratios, totals = part_one(sizes, runs, say)
        tables.insert(0, table)
        found["single"], found["marginal"], found["marginal_sizes"] = whole_command_figures(totals)
    if 2 in parts:
        say(f"Part 2: a class of {class_size}")
        table, walls = part_two(class_size, class_runs, say)
        tables.insert(1 if 1 in parts else 0, table)
    if 5 in parts:
        say("Part 5: Gradescope")
        table, found["gradescope"] = part_five(runs, say)
        tables.append(table)
    tables.sort(key=lambda t: t.title)
    for table in tables:
        table.print()
    summary = verdicts({**found, "ratios": ratios, "class_walls": walls})
    summary += what_limits(ratios, walls, child_rows, bare, boxed)
    print("\n".join(summary))
    if out is not None:
        command = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, ROOT), *sys.argv[1:]])
        lines = [
            "# Benchmark results",
            "",
            "Generated by `make bench`; the exact command of this run (from the top of the checkout):",
            "",
            "```sh",
            command,
            "```",
            "",
            f"It took {(time.perf_counter() - started) / 60:.1f} minutes. Each figure is the median of the runs, "
            "with the spread (min-max) in brackets. "
            f"Runs: {runs} per figure in parts 1, 3, 4 and 5 (part 3's start-up figures: 20 or more)"
            + (f", {class_runs} per figure in part 2." if 2 in parts else "; part 2 was not run."),
            "",
            "Machine: " + "; ".join(f"{k}: {v}" for k, v in facts.items()) + ".",
            "",
        ]
        lines += summary
        lines += ["## Figures", ""] + [table.markdown() for table in tables]
        out.write_text("\n".join(lines))
        say(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
