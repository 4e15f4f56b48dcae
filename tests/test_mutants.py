"""Does `autograde verify --mutants` make every kind of single-point mutant, tell equivalent ones from wrong ones,
and hold the course to its promise: the hidden checks catch every wrong mutant, the visible tests nearly all?"""

import ast

import pytest

from autograder.authoring import mutants, verify
from autograder.authoring.markers import solution_body
from autograder.authoring.mutants import make, report, verdict
from autograder.authoring.mutants.wrong import PRUNE_CALLS_LIMIT
from autograder.course.stages import STAGE_BY_ID, STAGES

MINIMAX = STAGE_BY_ID["03_minimax"]
ALPHA_BETA = STAGE_BY_ID["08_alpha_beta"]


@pytest.fixture(scope="module")
def prepared():
    verdict.prepare([MINIMAX, ALPHA_BETA, *(STAGE_BY_ID[stage_id] for stage_id in report.NAMED_MISTAKES)])
    report._start_parent()
    return verdict.PREPARED


def test_mutants_change_one_thing_in_the_students_part_only():
    made = make.make_mutants(MINIMAX)
    reference = ast.unparse(ast.parse(MINIMAX.solution_path.read_text()))
    student_lines = {number for number, _ in solution_body(MINIMAX.solution_path.read_text())}
    what = [mutant.what for mutant in made]
    for kind in ("'>' -> '>='", "'==' -> '!='", "'or' -> 'and'", "1 -> 0", "'X' -> 'O'", "max -> min", "min -> max"):
        assert kind in what
    assert any(text.startswith("deleted: ") for text in what)
    assert any(text.startswith("swapped with the next statement: ") for text in what)
    assert len({mutant.source for mutant in made}) == len(made)
    for mutant in made:
        assert mutant.line in student_lines, mutant.what
        assert mutant.source != reference
        compile(mutant.source, "minimax.py", "exec")
        assert mutant.diff.count("\n-") >= 1 and mutant.diff.count("\n+") >= 1


def test_an_equivalent_mutant_is_not_a_mistake_and_a_wrong_one_is(prepared):
    made = {mutant.what: mutant for mutant in make.make_mutants(MINIMAX)}
    # choose_move keeps the last of equal squares instead of the first: any best square is right.
    assert verdict.judge_module(prepared[MINIMAX.id], made["'>' -> '>='"].source) == (None, None, None)
    wrong, hidden, visible = verdict.judge_module(prepared[MINIMAX.id], made["max -> min"].source)
    assert wrong and hidden and visible


def test_an_alphabeta_with_right_answers_that_does_not_prune_is_wrong_and_both_suites_say_so(prepared):
    made = {mutant.what: mutant for mutant in make.make_mutants(ALPHA_BETA)}
    wrong, hidden, visible = verdict.judge_module(prepared[ALPHA_BETA.id], made["deleted: break"].source)
    assert "does not prune" in wrong
    assert hidden == "score/prunes"
    assert visible.startswith("test_scoring_the_empty_board_prunes")


def test_the_visible_prune_test_stops_where_the_grader_does():
    """The visible test's call limit is the one that stands for the grader's CPU threshold (PRUNE_CALLS_LIMIT):
    a search under it passes both, one over it fails both; square-order alpha-beta and plain minimax are far off."""
    tree = ast.parse(ALPHA_BETA.test_path.read_text())
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.targets[0], ast.Name)
    }
    assert constants["PRUNED_CALLS_LIMIT"] == PRUNE_CALLS_LIMIT
    assert 10 * constants["SQUARE_ORDER_CALLS"] < PRUNE_CALLS_LIMIT < constants["MINIMAX_CALLS"] / 2


def test_the_named_mistakes_fail_a_visible_test(prepared):
    for stage_id in report.NAMED_MISTAKES:
        for name, failure in report.named_mistakes(STAGE_BY_ID[stage_id]):
            assert failure is not None, f"{stage_id}/{name} passes every visible test"


def test_a_sample_of_stages_meets_every_requirement(prepared):
    lines = []
    assert mutants.run(mutants.select(["01", "05_winning_square"]), jobs=2, out=lines.append) == 0
    table = {line.split()[0]: line.split()[1:6] for line in lines[1:3]}
    assert table == {"01_rules": ["18", "0", "18", "18", "18"], "05_winning_square": ["18", "0", "18", "18", "18"]}
    assert lines[-1].endswith("every requirement holds.")


def test_an_unknown_stage_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stopped:
        verify.main(["--mutants", "99"])
    assert stopped.value.code == 2
    assert "no stage '99'" in capsys.readouterr().err


@pytest.mark.slow
def test_every_mutant_of_the_course(prepared):
    """The whole run, the bonus stages too (about 45 s of CPU on 2 cores): the figures the README quotes."""
    lines = []
    assert mutants.run(list(STAGES), jobs=2, out=lines.append) == 0, "\n".join(lines)
    rows = {line.split()[0]: [int(field) for field in line.split()[1:6]] for line in lines[1 : 1 + len(STAGES)]}
    for stage_id, (count, equivalent, wrong, hidden, visible) in rows.items():
        assert count == equivalent + wrong and hidden == wrong, stage_id
        assert visible >= report.VISIBLE_TARGET * wrong, stage_id
    assert len(rows) == len(STAGES) == 10
    assert sum(row[0] for row in rows.values()) == 533
