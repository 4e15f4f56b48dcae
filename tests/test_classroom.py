"""Does the release's GitHub Classroom workflow grade each assigned stage's visible tests, for its points, out of
the final grade's possible points, and show the other stages' tests without scoring them or failing the check?"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.authoring import markers, release
from autograder.course.stages import BONUS_STAGES, STAGE_BY_ID, STAGES, TOTAL_POINTS

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


def graded(workflow_steps: list[dict]) -> dict[str, int]:
    """Stage id -> max-score of each command grader step, which the reporter reads."""
    graders = [step for step in workflow_steps if step.get("uses") == GRADER]
    (reporter,) = [step for step in workflow_steps if step.get("uses") == REPORTER]
    ids = [step["id"] for step in graders]
    assert reporter["with"]["runners"] == ",".join(ids)
    assert reporter["env"] == {f"{i.upper()}_RESULTS": f"${{{{ steps.{i}.outputs.result }}}}" for i in ids}
    return {step["with"]["command"].split("/")[1].split()[0]: step["with"]["max-score"] for step in graders}


def shown(workflow_steps: list[dict]) -> dict[str, str]:
    """Stage id -> the script of each step that runs a stage's tests for no points."""
    return {
        step["run"].split("assignments/")[1].split()[0]: step["run"]
        for step in workflow_steps
        if "pytest assignments/" in step.get("run", "")
    }


def test_one_graded_step_per_core_stage_with_its_points(released):
    """Without course settings every core stage is scored and the bonus is apart: the maximum is 100, not 130."""
    scored = graded(steps(released))
    assert scored == {stage.id: stage.points for stage in STAGES if not stage.bonus}
    assert sum(scored.values()) == TOTAL_POINTS
    assert (released / release.CLASSROOM_WORKFLOW).read_text().count(f"out of {TOTAL_POINTS} points") == 1
    bonus = shown(steps(released))
    assert set(bonus) == {stage.id for stage in BONUS_STAGES}
    assert all("reports it apart from the grade" in script for script in bonus.values())


POLICY = """\
[grade]
assigned = ["01_rules", "02_count_games", "03_minimax"]
"""


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        (
            'bonus = "extra"\nbonus_cap = 5',
            "a bonus stage: extra credit in the instructor's final grade (at most 5 points)",
        ),
        ('bonus = "off"', "a bonus stage, not counted in this course"),
    ],
)
def test_the_course_policy_decides_what_is_scored(tmp_path, capsys, rule, words):
    """`autograde release --policy`: the assigned stages scored (the maximum is their 40 points), the others shown."""
    policy = tmp_path / "course-policy.toml"
    policy.write_text(POLICY + rule + "\n")
    assert release.main([str(tmp_path / "out"), "--policy", str(policy)]) == 0, capsys.readouterr().err
    workflow_steps = steps(tmp_path / "out")
    assert graded(workflow_steps) == {"01_rules": 10, "02_count_games": 10, "03_minimax": 20}
    others = shown(workflow_steps)
    assert list(others) == [
        stage.id for stage in STAGES if stage.id not in ("01_rules", "02_count_games", "03_minimax")
    ]
    for stage_id, script in others.items():
        expected = words if STAGE_BY_ID[stage_id].bonus else "not assigned in this course: it counts for nothing"
        assert script.count(expected) == 2, script  # said whether the tests pass or not


def test_a_policy_that_cannot_be_used_releases_nothing(tmp_path, capsys):
    policy = tmp_path / "course-policy.toml"
    policy.write_text('[grade]\nbonus = "sometimes"\n')
    existing = tmp_path / "out"
    existing.mkdir()
    (existing / "keep.txt").write_text("an earlier release")
    assert release.main([str(existing), "--policy", str(policy), "--force"]) == 2
    error = capsys.readouterr().err
    assert "grade.bonus must be one of 'apart', 'extra', 'off'" in error and error.count("\n") == 1
    assert [path.name for path in existing.iterdir()] == ["keep.txt"], "--force deleted OUT before the policy was read"


def test_a_shown_step_says_how_the_tests_went_and_never_fails(released, tmp_path):
    """A bonus stage's script, run by bash -e as GitHub runs it: exit 0 on the starter with a notice that its tests
    do not pass yet, and a notice that they pass once the reference is filled in."""
    stage = BONUS_STAGES[0]
    script = shown(steps(released))[stage.id]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    command = ["bash", "-e", "-c", script]
    starter = subprocess.run(command, cwd=released, capture_output=True, text=True, env=env, timeout=120)
    assert starter.returncode == 0, starter.stdout[-2000:]
    assert f"::notice title={stage.id}::its visible tests do not pass yet; " in starter.stdout
    solved = tmp_path / "solved"
    shutil.copytree(released, solved)
    (solved / "assignments" / stage.id / stage.filename).write_text(
        markers.solution_code(stage.solution_path.read_text())
    )
    run = subprocess.run(command, cwd=solved, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and f"::notice title={stage.id}::its visible tests pass; " in run.stdout, run.stdout


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
