"""Do the visible tests pass against every reference, fail every test against every starter, and catch known bugs?

The very files students get (assignments/<stage>/test_<module>.py) run here in one pytest subprocess per stage.
To test a reference or a deliberately broken copy, PYTHONPATH points at its folder and --import-mode=append puts
the test's own folder (where the starter lives) after it on sys.path, so `import rules` finds the module we mean;
conftest.py prints which file it tested, and we check that too.
"""

import ast
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.authoring.markers import solution_code
from autograder.course.stages import ASSIGNMENTS, ROOT, STAGE_BY_ID, STAGES

# Each stage's visible tests must be more than a token: at least this many per stage.
MIN_TESTS = 15

# Known bugs, one per line: (stage id, what the bug is, text of the reference, what the bug turns it into).
MUTANTS = [
    ("01_rules", "missed diagonal", "(0, 4, 8), (2, 4, 6),", "(0, 4, 8),"),
    ("01_rules", "empty line wins", 'board[a] != " " and ', ""),
    ("01_rules", "O moves first", 'return "X"\n    return "O"', 'return "O"\n    return "X"'),
    (
        "02_count_games",
        "a win does not end the game",
        'winner(board) is not None or " " not in board',
        '" " not in board',
    ),
    ("02_count_games", "no undo", 'board[square] = " "  # undo, so the caller\'s board is left as it was', "pass"),
    ("02_count_games", "finished board counts 0", "return 1", "return 0"),
    ("03_minimax", "min for both players", 'if mark == "X":\n        return max(results)\n', ""),
    ("03_minimax", "choose_move keeps the last square", "better = best_score is None or", "better = True or"),
    ("03_minimax", "choose_move is best for X only", 'result > best_score if mark == "X" else ', ""),
    ("04_memoization", "no lookup", "    if key in memo:\n        return memo[key]\n", ""),
    (
        "04_memoization",
        "finished wins not stored",
        'result = 1 if won == "X" else -1',
        'return 1 if won == "X" else -1',
    ),
    ("04_memoization", "max for both players", 'max(results) if mark == "X" else min(results)', "max(results)"),
    ("05_winning_square", "returns the line's first square", 'return line[marks.index(" ")]', "return line[0]"),
    ("05_winning_square", "ignores blocked lines", ' and marks.count(" ") == 1', ""),
    ("05_winning_square", "None instead of -1", "return -1", "return None"),
    (
        "06_count_results",
        "full board checked first",
        "    won = winner(",
        '    if " " not in board:\n        return [0, 0, 1]\n    won = winner(',
    ),
    ("06_count_results", "tallies swapped", "totals[0] += x_wins", "totals[0] += o_wins"),
    ("07_quickest_move", "every win alike", "empty + 1", "1"),
    ("07_quickest_move", "slow wins preferred", "empty + 1", "10 - empty"),
]

STATUS = {"failure": "failed", "error": "error", "skipped": "skipped"}  # JUnit XML's element -> our word
NOT_WRITTEN = re.compile(r"^(\w+) is not written yet: replace `raise NotImplementedError\(\)` in (\w+\.py)$")


@dataclass
class Case:
    name: str
    status: str  # passed, failed, error or skipped
    message: str
    text: str


@dataclass
class Run:
    returncode: int
    output: str
    cases: list[Case]

    def named(self, status):
        return [case for case in self.cases if case.status == status]


