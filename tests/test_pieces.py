"""Adding a stage: every stage of the course is whole, and a stage missing a piece is told which one."""

import dataclasses
import shutil

import pytest

from autograder.course.pieces import missing_pieces
from autograder.course.stages import FUNCTIONS, ROOT, STAGE_BY_ID, STAGES, Function


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_every_stage_of_the_course_is_whole(stage):
    assert missing_pieces(stage) == []


@pytest.fixture
def course_copy(tmp_path):
    """The pieces of stage 5 in a folder laid out as the course is."""
    stage = STAGE_BY_ID["05_winning_square"]
    for relative in (f"solutions/{stage.id}", f"assignments/{stage.id}", f"tests/variants/{stage.id}"):
        shutil.copytree(ROOT / relative, tmp_path / relative)
    checks = tmp_path / "autograder" / "course" / "checks"
    checks.mkdir(parents=True)
    shutil.copy(ROOT / "autograder" / "course" / "checks" / f"{stage.checks}.py", checks)
    assert missing_pieces(stage, tmp_path) == []
    return stage, tmp_path


@pytest.mark.parametrize(
    "remove, named",
    [
        ("solutions/05_winning_square/winning_square.py", "the reference solution solutions/05_winning_square"),
        ("assignments/05_winning_square/README.md", "the instructions assignments/05_winning_square/README.md"),
        ("assignments/05_winning_square/test_winning_square.py", "the visible tests assignments/05_winning_square"),
        ("autograder/course/checks/s05_winning_square.py", "the checks module autograder/course/checks/s05_"),
        ("tests/variants/05_winning_square", "known-wrong variants tests/variants/05_winning_square"),
    ],
)
def test_a_missing_file_is_named(course_copy, remove, named):
    stage, root = course_copy
    path = root / remove
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    (found,) = missing_pieces(stage, root)
    assert found.startswith(named), found


def test_a_function_the_solution_or_the_examples_lack_is_named(course_copy):
    stage, root = course_copy
    extra = Function("winning_line", "winning_square_answers", "squares")
    grown = dataclasses.replace(stage, contract=(*stage.contract, extra))
    found = missing_pieces(grown, root)
    assert any("the function winning_line of the contract" in line for line in found), found
    assert any("EXAMPLES rows for winning_line" in line for line in found), found


def test_a_contract_naming_no_oracle_or_rule_is_named(course_copy):
    stage, root = course_copy
    wrong = dataclasses.replace(FUNCTIONS["winning_square"], oracle="winning_lines", returns="a square")
    found = missing_pieces(dataclasses.replace(stage, contract=(wrong,)), root)
    assert any("Oracle has no method winning_lines" in line for line in found), found
    assert any("returns 'a square', not one of RETURN_RULES" in line for line in found), found
    renamed = dataclasses.replace(stage, checks="s05_win_in_one")
    assert missing_pieces(renamed, root) == [
        "the checks module autograder/course/checks/s05_win_in_one.py (the manifest's checks='s05_win_in_one')"
    ]


# A quoted name that is a key of a file format, not a function: results.json's and Gradescope's "score", and the
# "winner" of a game in the tournament's results.
FORMAT_KEYS = {
    ("score", "autograder/outputs/results.py"),
    ("score", "autograder/verbs/gradescope.py"),
    ("winner", "autograder/tournament/run.py"),
}
CONTRACT_NAMES = sorted({*FUNCTIONS, *(stage.memo for stage in STAGES if stage.memo)})


def _quoted_contract_names(path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [name for name in CONTRACT_NAMES if f'"{name}"' in text or f"'{name}'" in text]


@pytest.mark.parametrize(
    "relative",
    sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "autograder").rglob("*.py")
        if path.name != "stages.py" and not (path.parent.name == "checks" and path.name[:1] == "s")
    ),
)
def test_no_module_but_the_manifest_and_the_checks_names_a_function_of_a_stage(relative):
    """Does this module read each function's contract (and a stage's memo) from the manifest instead of naming it?
    A quoted name such as "choose_move" here is a contract kept in a second place."""
    named = [name for name in _quoted_contract_names(ROOT / relative) if (name, relative) not in FORMAT_KEYS]
    assert named == [], f"{relative} names {named}: put what it needs in the stage's manifest entry (course/stages.py)"


def test_the_format_keys_let_through_are_still_there():
    for name, relative in FORMAT_KEYS:
        assert name in _quoted_contract_names(ROOT / relative), (name, relative)
