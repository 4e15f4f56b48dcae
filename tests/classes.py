"""Building small classes of submissions for the tests, and grading them with the real grader."""

import csv
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from autograder.authoring.markers import solution_code
from autograder.course.stages import ROOT, STAGE_BY_ID, STAGES


def reference(stage_id: str) -> str:
    """The reference solution of a stage as a student would hand it in (no markers)."""
    return solution_code(STAGE_BY_ID[stage_id].solution_path.read_text())


def starter(stage_id: str) -> str:
    return STAGE_BY_ID[stage_id].starter_path.read_text()


def write_student(folder: Path, sources: dict[str, str], nested: bool = True) -> Path:
    """A student folder holding the given stage sources, nested (01_rules/rules.py) or flat (rules.py)."""
    for stage_id, text in sources.items():
        stage = STAGE_BY_ID[stage_id]
        path = folder / stage.id / stage.filename if nested else folder / stage.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def write_zip(path: Path, sources: dict[str, str], prefix: str = "") -> Path:
    """A student's zip, flat, or wrapped in a folder when prefix is given ("alice/")."""
    with zipfile.ZipFile(path, "w") as archive:
        for stage_id, text in sources.items():
            archive.writestr(prefix + STAGE_BY_ID[stage_id].filename, text)
    return path


def perfect() -> dict[str, str]:
    return {stage.id: reference(stage.id) for stage in STAGES}


def grade(submissions: Path, out: Path, *extra: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--quiet", *extra]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}, **kwargs
    )


def read_grades(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}
