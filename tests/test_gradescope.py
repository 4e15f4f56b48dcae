"""Does the Gradescope bundle grade a submission in a stand-in /autograder as `autograde grade` would?

Each test unpacks the bundle into a temporary root (AUTOGRADER_ROOT) and runs its run_autograder with this
environment's interpreter (AUTOGRADER_PYTHON), because setup.sh installs from apt and PyPI: here it is only
syntax-checked. Every results.json is validated against tests/schemas/gradescope-results.schema.json, written
from Gradescope's published format.
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.authoring import build
from autograder.course.stages import BONUS_POINTS, STAGES, TOTAL_POINTS
from autograder.verbs import gradescope

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "gradescope-results.schema.json").read_text())


# Two core stages assigned (20 points), the bonus as extra credit up to 5, and due dates long past: a bundle
# made from it grades with the first two and never applies the lateness (Gradescope's own business).
POLICY = """\
time_zone = "UTC"
[grade]
assigned = ["01_rules", "02_count_games"]
bonus = "extra"
bonus_cap = 5

[due]
01_rules = 2020-01-01T00:00:00
08_alpha_beta = 2020-01-01T00:00:00

[late]
percent = 100
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert gradescope.main([str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def policy_bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("policy-bundle")
    (folder / "course-policy.toml").write_text(POLICY)
    out = folder / "autograder.zip"
    assert gradescope.main([str(out), "--policy", str(folder / "course-policy.toml")]) == 0
    return out


def unpack(bundle: Path, root: Path) -> Path:
    """Lay the bundle out as Gradescope does: unzipped in ROOT/source, run_autograder copied to ROOT."""
    source = root / "source"
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            path = source / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(info))
            path.chmod((info.external_attr >> 16) & 0o777)  # zipfile drops modes that unzip keeps
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    return root


def grade(bundle: Path, root: Path, files: dict[str, str], **env: str) -> tuple[dict, subprocess.CompletedProcess]:
    """Put files in ROOT/submission, run run_autograder, and return the validated results.json."""
    unpack(bundle, root)
    for name, text in files.items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    environment = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable, **env}
    environment.pop("PYTHONPATH", None)
    done = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, env=environment, timeout=600)
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA, cls=jsonschema.Draft202012Validator)
    return results, done


def reference(stage) -> str:
    return build.solution_code(stage.solution_path.read_text())


def test_schema_is_valid_and_strict():
    """Is the schema itself valid, and does it reject what Gradescope would (bad status, visibility, format)?"""
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert validator.is_valid({"score": 3, "tests": [{"score": 1, "status": "passed", "visibility": "visible"}]})
    for wrong in (
        {},
        {"tests": [{"name": "no score anywhere"}]},
        {"score": 1, "visibility": "public"},
        {"score": 1, "output_format": "markdown"},
        {"score": 1, "tests": [{"score": 1, "status": "ok"}]},
        {"score": "1"},
        {"score": 1, "scroe": 2},
    ):
        assert not validator.is_valid(wrong), wrong


def test_bundle_layout(bundle, tmp_path):
    """Does the zip hold executable setup.sh and run_autograder, valid bash, and what the grader reads?"""
    with zipfile.ZipFile(bundle) as archive:
        modes = {info.filename: (info.external_attr >> 16) & 0o777 for info in archive.infolist()}
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    for stage in STAGES:
        assert f"solutions/{stage.id}/{stage.filename}" in modes
        assert f"assignments/{stage.id}/test_{stage.module}.py" in modes
    assert {"pyproject.toml", "autograder/grading/grade.py", "autograder/course/checks/visible.py"} <= set(modes)
    assert not [name for name in modes if "__pycache__" in name or name.startswith(("tests/", "nbgrader/"))]
    root = unpack(bundle, tmp_path)
    for script in ("source/setup.sh", "run_autograder"):
        assert os.access(root / script, os.X_OK)
        subprocess.run(["bash", "-n", str(root / script)], check=True)
    again = tmp_path / "again.zip"
    gradescope.write_bundle(again)
    assert again.read_bytes() == bundle.read_bytes(), "the bundle should be the same bytes for the same sources"


