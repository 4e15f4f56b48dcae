"""Do the hidden checks tell right from wrong? `autograde verify` over the library of student variants."""

import ast
import subprocess
import sys

import pytest

from autograder.authoring import verify
from autograder.course.stages import ROOT, STAGES

VARIANTS = ROOT / "tests" / "variants"


def docstring_first_line(path):
    """The first line of the module docstring, or '' when there is none."""
    doc = ast.get_docstring(ast.parse(path.read_text()), clean=False) or ""
    return doc.split("\n", 1)[0].strip()


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_every_stage_has_variants_that_say_what_they_are(stage):
    """Has each stage at least 3 wrong_ and 1 ok_ variants, each a module with a one-line summary docstring?"""
    folder = VARIANTS / stage.id
    files = sorted(folder.glob("*.py"))
    wrong = [path for path in files if path.stem.startswith("wrong_")]
    right = [path for path in files if path.stem.startswith("ok_")]
    assert len(wrong) >= 3, f"{stage.id}: only {len(wrong)} wrong_ variants"
    assert len(right) >= 1, f"{stage.id}: no ok_ variant"
    assert [path.name for path in files if path not in wrong + right] == [], "variants are named wrong_* or ok_*"
    for path in files:
        summary = docstring_first_line(path)
        assert summary, f"{path.name} has no docstring saying what it does"
        assert summary.endswith("."), f"{path.name}: the docstring's first line should be one sentence"
        assert verify.first_line(path) == summary, f"{path.name}: verify would not quote this summary"
        assert "### BEGIN SOLUTION" not in path.read_text(), f"{path.name} still has solution markers"
        for function in stage.functions:
            assert f"def {function}(" in path.read_text(), f"{path.name} has no {function}: not a complete module"


@pytest.mark.slow
def test_verify_passes_on_the_whole_course():
    """Does `python -m autograder verify` find every reference, starter and variant graded as expected?"""
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "verify"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "SURPRISE" not in result.stdout


def test_verify_catches_a_variant_that_is_not_wrong(tmp_path, monkeypatch, capsys):
    """Is a 'wrong' variant that earns full marks (here: the reference itself) reported, with exit code 1?"""
    stage = STAGES[0]
    folder = tmp_path / stage.id
    folder.mkdir()
    text = stage.solution_path.read_text()
    text = "\n".join(
        line for line in text.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
    )
    (folder / "wrong_nothing_wrong.py").write_text('"""Claims a mistake but has none."""\n' + text + "\n")
    (folder / "ok_also_fine.py").write_text(stage.solution_path.read_text())
    monkeypatch.setattr(verify, "VARIANTS", tmp_path)
    monkeypatch.setattr(verify, "STAGES", (stage,))
    assert verify.main(["--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "wrong_nothing_wrong" in out and "SURPRISE" in out
    assert "Claims a mistake but has none." in out
    assert "ok_also_fine" in out and out.count("SURPRISE") == 1
