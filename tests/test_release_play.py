"""Does the release's play.py play the course's game on its own: the rules and the perfect player from its table,
the student's stages as players, a seeded match, and a clear sentence instead of a traceback when a stage fails?"""

import importlib.util
import random
import re
import subprocess
import sys
import time

import pytest

from autograder.authoring import release, release_play
from autograder.authoring.markers import solution_code
from autograder.course.board import to_move, winner
from autograder.course.stages import FUNCTIONS, STAGE_BY_ID
from autograder.practice import play as course_play
from autograder.practice.players import Perfect

MINIMAX = STAGE_BY_ID["03_minimax"]
FIRST_EMPTY = "def choose_move(board):\n    return board.index(' ')\n"
# Answers the board asked before play (one empty square), then loops on the first real move.
ENDLESS = "def choose_move(board):\n    while board.count(' ') > 1:\n        pass\n    return board.index(' ')\n"


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """A folder holding play.py and an assignments/ folder for the student's stages."""
    folder = tmp_path_factory.mktemp("copy")
    (folder / "play.py").write_bytes(release_play.play_script())
    (folder / "assignments" / MINIMAX.id).mkdir(parents=True)
    return folder


def student(copy, code: str, stage=MINIMAX) -> None:
    (copy / "assignments" / stage.id / stage.filename).write_text(code)


def play(copy, *args: str, typed: str = "") -> subprocess.CompletedProcess:
    command = [sys.executable, "-I", "play.py", *args]  # -I: nothing of the course's environment helps it
    return subprocess.run(command, cwd=copy, input=typed, capture_output=True, text=True, timeout=120)


def test_the_table_is_the_course_s_rules_and_perfect_player(copy):
    """On every board that can happen, does play.py's table say what the reference winner and to_move say, and
    give exactly the squares the course's perfect player finds best? And no other board is one it knows."""
    spec = importlib.util.spec_from_file_location("release_play_module", copy / "play.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    perfect = Perfect(random.Random(0))
    perfect.start()
    seen, todo = set(), [(" ",) * 9]
    while todo:
        board = todo.pop()
        if board in seen:
            continue
        seen.add(board)
        won = winner(list(board))
        if won is not None or " " not in board:
            assert module.winner_of(board) == won and module.over(board), board
            continue
        assert not module.over(board) and module.mark_to_play(board) == to_move(list(board)), board
        scores = perfect.scores(list(board))
        best = (max if to_move(list(board)) == "X" else min)(scores.values())
        assert module.perfect_squares(board) == sorted(s for s, v in scores.items() if v == best), board
        todo += [board[:square] + (to_move(list(board)),) + board[square + 1 :] for square in scores]
    assert len(seen) == 5478
    assert sum(1 for code in module.codes() if code) == len(seen)


def test_a_seeded_match_repeats_and_the_reference_minimax_never_loses(copy):
    student(copy, solution_code(MINIMAX.solution_path.read_text()))
    first = play(copy, "--x", "minimax", "--o", "random", "--games", "100", "--seed", "1")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "100 games, seed 1" in first.stdout and "minimax.choose_move (X) never lost." in first.stdout
    assert play(copy, "--x", "minimax", "--o", "random", "--games", "100", "--seed", "1").stdout == first.stdout
    perfect = play(copy, "--x", "perfect", "--o", "perfect", "--games", "20", "--seed", "5")
    assert "draws:  20" in perfect.stdout, perfect.stdout


def test_a_losing_stage_shows_the_game_and_how_to_replay_it(copy):
    student(copy, FIRST_EMPTY)
    lost = play(copy, "--x", "minimax", "--o", "perfect", "--games", "3", "--seed", "1")
    assert lost.returncode == 0, lost.stderr
    assert "minimax.choose_move (X) lost 3 of the 3 games. The first was game 1:" in lost.stdout
    assert "Replay it: python play.py --x minimax --o human  and, as O, play " in lost.stdout
    assert "autograde" not in lost.stdout


def test_an_endless_loop_stops_within_the_time_limit_with_a_sentence(copy):
    student(copy, ENDLESS)
    started = time.monotonic()
    stopped = play(copy, "--x", "minimax", "--o", "random", "--games", "5", "--time-limit", "1")
    assert time.monotonic() - started < 20
    assert stopped.returncode == 1 and "Traceback" not in stopped.stdout + stopped.stderr
    assert "minimax.choose_move took more than 1 s: look for a loop that never ends" in stopped.stdout
    assert "It was X's move on this board:" in stopped.stdout


def test_a_stage_not_written_or_not_there_is_one_line(copy):
    student(copy, solution_code(MINIMAX.solution_path.read_text()).replace("def choose_move", "def unused"))
    missing = play(copy, "--o", "minimax")
    assert missing.returncode == 1 and "has no function choose_move: check its name" in missing.stdout
    student(copy, "def choose_move(board):\n    raise NotImplementedError()\n")
    starter = play(copy, "--o", "minimax")
    assert starter.returncode == 1 and "choose_move in assignments/03_minimax/minimax.py is not written yet" in (
        starter.stdout
    )
    absent = play(copy, "--o", "memoization")
    assert absent.returncode == 1 and "there is no assignments/04_memoization/memoization.py" in absent.stdout
    student(copy, "def choose_move(board):\n    board[0] = 'O'\n    return 1\n")
    changed = play(copy, "--x", "minimax", "--o", "random", "--games", "1")
    assert "changed the board it was given" in changed.stdout and "Traceback" not in changed.stdout + changed.stderr


def test_a_person_plays_by_typing_squares(copy):
    """X (typed) against a seeded random O: a square taken or not a number is asked again; Ctrl-D leaves."""
    typed = play(copy, "--x", "human", "--o", "random", "--seed", "3", typed="9\nx\n4\n")
    assert "Type the number of an empty square" in typed.stdout
    assert " X " in typed.stdout and "Game abandoned." in typed.stdout and typed.returncode == 0


def test_play_py_leaks_nothing_and_holds_no_answer(copy, tmp_path):
    """The release's own leak check on a folder holding only play.py, plus stricter looks: no board at all in the
    table's decoded base64, no function named like a stage's, no list of the eight lines (a winner written by
    hand), and a table of less than 20 KB."""
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "play.py").write_bytes(release_play.play_script())
    assert release.leaks(alone) == []
    text = (alone / "play.py").read_text()
    assert release.encoded_boards_in(text) == []
    assert not [name for name in FUNCTIONS if re.search(rf"\bdef {name}\b", text)]
    assert not re.search(r"0, 4, 8|2, 4, 6", text)  # no list of the eight lines: the winner is looked up
    table = re.search(r"TABLE = \((.*?)\)\n", text, re.DOTALL).group(1)
    assert len(table) < 20_000


