"""What does isolation cost per child? Median wall time of a trivial child: bare, rlimits level, bubblewrap level,
each with the whole run's cgroup and without; then what measuring CPU per stage costs, step by step (creating the
run's cgroup, entering it, one look at its CPU time and memory, removing it).

Run: .venv/bin/python bench/sandbox_bench.py [--runs 30]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from autograder.grading import sandbox  # noqa: E402
from autograder.grading.sandbox.cgroups import cgroup_tree  # noqa: E402
from autograder.grading.sandbox.host import tool  # noqa: E402
from autograder.grading.sandbox.wrapper import SH, WRAPPER  # noqa: E402

CHILD = b"import os\ntry:\n    os.write(3, b'ok')\nexcept OSError:\n    print('ok')\n"


def bare(python: str, script: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run([python, "-I", "-S", str(script)], capture_output=True, check=True)
    assert result.stdout == b"ok\n"
    return time.perf_counter() - start


def sandboxed(level: sandbox.Isolation) -> float:
    start = time.perf_counter()
    outcome = sandbox.run({"child.py": CHILD}, "child.py", b"", sandbox.PROBE_LIMITS, level)
    assert outcome.reply == b"ok", outcome
    return time.perf_counter() - start


def spawn(argv: list[str]) -> float:
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, {})
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    return time.perf_counter() - start


def summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    quartiles = statistics.quantiles(ms, n=4)
    return (
        f"median {statistics.median(ms):6.1f} ms  (quartiles {quartiles[0]:.1f}-{quartiles[2]:.1f}, max {ms[-1]:.1f})"
    )


def cgroup_steps(runs: int) -> dict[str, list[float]] | None:
    """Each step of a run's cgroup on its own, interleaved: create, enter (the /bin/sh wrapper), look, remove."""
    tree, _ = cgroup_tree()
    if tree is None:
        return None
    true = tool("true") or "/bin/true"
    steps: dict[str, list[float]] = {name: [] for name in ("create", "enter", "look", "remove")}
    for _ in range(runs):
        # As far apart as real runs: entering a cgroup right after another entry can skip waits a lone one pays.
        time.sleep(0.02)
        start = time.perf_counter()
        group = tree.create(sandbox.PROBE_LIMITS, 0)
        created = time.perf_counter()
        try:
            wrapped = spawn([SH, "-c", WRAPPER, "sh", "t", *group.enter_files, "--", true])
            steps["enter"].append(wrapped - spawn([true]))  # the wrapper's cost over starting the program itself
            looked = time.perf_counter()
            group.cpu_seconds()
            group.oom_kills()
            steps["look"].append(time.perf_counter() - looked)
        finally:
            removing = time.perf_counter()
            group.remove()
            steps["remove"].append(time.perf_counter() - removing)
        steps["create"].append(created - start)
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    python, _ = sandbox.child_python()
    detected = sandbox.detect()
    cgroups = sandbox.cgroups_in_use()
    modes: dict[str, sandbox.Isolation | None] = {"bare subprocess": None}
    levels = [sandbox.Isolation("rlimits", "bench")] if sandbox.is_root() else []
    if detected.level == "bubblewrap":
        levels.append(detected)
    for level in levels:
        if cgroups != "none":
            modes[f"{level.level}, cgroup {cgroups}"] = replace(level, cgroups=cgroups)
        modes[f"{level.level}, no cgroup"] = replace(level, cgroups="none")
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "child.py"
        script.write_bytes(CHILD)
        times: dict[str, list[float]] = {name: [] for name in modes}
        for _ in range(runs):  # interleaved, so a burst of load on the machine hits every mode alike
            for name, level in modes.items():
                times[name].append(bare(python, script) if level is None else sandboxed(level))
    print(f"{runs} runs of a trivial child ({python} -I -S, replies b'ok'); detected level: {detected.level}")
    base = statistics.median(times["bare subprocess"])
    for name, measured in times.items():
        print(f"  {name:<28} {summary(measured)}  x{statistics.median(measured) / base:.2f}")
    if detected.level != "bubblewrap":
        print(f"  bubblewrap                   not measured: {detected.detail}")
    for level in levels:
        with_cgroup, without = f"{level.level}, cgroup {cgroups}", f"{level.level}, no cgroup"
        if with_cgroup in times:
            extra = statistics.median(times[with_cgroup]) - statistics.median(times[without])
            print(f"  measuring CPU per stage at the {level.level} level adds {extra * 1000:.1f} ms a run (medians)")

    steps = cgroup_steps(max(runs, 20))
    if steps is None:
        print(f"cgroups: none ({cgroup_tree()[1]}): nothing to measure")
        return 0
    print(f"the run's cgroup ({cgroups}), step by step, median of {max(runs, 20)}:")
    labels = {
        "create": "create it (mkdir per hierarchy, memory/pids/CPU weight)",
        "enter": "enter it (/bin/sh wrapper, over the program alone)",
        "look": "one look while supervising (CPU time, memory kills)",
        "remove": "remove it (rmdir per hierarchy)",
    }
    total = 0.0
    for name, measured in steps.items():
        median = statistics.median(measured)
        total += median
        print(f"  {labels[name]:<58} {median * 1000:6.2f} ms")
    print(f"  {'together':<58} {total * 1000:6.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
