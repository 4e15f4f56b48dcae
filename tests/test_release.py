"""Does `autograde release` give students what they need to work, and nothing of the answers or hidden tests?"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import build, markers, release
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGES


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    assert release.main([str(out)]) == 0
    return out


def test_the_release_builds_without_leaks(released):
    """Does a fresh release pass its own leak check?"""
    assert release.leaks(released) == []


def test_the_release_holds_the_student_files_and_no_grader(released):
    """Are the starters, visible tests and helpers there, and solutions, grader, tests, nbgrader, examples not?"""
    names = {p.relative_to(released).as_posix() for p in released.rglob("*") if p.is_file()}
    for stage in STAGES:
        assert f"assignments/{stage.id}/{stage.filename}" in names
        assert f"assignments/{stage.id}/test_{stage.module}.py" in names
        if stage.readme_path.exists():
            assert f"assignments/{stage.id}/README.md" in names
        starter = (released / "assignments" / stage.id / stage.filename).read_text()
        assert starter == build.starter(stage)
    assert {"README.md", "requirements.txt", "pyproject.toml", "check.py", "hint.py"} <= names
    assert {"assignments/conftest.py", "assignments/coursetest.py"} <= names
    tops = {name.split("/")[0] for name in names}
    assert tops == {"assignments", "README.md", "requirements.txt", "pyproject.toml", "check.py", "hint.py", ".github"}
    for path in released.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert markers.BEGIN not in text and markers.END not in text, path


def test_the_instructions_name_commands_the_release_has(released):
    """Do the released instructions send students to `python check.py`, never to the grader's `autograde`?"""
    readmes = sorted(released.rglob("README.md"))
    assert len(readmes) == len(STAGES) + 1  # the course README and one per stage
    for readme in readmes:
        assert "autograde " not in readme.read_text(), readme  # the command; "the autograder" is fine
        assert "pip install -e" not in readme.read_text(), readme  # the release is not a package
    assert "python check.py" in (released / "assignments" / "01_rules" / "README.md").read_text()


