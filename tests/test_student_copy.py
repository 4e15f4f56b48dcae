"""Is the student copy a course on its own? Made by `autograde release`, set up with its own README's install line
in a fresh virtual environment (it needs the package registry), it plays a match, stops an endless loop in under
a minute with a sentence that says so, and can be released a few stages at a time."""

import os
import re
import subprocess
import sys
import time

import pytest

from autograder.authoring import release
from autograder.authoring.markers import solution_code
from autograder.course.stages import STAGE_BY_ID

ENDLESS_WINNER = "\n\ndef winner(board):\n    while True:\n        pass\n"


def install_lines(readme: str) -> list[str]:
    """The pip lines of the README's "Set up once" block, as a student types them."""
    block = re.search(r"## Set up once\n\n```sh\n(.*?)```", readme, re.DOTALL).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip().startswith("pip ")]


@pytest.mark.slow
def test_the_student_copy_works_on_its_own(tmp_path):
    copy = tmp_path / "copy"
    assert release.main([str(copy)]) == 0
    lines = install_lines((copy / "README.md").read_text())
    assert lines == ["pip install -r requirements.txt"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PIP_DISABLE_PIP_VERSION_CHECK="1")

    def run(command: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(command, shell=True, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)

    installed = run(lines[0])
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # The payoff: the student's minimax (here the reference's) plays a seeded match of 100 games and never loses.
    minimax = STAGE_BY_ID["03_minimax"]
    (copy / "assignments" / minimax.id / minimax.filename).write_text(solution_code(minimax.solution_path.read_text()))
    match = run("python play.py --x minimax --o random --games 100 --seed 1")
    assert match.returncode == 0, match.stdout + match.stderr
    assert "100 games, seed 1" in match.stdout and "never lost" in match.stdout
    assert run("python play.py --x minimax --o random --games 100 --seed 1").stdout == match.stdout

    # An endless loop in winner: every test of stage 1 still reports, and the run ends within a minute.
    rules = STAGE_BY_ID["01_rules"]
    (copy / "assignments" / rules.id / rules.filename).write_text(
        solution_code(rules.solution_path.read_text()) + ENDLESS_WINNER
    )
    started = time.monotonic()
    looped = run(f"pytest assignments/{rules.id}", timeout=120)
    assert time.monotonic() - started < 60
    assert looped.returncode == 1, looped.stdout
    assert "winner (assignments/01_rules/rules.py line " in looped.stdout
    assert "did not finish in 10 s: look for a loop that never ends" in looped.stdout
    assert re.search(r"\d+ failed, [1-9]\d* passed", looped.stdout), looped.stdout  # to_move's tests still ran

    # A staged release: stages 1 and 2 only.
    staged = tmp_path / "staged"
    assert release.main([str(staged), "--stages", "1,2"]) == 0
    assert sorted(p.name for p in (staged / "assignments").iterdir() if p.is_dir()) == ["01_rules", "02_count_games"]
