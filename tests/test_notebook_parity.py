"""Do the notebook's test cells judge every known variant as the grader does, check by check?

The notebook channel runs in-process, as a kernel would: the variant's code, the helpers cell, then every test
cell in order, a cell earning its points when it raises nothing (nbgrader's rule). The grader channel is the
real judge in the sandbox. tests/test_notebooks.py proves the same with real `nbgrader autograde` on a few of
these; here every variant of tests/variants/ is covered, so the known-wrong variants guard both channels.
"""

import contextlib
import io
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.authoring import notebooks
from autograder.authoring.markers import solution_code, strip_solutions
from autograder.authoring.notebook_tests import cell_id
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGES, Stage
from autograder.grading import sandbox
from autograder.grading.judge import grade_stage

VARIANTS = ROOT / "tests" / "variants"


def submissions() -> list[tuple[Stage, str, str]]:
    """(stage, name, code): the reference, the starter and every variant of every stage."""
    rows = []
    for stage in STAGES:
        source = stage.solution_path.read_text()
        rows += [(stage, "reference", solution_code(source)), (stage, "starter", strip_solutions(source, stage.id))]
        rows += [(stage, path.stem, path.read_text()) for path in sorted((VARIANTS / stage.id).glob("*.py"))]
    return rows


def notebook_points(stage: Stage, code: str) -> dict[str, int]:
    """cell id -> the points the notebook's test cells give code, run in order in one namespace."""
    cells = json.loads(notebooks.notebook_path(stage).read_text())["cells"]
    by_id = {cell["id"]: "".join(cell["source"]) for cell in cells}
    namespace: dict = {"__name__": "__main__"}
    points = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, namespace)
        exec(by_id["helpers"], namespace)
        for cell in cells:
            meta = cell["metadata"]["nbgrader"]
            if meta["grade"]:
                try:
                    exec(by_id[cell["id"]], namespace)
                    points[cell["id"]] = meta["points"]
                except Exception:
                    points[cell["id"]] = 0
    return points


@pytest.mark.slow
def test_every_variant_earns_the_same_points_in_both_channels():
    """Same points per check for every submission, full marks for references and ok_ variants, fewer for wrong_."""
    rows = submissions()
    isolation = sandbox.detect()
    with ThreadPoolExecutor(max_workers=2) as pool:
        graded = pool.map(lambda row: grade_stage(row[0], row[2], isolation), rows)
        notebook = [notebook_points(stage, code) for stage, _, code in rows]
    differences = []
    for (stage, name, _), result, cells in zip(rows, graded, notebook, strict=True):
        scores = {test.check: test.score for test in result.tests}
        grader = {cell_id(check): scores[check.id] for check in stage_checks(stage.id)}
        differences += [
            f"{stage.id} {name} {cell}: notebook {cells[cell]}, grader {grader[cell]:g}"
            for cell in grader
            if cells[cell] != grader[cell]
        ]
        total = sum(cells.values())
        if name == "reference" or name.startswith("ok_"):
            assert total == stage.points, f"{stage.id} {name}: {total} of {stage.points} in the notebook"
        elif name == "starter":
            assert total == 0, f"{stage.id} starter: {total} points in the notebook"
        else:
            assert total < stage.points, f"{stage.id} {name}: the notebook gives it every point"
    assert not differences, "\n".join(differences)
