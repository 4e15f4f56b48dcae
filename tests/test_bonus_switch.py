"""A course that turns the bonus stages off (BONUS_STAGES_ON = False in course/stages.py) is the seven-stage course:
nothing builds, releases, grades or reports the bonus stages, and grades.csv has its pinned nine columns."""

import json
import subprocess
import sys

from autograder.course.stages import ROOT

# Imported in a fresh interpreter, with the manifest's switch line turned off before anything reads the manifest.
WITH_BONUS_OFF = """
import importlib.util, json, sys
from pathlib import Path
path = Path("autograder/course/stages.py")
source = path.read_text()
assert source.count("BONUS_STAGES_ON = True") == 1
spec = importlib.util.spec_from_loader("autograder.course.stages", loader=None, origin=str(path))
module = importlib.util.module_from_spec(spec)
module.__file__ = str(path.resolve())
exec(compile(source.replace("BONUS_STAGES_ON = True", "BONUS_STAGES_ON = False"), str(path), "exec"), module.__dict__)
sys.modules["autograder.course.stages"] = module
from autograder.authoring import build, release
from autograder.course.stages import STAGES, TOTAL_POINTS, BONUS_POINTS
from autograder.outputs.gradesheet import HEADER
print(json.dumps({
    "stages": [stage.id for stage in STAGES],
    "points": [TOTAL_POINTS, BONUS_POINTS],
    "header": HEADER,
    "built": sorted(str(path.relative_to(Path.cwd())) for path in build.rendered()),
    "released": sorted(release.released_files()),
}))
"""


def test_with_the_bonus_stages_off_the_course_is_the_seven_stages_and_the_nine_columns():
    done = subprocess.run([sys.executable, "-c", WITH_BONUS_OFF], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert found["stages"] == [
        "01_rules", "02_count_games", "03_minimax", "04_memoization", "05_winning_square", "06_count_results",
        "07_quickest_move",
    ]  # fmt: skip
    assert found["points"] == [100, 0]
    assert found["header"] == ["student", *found["stages"], "total", "final"]
    bonus = ("08_alpha_beta", "09_best_squares", "10_symmetry")
    assert found["built"] and not [path for path in found["built"] if any(stage in path for stage in bonus)]
    assert "assignments/07_quickest_move/README.md" in found["released"]
    assert not [path for path in found["released"] if any(stage in path for stage in bonus)]