def test_a_match_is_the_same_as_autograde_play_s(copy, capsys):
    """Same seed, same players: the release's play.py plays exactly the games of `autograde play` (same tally)."""
    args = ["--x", "perfect", "--o", "random", "--games", "60", "--seed", "7"]
    assert course_play.main(args) == 0
    tally = re.findall(r"^(?:X wins|O wins|draws):.*$", capsys.readouterr().out, re.MULTILINE)
    released = play(copy, *args)
    assert re.findall(r"^(?:X wins|O wins|draws):.*$", released.stdout, re.MULTILINE) == tally
    assert len(tally) == 3 and "perfect (X) never lost." in released.stdout


@pytest.mark.parametrize(
    "code, says",
    [
        ("def choose_move(board):\n    return 1 // 0\n", "minimax.choose_move raised ZeroDivisionError: "),
        ("def choose_move(board):\n    return '4'\n", "minimax.choose_move returned '4', not the number of a square"),
        ("def choose_move(board):\n    return\n", "returned None (does every way through the function end in a"),
        ("def choose_move(board):\n    return 9\n", "minimax.choose_move returned 9, which is not an empty square"),
    ],
)
def test_a_broken_move_is_one_message_with_the_board(copy, code, says):
    student(copy, code)
    stopped = play(copy, "--x", "minimax", "--o", "random", "--games", "2", "--seed", "1")
    assert stopped.returncode == 1 and says in stopped.stdout, stopped.stdout
    assert "It was asked about this board before play began" in stopped.stdout
    assert "Traceback" not in stopped.stdout + stopped.stderr


def test_what_the_student_s_function_prints_is_shown(copy):
    student(copy, "def choose_move(board):\n    print('thinking about', board.count(' '), 'squares')\n"
            "    return board.index(' ')\n")  # fmt: skip
    shown = play(copy, "--x", "minimax", "--o", "perfect", "--seed", "2")
    assert shown.returncode == 0 and "thinking about 9 squares" in shown.stdout, shown.stdout


def test_a_whole_game_typed_by_a_person(copy):
    """X typed against a stage that always takes the first empty square: 4, 3 (after O's 0 and 1), 5 wins the row."""
    student(copy, FIRST_EMPTY)
    typed = play(copy, "--x", "human", "--o", "minimax", typed="4\n3\n5\n")
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert "O (minimax.choose_move) plays 0." in typed.stdout and "O (minimax.choose_move) plays 1." in typed.stdout
    assert typed.stdout.rstrip().endswith("X (human) wins.")
    as_o = play(copy, "--x", "minimax", "--o", "human", typed="3\n4\n")  # X takes 0, 1, 2: a row before O's third
    assert as_o.stdout.rstrip().endswith("X (minimax.choose_move) wins."), as_o.stdout


def test_perfect_against_perfect_draws_every_game(copy):
    drawn = play(copy, "--x", "perfect", "--o", "perfect", "--games", "100", "--seed", "11")
    assert drawn.returncode == 0 and "draws:  100" in drawn.stdout, drawn.stdout


def test_a_loop_at_the_top_of_the_module_stops_before_play(copy):
    student(copy, "while True:\n    pass\n")
    started = time.monotonic()
    stopped = play(copy, "--o", "minimax", "--time-limit", "1")
    assert time.monotonic() - started < 20 and stopped.returncode == 1
    assert "loading assignments/03_minimax/minimax.py took more than 1 s: look for a loop" in stopped.stdout