def run_visible(xml, *args, cwd=ROOT, module_dir=None):
    """Run pytest on the visible tests in a fresh interpreter; read each test's outcome from its JUnit XML."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no __pycache__ in solutions/ or assignments/
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the visible tests need no plugins; it halves start-up time
    if module_dir is not None:
        env["PYTHONPATH"] = str(module_dir)
    command = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", f"--junitxml={xml}", "-rA"]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    cases = []
    for element in ElementTree.parse(xml).iter("testcase"):
        status, message, text = "passed", "", ""
        for child in element:
            if child.tag in STATUS:
                status, message, text = STATUS[child.tag], child.get("message", ""), (child.text or "")
        cases.append(Case(element.get("name", ""), status, message, text))
    return Run(result.returncode, result.stdout + result.stderr, cases)


def run_against(stage, module_dir, xml, *extra):
    """The visible tests of stage, run from the repository root against the module in module_dir."""
    run = run_visible(xml, str(stage.test_path.parent), "--import-mode=append", *extra, module_dir=module_dir)
    tested = Path(module_dir, stage.filename).resolve()
    found = re.search(rf"^tested {stage.filename} at (.+)$", run.output, re.MULTILINE)
    assert found and (ROOT / found.group(1)).resolve() == tested, f"did not test {tested}:\n{run.output}"
    return run


def examples_of(stage):
    """The EXAMPLES table of a stage's test file, read the way the grader reads it: as literals only."""
    tree = ast.parse(stage.test_path.read_text())
    tables = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets)
    ]
    assert len(tables) == 1, f"{stage.test_path}: needs exactly one module-level EXAMPLES table"
    return ast.literal_eval(tables[0].value)


