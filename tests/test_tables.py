"""Is a table written into a stage module where a computation is asked found in its source, and honest code never?"""

from pathlib import Path

import pytest

from autograder.course.oracle import oracle
from autograder.course.stages import ROOT, STAGES
from autograder.grading.tables import CHARS, ITEMS, MODULE_ITEMS, table_look, table_look_once
from tests.classes import reference, starter

HOSTILE = Path(__file__).parent / "hostile"
HONEST = sorted(
    [*(ROOT / "solutions").glob("*/*.py"), *(ROOT / "tests" / "variants").glob("*/*.py"), *HOSTILE.rglob("*.py")]
)


def scores_table() -> str:
    """The 5,478 reachable boards and their scores, as a dict literal."""
    return repr({"".join(board): oracle().score(board) for board in oracle().positions})


@pytest.mark.parametrize("path", [path for path in HONEST if path.name != "table.py"], ids=lambda path: path.stem)
def test_no_solution_variant_or_other_attack_is_flagged(path):
    """Do the reference solutions, every variant (right or wrong) and the attacks that hold no table pass unflagged?"""
    assert table_look(path.read_text(), path.name) == ""


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_starters_and_references_as_handed_in_are_not_flagged(stage):
    """Are the released starters and the references without their markers unflagged?"""
    assert table_look(starter(stage.id), stage.filename) == ""
    assert table_look(reference(stage.id), stage.filename) == ""


TABLES = {
    "a dict of every score": lambda: f"memo = {scores_table()}\n",
    "one assignment per board": lambda: "".join(
        f"TABLE[{''.join(board)!r}] = {oracle().score(board)}\n" for board in oracle().positions
    ),
    "a string of scores": lambda: "SCORES = " + repr("".join("+0-"[1 - oracle().score(p)] for p in oracle().positions)),
    "a packed int": lambda: f"PACKED = {3**2000}\n",
    "a table in a function's default": lambda: f"def score(board, table={scores_table()}):\n    return 0\n",
}


@pytest.mark.parametrize("form", TABLES, ids=lambda form: form.replace(" ", "-"))
def test_a_table_of_answers_is_flagged(form):
    """Is every plain form of a table of answers found, with its line and size, as a question for a reader?"""
    look = table_look('"""A long docstring is no table."""\n\n' + TABLES[form](), "memoization.py")
    assert look.startswith("memoization.py") and look.endswith("a table where a computation is asked?"), look
    assert "line 3" in look or "literal values" in look, look


def test_the_limits_leave_room_for_honest_code():
    """Do a docstring longer than CHARS, a few dozen boards written out as a test, and a symmetry table pass?"""
    boards = [list("XO  X    ")] * (ITEMS // 9)
    source = f'"""{"a" * (CHARS * 5)}"""\nBOARDS = {boards!r}\nTURNS = {[list(range(9))] * 8!r}\n'
    source += "".join(f"x{n} = {n}\n" for n in range(MODULE_ITEMS // 2))
    assert table_look(source, "symmetry.py") == ""


def test_a_module_that_does_not_parse_is_left_to_the_child():
    """Is a syntax error (which the child reports) never taken for a table?"""
    assert table_look("def score(board)\n    return {1: 2}\n", "memoization.py") == ""


def test_a_source_read_again_gets_the_same_look_for_its_own_file_name():
    """Does the grader's memo of looks give a source handed in again (by the next student) what reading it gives,
    under the file name it is handed in as, and a source that differs by one character its own look?"""
    table = f"memo = {scores_table()}\n"
    honest = reference("04_memoization")
    for _ in range(2):
        assert table_look_once(table, "memoization.py") == table_look(table, "memoization.py") != ""
        assert table_look_once(table, "minimax.py").startswith("minimax.py line 1 ")
        assert table_look_once(honest, "memoization.py") == ""
    assert table_look_once(table.replace("memo =", "memo=", 1), "memoization.py").startswith("memoization.py")
    assert table_look_once(honest + f"PACKED = {3**2000}\n", "memoization.py").endswith("is asked?")
