"""Does `autograde similar` find a copied pair behind renamed variables, and leave independent work alone?

Student code is only tokenized here, never run: the class is written by the tests and read by the grader's reader.
"""

import re

import pytest

from autograder.admin import similar
from autograder.course.stages import STAGES
from autograder.grading.submissions import read_student
from tests.classes import reference, starter, write_student

# Every name the reference solutions use, renamed as a student hiding a copy would; comments dropped.
RENAMES = {
    "board": "grid", "square": "cell", "mark": "player", "total": "n", "results": "outcomes", "won": "victor",
    "best_square": "pick", "best_score": "top", "result": "value", "better": "improves", "totals": "tally",
    "x_wins": "xs", "o_wins": "os_", "draws": "ties", "key": "k", "memo": "memo",
}  # fmt: skip

# Written independently of the references: different shapes, helpers and idioms, all correct.
INDEPENDENT = {
    "03_minimax": """
def _after(grid, cell, player):
    child = list(grid)
    child[cell] = player
    return score(child)


def score(board):
    w = winner(board)
    if w is not None:
        return {"X": 1, "O": -1}[w]
    empty = [i for i, s in enumerate(board) if s == " "]
    if not empty:
        return 0
    player = to_move(board)
    pick = max if player == "X" else min
    return pick(_after(board, i, player) for i in empty)


def choose_move(board):
    player = to_move(board)
    sign = 1 if player == "X" else -1
    return max((i for i in range(9) if board[i] == " "), key=lambda i: sign * _after(board, i, player))
""",
    "06_count_results": """
OUTCOME = {"X": 0, "O": 1}


def count_results(board):
    w = winner(board)
    if w is not None or " " not in board:
        tally = [0, 0, 0]
        tally[OUTCOME.get(w, 2)] = 1
        return tally
    player = to_move(board)
    sums = [0, 0, 0]
    for i in [i for i, s in enumerate(board) if s == " "]:
        child = board[:i] + [player] + board[i + 1 :]
        sums = [a + b for a, b in zip(sums, count_results(child))]
    return sums
""",
}


def renamed(code: str) -> str:
    code = re.sub(r"\s*#.*", "", code)
    return re.sub(r"\b\w+\b", lambda match: RENAMES.get(match.group(0), match.group(0)), code)


def independent(stage_id: str) -> str:
    """The stage's starter with its student part replaced by INDEPENDENT's (the given helpers kept)."""
    given = starter(stage_id).split("\n\ndef ", 1)[0]  # the docstring, LINES, and helpers before the first task
    parts = starter(stage_id).split("\n\ndef ")[1:]
    helpers = "".join(f"\n\ndef {part}" for part in parts if "NotImplementedError" not in part)
    return given + helpers + "\n" + INDEPENDENT[stage_id]


HOSTILE_NAME = '<img src=x onerror="alert(1)">&amp;'


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("similar")
    submissions = root / "class"
    write_student(submissions / "amy", {stage.id: reference(stage.id) for stage in STAGES})
    write_student(submissions / "ben", {stage.id: renamed(reference(stage.id)) for stage in STAGES}, nested=False)
    write_student(submissions / "cat", {stage_id: independent(stage_id) for stage_id in INDEPENDENT})
    write_student(submissions / HOSTILE_NAME, {"01_rules": starter("01_rules")})
    out = root / "out"
    assert similar.main([str(submissions), "--out", str(out)]) == 0
    students = [read_student(name, submissions / name) for name in ("amy", "ben", "cat", HOSTILE_NAME)]
    pairs, summaries = similar.similar_pairs(students, similar.DEFAULT_THRESHOLD)
    return (out / similar.PAGE).read_text(), pairs, summaries


def listed(pairs, stage_id: str) -> set[tuple[str, str]]:
    return {(pair.left.student, pair.right.student) for pair in pairs if pair.stage.id == stage_id}


def test_a_copy_with_renamed_variables_is_found_in_every_stage(page):
    html, pairs, _ = page
    for stage in STAGES:
        assert ("amy", "ben") in listed(pairs, stage.id), stage.id
    copied = next(pair for pair in pairs if pair.stage.id == "03_minimax" and pair.right.student == "ben")
    assert copied.share > 0.95
    assert "grid" in "".join(segment.text for segment in copied.right.segments if segment.shared)
    assert 'amy</span> and <span class="student">ben</span>' in html and "<mark>" in html


def test_independent_solutions_are_not_listed(page):
    """Are two correct solutions written differently left off, though both hold the same given starter?"""
    _, pairs, _ = page
    for stage_id in INDEPENDENT:
        assert listed(pairs, stage_id) == {("amy", "ben")}, stage_id


def test_the_starter_alone_is_not_compared(page):
    """Does a student who handed in only the starter share nothing with anyone (the starter is boilerplate)?"""
    _, pairs, summaries = page
    assert all(HOSTILE_NAME not in (pair.left.student, pair.right.student) for pair in pairs)
    compared = {summary.stage.id: summary.compared for summary in summaries}
    assert compared["01_rules"] == 2 and compared["03_minimax"] == 3


def test_the_page_says_it_is_a_lead_and_escapes_names(page):
    html, _, _ = page
    assert "a lead for a human, not a verdict" in html
    assert HOSTILE_NAME not in html and "<img" not in html
    assert "<script" not in html


@pytest.mark.parametrize("threshold", ["0", "1.5", "nan", "most"])
def test_a_bad_threshold_is_a_one_line_error(tmp_path, threshold, capsys):
    write_student(tmp_path / "class" / "amy", {"01_rules": reference("01_rules")})
    assert similar.main([str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--threshold", threshold]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_class_report_links_the_page_when_it_exists(tmp_path):
    from autograder.outputs.report import write_report

    write_report(tmp_path, {})
    assert 'href="similar.html"' not in (tmp_path / "report.html").read_text()
    (tmp_path / similar.PAGE).write_text("")
    write_report(tmp_path, {})
    assert 'href="similar.html"' in (tmp_path / "report.html").read_text()