def _winner(board):
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    for a, b, c in lines:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_examples_are_literal_rows_of_the_contract(stage):
    """Can the grader read EXAMPLES with ast.literal_eval, and is every row a real position and a contract call?"""
    rows = examples_of(stage)
    assert isinstance(rows, list) and rows
    for row in rows:
        assert isinstance(row, tuple) and len(row) == 4, row
        function_name, args, expected, why = row
        assert function_name in stage.functions, f"{row}: not a function of {stage.id}"
        assert isinstance(why, str) and why.strip(), row
        assert isinstance(args, tuple) and isinstance(args[0], str) and len(args[0]) == 9, row
        board = args[0]
        assert set(board) <= {"X", "O", " "}, row
        x_count, o_count = board.count("X"), board.count("O")
        assert x_count - o_count in (0, 1), f"{row}: X must have as many marks as O or one more"
        won = _winner(board)
        assert won != "X" or x_count == o_count + 1, f"{row}: X won, so X made the last move"
        assert won != "O" or x_count == o_count, f"{row}: O won, so O made the last move"
        if isinstance(expected, set) and function_name in ("choose_move", "quickest_move", "winning_square"):
            assert expected and all(type(square) is int and board[square] == " " for square in expected), row
        elif isinstance(expected, set):  # any one of these values (alphabeta's bounds outside the window)
            assert expected, row
    assert {row[0] for row in rows} == set(stage.functions), f"{stage.id}: every function needs examples"


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_test_file_imports_the_module_by_plain_name(stage):
    """Does the test file `import rules` (so a missing function fails one test, not the whole file)?"""
    tree = ast.parse(stage.test_path.read_text())
    imports = [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    assert stage.module in imports
    assert not any(isinstance(node, ast.ImportFrom) and node.module == stage.module for node in ast.walk(tree))


ONE_LINERS = [
    ("missing function", "def winner(board):\n    return None\n", "rules.py has no function to_move — check its name"),
    ("syntax error", "def winner(board)\n    return None\n", "rules.py line 1: SyntaxError: "),
    (
        "failing import",
        "import no_such_module_here\n",
        "rules.py line 1: importing rules.py failed with ModuleNotFoundError",
    ),
    ("endless recursion", "def winner(board):\n    return winner(board)\n", "winner never stops calling itself"),
]


def _mutant_job(stage, bug, old, new, folder):
    source = solution_code(stage.solution_path.read_text())
    assert old in source, f"{stage.solution_path} no longer contains {old!r}: update the mutant '{bug}'"
    (folder / stage.filename).write_text(source.replace(old, new))
    return run_against(stage, folder, folder / "mutant.xml", "-x")


def _one_liner_job(source, folder):
    (folder / STAGES[0].filename).write_text(source)
    test_folder = str(STAGES[0].test_path.parent)
    return run_visible(folder / "one.xml", test_folder, "--import-mode=append", module_dir=folder)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every pytest subprocess this module needs, started at once on a thread pool; tests wait for their own."""
    jobs = {}
    for stage in STAGES:
        folder = tmp_path_factory.mktemp(stage.id)
        jobs["reference", stage.id] = (run_against, stage, stage.solution_path.parent, folder / "reference.xml")
        jobs["starter", stage.id] = (
            lambda xml, cwd: run_visible(xml, cwd=cwd),
            folder / "s.xml",
            stage.test_path.parent,
        )
    root_xml = tmp_path_factory.mktemp("root") / "root.xml"
    jobs["root"] = (run_visible, root_xml, str(STAGES[0].test_path.parent.relative_to(ROOT)))
    for stage_id, bug, old, new in MUTANTS:
        jobs["mutant", stage_id, bug] = (
            _mutant_job,
            STAGE_BY_ID[stage_id],
            bug,
            old,
            new,
            tmp_path_factory.mktemp("m"),
        )
    for case, source, _ in ONE_LINERS:
        jobs["one-liner", case] = (_one_liner_job, source, tmp_path_factory.mktemp("one"))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        yield {key: pool.submit(*job) for key, job in jobs.items()}


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_reference_passes_every_visible_test(stage, runs):
    run = runs["reference", stage.id].result()
    assert run.returncode == 0, run.output
    assert len(run.cases) >= MIN_TESTS, f"{stage.id}: only {len(run.cases)} visible tests"
    assert len(run.named("passed")) == len(run.cases), run.output


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_starter_fails_every_visible_test_with_a_one_line_hint(stage, runs):
    """Run as a student would, inside the stage folder: does every test fail, each with the 'not written' line?"""
    run = runs["starter", stage.id].result()
    assert run.returncode == 1, run.output
    assert len(run.cases) >= MIN_TESTS and not run.named("passed"), run.output
    starter = ast.parse(stage.starter_path.read_text())
    defined = {node.name for node in starter.body if isinstance(node, ast.FunctionDef)}
    for case in run.cases:
        assert case.status == "failed", case
        found = NOT_WRITTEN.match(case.text.strip())
        assert found, f"{case.name}: expected the one-line hint, got:\n{case.text}"
        assert found.group(1) in defined and found.group(2) == stage.filename, case
    assert "Traceback" not in run.output and "NotImplementedError()\nE" not in run.output


def test_running_from_the_repository_root_tests_the_starter_next_to_the_tests(runs):
    stage = STAGES[0]
    run = runs["root"].result()
    assert f"tested {stage.filename} at {stage.starter_path.relative_to(ROOT)}" in run.output
    assert run.cases and not run.named("passed")


@pytest.mark.parametrize(
    ("stage_id", "bug", "old", "new"), MUTANTS, ids=[f"{stage_id}-{bug}" for stage_id, bug, _, _ in MUTANTS]
)
def test_a_known_bug_fails_a_visible_test(stage_id, bug, old, new, runs):
    """Can the visible tests fail at all? A copy of the reference with one deliberate bug must fail one."""
    run = runs["mutant", stage_id, bug].result()
    assert run.named("failed"), f"the visible tests of {stage_id} missed the bug '{bug}':\n{run.output}"


@pytest.mark.parametrize(("case", "source", "line"), ONE_LINERS, ids=[row[0] for row in ONE_LINERS])
def test_common_mistakes_get_one_line_instead_of_a_traceback(case, source, line, runs):
    run = runs["one-liner", case].result()
    failed = run.named("failed") + run.named("error")
    texts = [case.text.strip() for case in failed if line in case.text]
    assert texts, run.output
    assert all("\n" not in text for text in texts), texts
    assert "Traceback" not in run.output


@pytest.mark.parametrize("stage", STAGES, ids=lambda stage: stage.id)
def test_readme_tells_students_what_to_write_and_how_to_check(stage):
    text = stage.readme_path.read_text()
    for name in stage.functions:
        assert f"{name}(" in text, f"{stage.readme_path}: does not describe {name}"
    assert f"pytest assignments/{stage.id}" in text
    assert "autograde check" in text
    if stage.stars:
        assert "★" * stage.stars in text and "★" * (stage.stars + 1) not in text


def test_every_stage_folder_has_its_tests_and_readme():
    folders = sorted(path.name for path in ASSIGNMENTS.iterdir() if path.is_dir() and path.name[:2].isdigit())
    assert folders == [stage.id for stage in STAGES]
    for stage in STAGES:
        assert stage.test_path.exists() and stage.readme_path.exists()
