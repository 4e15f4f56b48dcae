"""Does `autograde release` give students what they need to work, and nothing of the answers or hidden tests?"""

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring import build, markers, release
from autograder.cli import COMMANDS
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGES

STUDENT_TOPS = ("README.md", "requirements.txt", "pyproject.toml", "check.py", "hint.py", "play.py")
# A command a student could be told to run: the grader's, the course's make targets, a python script.
GRADER_COMMAND = re.compile(r"\bautograde\s+(" + "|".join(map(re.escape, COMMANDS)) + r")\b|python3? -m autograder\b")
MAKE_COMMAND = re.compile(r"`make [a-z-]+")
SCRIPT = re.compile(r"\bpython3? (?:-\w+ )*([\w./-]+\.py)\b")


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
    assert tops == {"assignments", *STUDENT_TOPS, ".github", ".gitignore"}
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


def test_every_text_names_only_commands_the_release_has(released):
    """Does every file a student reads (READMEs, hints, tests' messages, check.py, hint.py, the workflow) name only
    commands that exist in their copy: no `autograde ...`, no `make ...`, and every `python X.py` a file there?"""
    for path in sorted(p for p in released.rglob("*") if p.is_file()):
        text = path.read_text()
        name = path.relative_to(released).as_posix()
        assert not GRADER_COMMAND.search(text), (name, GRADER_COMMAND.search(text).group(0))
        assert not MAKE_COMMAND.search(text), (name, MAKE_COMMAND.search(text).group(0))
        for script in SCRIPT.findall(text):
            assert (released / script).is_file() or (path.parent / script).is_file(), (name, script)


def test_the_gitignore_keeps_setup_and_hint_progress_out_of_git(released, tmp_path):
    """With git itself: are .venv/, __pycache__/ and the hints' progress file ignored, and the work not?"""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(released), str(copy)], check=True)
    (copy / ".venv" / "bin").mkdir(parents=True)
    (copy / ".venv" / "bin" / "python").write_text("")
    (copy / "assignments" / "01_rules" / "__pycache__").mkdir()
    (copy / "assignments" / "01_rules" / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"")
    (copy / ".autograde-hints.json").write_text("{}")
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    listed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy, capture_output=True, text=True, check=True
    ).stdout
    assert ".venv" not in listed and "__pycache__" not in listed and ".autograde-hints.json" not in listed
    assert "assignments/01_rules/rules.py" in listed and ".gitignore" in listed


def test_the_readme_says_how_the_course_grades(released):
    """Does the README give each stage's points from visible and hidden checks (adding up to the stage's), the
    bonus rule, how to hand in, and say that GitHub's score is all or nothing per stage?"""
    from autograder.course.checks import stage_outline

    text = (released / "README.md").read_text()
    assert "## How you are graded" in text and "Seven short assignments and three bonus stages" in text
    for stage in STAGES:
        outline = stage_outline(stage.id)
        shown = sum(check.points for check in outline if check.visible)
        row = next(line for line in text.splitlines() if line.startswith(f"| `{stage.id}` |"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[2:5] == [str(stage.points), f"{shown:g}", f"{stage.points - shown:g}"], row
    assert "reported apart" in text and "Push your work" in text and "26 of 27 passing shows 0" in text


POLICY = """\
time_zone = "UTC"
[due]
01_rules = {first}
02_count_games = 2099-01-01T00:00:00
[late]
percent = 10
cap = 50
"""


def test_a_staged_release_then_adding_a_stage_keeps_the_students_work(tmp_path, capsys):
    """--stages 1,2 releases those two only (README and workflow too); --stages 3 on that copy adds stage 3 and
    leaves the student's modules and .gitignore as they were; a stage that is not there is refused by name."""
    out = tmp_path / "copy"
    assert release.main([str(out), "--stages", "1,count_games"]) == 0
    assert sorted(p.name for p in (out / "assignments").iterdir() if p.is_dir()) == ["01_rules", "02_count_games"]
    readme, workflow = (out / "README.md").read_text(), (out / release.CLASSROOM_WORKFLOW).read_text()
    assert "| `02_count_games` |" in readme and "| `03_minimax` |" not in readme and "Two short assignments" in readme
    assert "`python check.py 1` (or `rules`, or `01_rules`)" in readme
    assert "assignments/02_count_games" in workflow and "assignments/03_minimax" not in workflow
    assert "out of 20 points" in workflow
    err = capsys.readouterr().err
    assert "count_games.py holds to_move and winner complete: it gives away 01_rules (no --policy" in err
    work = out / "assignments" / "01_rules" / "rules.py"
    work.write_text(markers.solution_code(STAGES[0].solution_path.read_text()))  # a student's (right) answer
    (out / ".gitignore").write_text("mine\n")
    before = work.read_bytes()
    assert release.main([str(out), "--stages", "3"]) == 0, capsys.readouterr().err
    assert work.read_bytes() == before and (out / ".gitignore").read_text() == "mine\n"
    assert (out / "assignments" / "03_minimax" / "minimax.py").read_text() == build.starter(STAGES[2])
    assert "`03_minimax`" in (out / "README.md").read_text()
    assert release.main([str(out), "--stages", "12"]) == 2
    assert "no stage called '12'" in capsys.readouterr().err
    assert release.main([str(tmp_path / "other"), "--stages", "1"]) == 0  # a fresh one with no give-away at all
    assert "gives away" not in capsys.readouterr().err


def test_a_starter_that_gives_away_a_stage_not_yet_due_is_refused(tmp_path, capsys):
    """Under --policy, stage 2's starter (stage 1's winner and to_move complete) is refused while stage 1 is not
    due, and nothing is written; once stage 1 is due it goes out, and the README has the due dates and late rule."""
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=30)
    policy = tmp_path / "course-policy.toml"
    policy.write_text(POLICY.format(first=later.strftime("%Y-%m-%dT%H:%M:%S")))
    out = tmp_path / "copy"
    assert release.main([str(out), "--stages", "1,2", "--policy", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "refused: assignments/02_count_games/count_games.py holds to_move and winner complete: it gives away " in err
    assert f"01_rules is due {later.strftime('%Y-%m-%d %H:%M')} UTC" in err and not out.exists()
    assert release.main([str(out), "--stages", "1", "--policy", str(policy)]) == 0
    policy.write_text(POLICY.format(first="2020-01-01T00:00:00"))
    assert release.main([str(out), "--stages", "2", "--policy", str(policy)]) == 0, capsys.readouterr().err
    readme = (out / "README.md").read_text()
    assert "| 2020-01-01 00:00 UTC |" in readme and "| 2099-01-01 00:00 UTC |" in readme
    assert "loses 10% of its points per day or part of one late, at most 50% in all" in readme
