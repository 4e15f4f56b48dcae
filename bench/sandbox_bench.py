"""What does isolation cost per child? Median wall time of a trivial child: bare, rlimits level, bubblewrap level.

Run: .venv/bin/python bench/sandbox_bench.py [--runs 30]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from autograder import sandbox  # noqa: E402

CHILD = b"import os\ntry:\n    os.write(3, b'ok')\nexcept OSError:\n    print('ok')\n"


def bare(python: str, script: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run([python, "-I", "-S", str(script)], capture_output=True, check=True)
    assert result.stdout == b"ok\n"
    return time.perf_counter() - start


def sandboxed(level: sandbox.Isolation) -> float:
    start = time.perf_counter()
    outcome = sandbox.run({"child.py": CHILD}, "child.py", b"", sandbox.Limits(), level)
    assert outcome.reply == b"ok", outcome
    return time.perf_counter() - start


def summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    quartiles = statistics.quantiles(ms, n=4)
    return (
        f"median {statistics.median(ms):6.1f} ms  (quartiles {quartiles[0]:.1f}-{quartiles[2]:.1f}, max {ms[-1]:.1f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    python, _ = sandbox.child_python()
    detected = sandbox.detect()
    modes = {"bare subprocess": None, "rlimits": sandbox.Isolation("rlimits", "bench")}
    if detected.level == "bubblewrap":
        modes["bubblewrap"] = detected
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
        print(f"  {name:<16} {summary(measured)}  x{statistics.median(measured) / base:.2f}")
    if "bubblewrap" not in modes:
        print(f"  bubblewrap       not measured: {detected.detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