@pytest.mark.slow
def test_reference_gets_full_marks(bundle, tmp_path):
    """Do the reference solutions, in stage folders, score every point, graded by the bundle's own grader?"""
    files = {f"{stage.id}/{stage.filename}": reference(stage) for stage in STAGES}
    results, done = grade(bundle, tmp_path, files)
    assert done.returncode == 0, done.stderr
    assert f"grader: {tmp_path / 'source' / 'autograder'}" in done.stdout
    # Without --policy the bonus is reported apart: the score is the core stages' alone, out of their points.
    assert results["score"] == TOTAL_POINTS == results["extra_data"]["final"]["points"]
    assert results["extra_data"]["final"]["bonus_earned"] == BONUS_POINTS
    assert f"score: {TOTAL_POINTS} of {TOTAL_POINTS};" in done.stdout
    assert all(test["status"] == "passed" for test in results["tests"])
    core = [test for test in results["tests"] if "bonus" not in test.get("tags", [])]
    assert sum(test["max_score"] for test in core) == TOTAL_POINTS


def test_setup_builds_the_cache_once_and_each_run_reads_it(bundle, tmp_path):
    """Does setup.sh's warm step leave every stage's checks and plan in the grader's cache, so that grading a
    submission afterwards reads them and builds (writes) nothing?"""
    root, cache = unpack(bundle, tmp_path / "gs"), tmp_path / "cache"
    environment = {**os.environ, "AUTOGRADE_CACHE": str(cache), "PYTHONPATH": str(root / "source")}
    warm = [sys.executable, "-m", "autograder.verbs.gradescope", "warm"]
    done = subprocess.run(warm, cwd=root / "source", env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"cache: {len(STAGES)} stages' checks and plans in {cache}" in done.stdout
    built = {path.name: path.stat().st_mtime_ns for path in cache.iterdir()}
    kept = {name.split("-", 2)[2] for name in built}  # SUITE-pyXY-NAME.pickle (course/cache.py)
    for stage in STAGES:
        assert {f"{stage.id}.pickle", f"{stage.id}-plan.pickle", f"{stage.id}-outline.pickle"} <= kept, stage.id
    results, done = grade(bundle, root, {"rules.py": reference(STAGES[0])}, AUTOGRADE_CACHE=str(cache))
    assert done.returncode == 0 and results["extra_data"]["stages"]["01_rules"]["score"] == STAGES[0].points
    assert {path.name: path.stat().st_mtime_ns for path in cache.iterdir()} == built  # read, not rebuilt


@pytest.mark.slow
def test_starters_get_nothing(bundle, tmp_path):
    """Do the starters, uploaded flat (Gradescope's usual layout), score 0 with every test failed?"""
    results, done = grade(bundle, tmp_path, {stage.filename: build.starter(stage) for stage in STAGES})
    assert done.returncode == 0, done.stderr
    assert results["score"] == 0
    assert all(test["status"] == "failed" for test in results["tests"])
    outcomes = {test["extra_data"]["outcome"] for test in results["tests"]}
    assert "missing" not in outcomes, "every starter was found, so no stage should be missing"


@pytest.mark.slow
def test_buggy_submission_scores_in_between_under_the_fallback(bundle, tmp_path):
    """Does one bug cost points in its stage only, also where namespaces are forbidden (rlimits fallback)?"""
    files = {stage.filename: reference(stage) for stage in STAGES}
    assert "(0, 4, 8), (2, 4, 6)," in files["rules.py"]
    files["rules.py"] = files["rules.py"].replace("(0, 4, 8), (2, 4, 6),", "(0, 4, 8),")  # forget a diagonal
    results, done = grade(bundle, tmp_path, files, AUTOGRADE_ISOLATION="rlimits")
    assert done.returncode == 0, done.stderr
    assert 0 < results["score"] < TOTAL_POINTS + BONUS_POINTS
    assert results["extra_data"]["isolation"]["level"] == "rlimits"
    assert "rlimits" in results["output"]
    failed = {test["extra_data"]["check"] for test in results["tests"] if test["status"] == "failed"}
    assert "winner/diagonals" in failed
    assert {test["extra_data"]["stage"] for test in results["tests"] if test["status"] == "failed"} == {"01_rules"}


def test_the_policy_bundle_holds_its_grade_table_and_no_lateness(policy_bundle, tmp_path):
    """Does --policy bundle the [grade] table as the settings run() reads, and nothing of the due dates?"""
    with zipfile.ZipFile(policy_bundle) as archive:
        text = archive.read(gradescope.SETTINGS_FILE).decode()
        assert "course-policy.toml" not in archive.namelist()
    (tmp_path / gradescope.SETTINGS_FILE).write_text(text)
    settings = gradescope.read_settings(tmp_path)
    assert settings.assigned == ("01_rules", "02_count_games") and settings.possible == 20
    assert (settings.bonus, settings.bonus_cap) == ("extra", 5)
    assert "2020" not in text and "[due]" not in text and "[late]" not in text
    again = tmp_path / "again.zip"
    gradescope.write_bundle(again, settings)
    assert again.read_bytes() == policy_bundle.read_bytes()


def test_a_policy_that_cannot_be_used_writes_no_bundle(tmp_path, capsys):
    """Is a bad [grade] table refused in one line, exit 2, before any zip is written?"""
    policy = tmp_path / "course-policy.toml"
    policy.write_text('[grade]\nassigned = ["08_alpha_beta"]\n')
    assert gradescope.main([str(tmp_path / "out.zip"), "--policy", str(policy)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "bonus stage '08_alpha_beta'" in error
    assert not (tmp_path / "out.zip").exists()
    assert gradescope.main([str(tmp_path / "out.zip"), "--policy", str(tmp_path / "none.toml")]) == 2
    assert not (tmp_path / "out.zip").exists()


@pytest.mark.slow
def test_the_score_is_the_final_grade_of_the_bundled_settings(policy_bundle, tmp_path):
    """With stages 1 and 2 assigned and a capped extra-credit bonus: is the score the final grade's points, out of
    the assigned points, with the policy's due dates (long past) never applied?"""
    files = {stage.filename: reference(stage) for stage in STAGES if stage.id in ("01_rules", "08_alpha_beta")}
    results, done = grade(policy_bundle, tmp_path, files)
    assert done.returncode == 0, done.stderr
    final = results["extra_data"]["final"]
    assert results["score"] == final["points"] == 10 + 5  # 01_rules, then 10 bonus points capped at 5
    assert (final["possible"], final["bonus"], final["bonus_earned"]) == (20, 5, 10)
    assert final["stages"]["03_minimax"]["counted"] == "not assigned"
    assert "late" not in results["extra_data"] and final["penalty"] == 0
    assert "score: 15 of 20;" in done.stdout
    assert "final: Bonus: +5 extra credit (10 earned, at most 5)." in done.stdout


def test_grader_failure_still_writes_results(bundle, tmp_path):
    """When the grader cannot run at all, does the student get a valid results.json saying so, not a blank page?"""
    results, done = grade(bundle, tmp_path, {}, AUTOGRADER_PYTHON=str(tmp_path / "no-such-python"))
    assert done.returncode != 0
    assert results["score"] == 0 and "not a grade" in results["output"]


def test_student_name_comes_from_the_metadata(tmp_path):
    """Is the student named from Gradescope's submission_metadata.json, with a fallback when it is absent?"""
    assert gradescope.student_name(tmp_path) == "submission"
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "ada@example.edu"}]}))
    assert gradescope.student_name(tmp_path) == "ada@example.edu"
    assert gradescope.main([str(tmp_path / "bundle.tar")]) == 2
    assert not (tmp_path / "bundle.tar").exists()
