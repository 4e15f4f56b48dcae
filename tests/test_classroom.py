"""Does the release's GitHub Classroom workflow grade each stage's visible tests, for its points, and nothing else?"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.authoring import markers, release
from autograder.course.stages import BONUS_POINTS, STAGES, TOTAL_POINTS

GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("classroom") / "course"
    release.write_release(out)
    return out


def steps(released: Path) -> list[dict]:
    workflow = yaml.safe_load((released / release.CLASSROOM_WORKFLOW).read_text())
    (job,) = workflow["jobs"].values()
    return job["steps"]


def test_one_graded_step_per_stage_with_its_points(released):
    graders = [step for step in steps(released) if step.get("uses") == GRADER]
    assert [step["with"]["command"] for step in graders] == [
        f"python -m pytest assignments/{stage.id} -q" for stage in STAGES
    ]
    assert [step["with"]["max-score"] for step in graders] == [stage.points for stage in STAGES]
    assert sum(step["with"]["max-score"] for step in graders) == TOTAL_POINTS + BONUS_POINTS
    (reporter,) = [step for step in steps(released) if step.get("uses") == REPORTER]
    ids = [step["id"] for step in graders]
    assert reporter["with"]["runners"] == ",".join(ids)
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{ steps.{i}.outputs.result }}}}" for i in ids}


def test_a_graded_command_fails_on_the_starter_and_passes_on_the_reference(released, tmp_path):
    """The first stage's step command (every step has its form, above), run in the released copy: exit 1 on the
    starter, 0 with the reference filled in. It needs only released files, so only the visible tests."""
    stage = STAGES[0]
    (step,) = [step for step in steps(released) if step.get("uses") == GRADER and stage.id in step["with"]["command"]]
    command = step["with"]["command"].replace("python", sys.executable, 1).split()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    starter = subprocess.run(command, cwd=released, capture_output=True, text=True, env=env, timeout=120)
    assert starter.returncode == 1, starter.stdout[-2000:]
    solved = tmp_path / "solved"
    shutil.copytree(released, solved)
    code = markers.solution_code(stage.solution_path.read_text())
    (solved / "assignments" / stage.id / stage.filename).write_text(code)
    run = subprocess.run(command, cwd=solved, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]


def test_the_leak_check_covers_the_workflow(released):
    secret = next(s for s in release.solution_lines() if "best_score" in s.text)
    workflow = released / release.CLASSROOM_WORKFLOW
    original = workflow.read_text()
    try:
        workflow.write_text(original + f"# {secret.text}\n")
        problems = release.leaks(released)
    finally:
        workflow.write_text(original)
    line = len(original.splitlines()) + 1
    assert [p.split(": ", 1)[0] for p in problems] == [f"{release.CLASSROOM_WORKFLOW}:{line}"], problems