def test_the_visible_tests_run_in_the_release(released, tmp_path):
    """Does `pytest assignments/01_rules` work in the release: the starter fails, the reference passes?"""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "pytest", "assignments/01_rules", "-q"]
    starter = subprocess.run(command, cwd=released, capture_output=True, text=True, env=env)
    assert starter.returncode == 1 and "is not written yet" in starter.stdout, starter.stdout
    copy = tmp_path / "solved"
    subprocess.run(["cp", "-r", str(released), str(copy)], check=True)
    stage = STAGES[0]
    solved_code = markers.solution_code(stage.solution_path.read_text())
    (copy / "assignments" / stage.id / stage.filename).write_text(solved_code)
    solved = subprocess.run(command, cwd=copy, capture_output=True, text=True, env=env)
    assert solved.returncode == 0, solved.stdout
    checked = subprocess.run([sys.executable, "check.py", "rules"], cwd=copy, capture_output=True, text=True, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    hinted = subprocess.run([sys.executable, "hint.py", "1"], cwd=copy, capture_output=True, text=True, env=env)
    assert hinted.returncode == 0 and "01_rules, hint 1 of" in hinted.stdout, hinted.stdout + hinted.stderr


def test_a_planted_solution_line_and_hidden_board_are_named(released, tmp_path):
    """Does the leak check name the file and line of a solution line and of a hidden board planted in them?"""
    secret = next(s for s in release.solution_lines() if "best_score" in s.text)
    board = sorted(release.hidden_boards())[0]
    readme = released / "assignments" / "03_minimax" / "README.md"
    test_file = released / "assignments" / "02_count_games" / "test_count_games.py"
    original = {path: path.read_text() if path.exists() else None for path in (readme, test_file)}
    before = {path: (text or "").rstrip("\n") for path, text in original.items()}
    try:
        readme.write_text(before[readme] + f"\n\n    {secret.text}\n")
        test_file.write_text(before[test_file] + f"\n\nEXTRA = [{list(board)!r}]\n")
        problems = release.leaks(released)
    finally:
        for path, text in original.items():
            path.unlink() if text is None else path.write_text(text)
    readme_line = len(before[readme].splitlines()) + 2  # after the file's last line and a blank one
    test_line = len(before[test_file].splitlines()) + 2
    assert any(p.startswith(f"assignments/03_minimax/README.md:{readme_line}: ") for p in problems), problems
    assert any(p.startswith(f"assignments/02_count_games/test_count_games.py:{test_line}: ") for p in problems)
    assert any("".join(board) in p and "hidden check" in p for p in problems), problems
    assert len(problems) == 2, problems


def test_a_leaking_release_exits_1_naming_the_file(tmp_path, monkeypatch, capsys):
    """Does `autograde release` itself fail, naming file and line, when what it would release leaks?"""
    files = release.released_files()
    board = "".join(sorted(release.hidden_boards())[-1])
    files["assignments/01_rules/README.md"] = b"# Rules\n\nTry it on `" + board.encode() + b"`.\n"
    monkeypatch.setattr(release, "released_files", lambda *_: files)
    assert release.main([str(tmp_path / "out")]) == 1
    assert f"assignments/01_rules/README.md:3: board {board!r}" in capsys.readouterr().err


def test_visible_and_exhaustive_boards_are_not_secrets():
    """Are the boards of the visible examples, and of checks that run on every board, allowed in the release?"""
    hidden = release.hidden_boards()
    assert hidden, "the hidden checks sample boards, so some must be secret"
    for stage in STAGES:
        for check in stage_checks(stage.id):
            boards = {tuple(case.args[0]) for case in check.cases}
            if check.visible:
                assert not boards & set(hidden), check.id
            elif release.is_exhaustive(check):
                assert len(boards - set(hidden)) > len(boards) // 2, check.id  # mostly public
                assert len(boards) >= 100, f"{check.id} says it runs on every board of a kind, but has few"
            elif check.cases:
                assert len(boards) < 548, f"{check.id} has many boards: if it enumerates, say 'on every' in its title"


@pytest.mark.parametrize(
    "text, found",
    [
        ('board = "XO X O  X"', [(1, "XO X O  X")]),
        ("`XX OO    ` and 'OOX  X  X'", [(1, "XX OO    "), (1, "OOX  X  X")]),
        ("b = ['X', 'O', ' ',\n     ' ', 'X', ' ',\n     'O', ' ', 'X']", [(1, "XO  X O X")]),
        ('("X","X","O","O"," "," "," "," ","X")', [(1, "XXOO    X")]),
        ("XO X O  X without quotes, 'XOX' too short", []),
        ("```\n O | O | X      0 1 2\n---+---+---\n · | X | ·      3 4 5\n---+---+---\n X | · | ·      6 7 8\n```",
         [(2, "OOX X X  ")]),
        ('{"output": " X | 1 | O\\n---+---+---\\n 3 | X | 5\\n---+---+---\\n 6 | 7 | O"}', [(1, "X O X   O")]),
        ("returned [&#39;X&#39;, &#39;O&#39;, &#39; &#39;, &#39; &#39;, &#39;X&#39;, &#39; &#39;, &#39; &#39;, "
         "&#39; &#39;, &#39;O&#39;]", [(1, "XO  X   O")]),
    ],
)  # fmt: skip
def test_boards_are_found_in_every_form(text, found):
    """Does the leak check see a board written as a quoted string, a list or tuple of squares, or a drawing
    (in a page, or in a JSON string), and behind a page's escaped quotes?"""
    assert [(line, "".join(board)) for line, board in release.boards_in(text)] == found


def test_release_refuses_to_overwrite_without_force(tmp_path, capsys):
    """Does release leave a non-empty folder alone unless --force is given, and never delete the course?"""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert release.main([str(out)]) == 2
    assert (out / "notes.txt").exists()
    assert release.main([str(out), "--force"]) == 0
    assert not (out / "notes.txt").exists()
    assert release.main([str(ROOT / "assignments"), "--force"]) == 2
    assert "refusing" in capsys.readouterr().err
