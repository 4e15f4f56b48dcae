"""Does `autograde play` behave for a person at a terminal, and do its matches tell the truth?

The human games run in a real pseudo-terminal (pexpect), the way a student types. The human's moves are
computed from the reference score on the board the game has just drawn, so the tests do not depend on which
of several equally good squares the perfect player picks.
"""

import importlib.util
import io
import json
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.course.board import draw, to_move, winner
from autograder.course.stages import ASSIGNMENTS, ROOT, SOLUTIONS
from autograder.grading import sandbox
from autograder.practice.players import SHAPES, Perfect, Tampered, decode

FIXTURES = Path(__file__).parent / "fixtures" / "play"
MAX_FOR_BOTH = FIXTURES / "max_for_both"  # a known-wrong choose_move: O keeps the largest score too
FIELDS = sorted({name for shape in SHAPES for name in shape} | {"extra"})  # the reply fields, and one unknown


def load_reference():
    spec = importlib.util.spec_from_file_location(
        "_test_play_reference", SOLUTIONS / "04_memoization" / "memoization.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = load_reference()


def after(board, square):
    board = list(board)
    board[square] = to_move(board)
    return board


def move_scores(board):
    return {square: REFERENCE.score(after(board, square)) for square in range(9) if board[square] == " "}


def best_move(board):
    """A best square for the player to move; on the empty board the centre, as a person might open."""
    if board == [" "] * 9:
        return 4
    scores = move_scores(board)
    pick = max if to_move(board) == "X" else min
    return pick(scores, key=scores.get)


def blunder(board):
    """The worst square for the player to move: once the position is lost, perfect play punishes it."""
    scores = move_scores(board)
    pick = min if to_move(board) == "X" else max
    return pick(scores, key=scores.get)


# ---------------------------------------------------------------- human games in a real terminal

BOARD_ROW = re.compile(r"^ (\S) \| (\S) \| (\S)\r?$", re.MULTILINE)


def shown_board(text):
    """The last board drawn in text, as the 9-square list (numbered squares are empty)."""
    rows = BOARD_ROW.findall(text)[-3:]
    assert len(rows) == 3, f"no board before the prompt in {text!r}"
    return [" " if cell.isdigit() else cell for row in rows for cell in row]


def as_in_a_terminal():
    """Ctrl-C as a terminal delivers it, even when the suite was started with SIGINT ignored (`make test &`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(*args):
    command = ["-m", "autograder", "play", *args]
    child = pexpect.spawn(
        sys.executable, command, cwd=str(ROOT), encoding="utf-8", timeout=15, preexec_fn=as_in_a_terminal
    )
    child.logfile_read = io.StringIO()  # everything the player saw, to check for tracebacks at the end
    return child


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    seen = child.logfile_read.getvalue()
    assert "Traceback" not in seen, seen
    return child.exitstatus, seen


def play_out(child, human, choose):
    """Answer every prompt for the human's mark with choose(board) until the game ends; return the verdict."""
    while True:
        found = child.expect([f"{human}, your move: ", r"\S+ \(\S+\) wins\.", r"It's a draw\."])
        if found:
            return child.after
        child.sendline(str(choose(shown_board(child.before))))


@pytest.mark.parametrize("human", ["X", "O"])
def test_a_blundering_human_loses_to_perfect(human):
    """Does the perfect player punish a human who keeps choosing the worst square, from either side?"""
    sides = ["--o", "perfect"] if human == "X" else ["--x", "perfect", "--o", "human"]
    child = spawn(*sides, "--seed", "1")
    verdict = play_out(child, human, blunder)
    other = "O" if human == "X" else "X"
    assert verdict == f"{other} (perfect) wins."
    assert finish(child)[0] == 0


@pytest.mark.parametrize("human", ["X", "O"])
def test_best_play_draws_with_perfect(human):
    """Does a human who plays best moves (X opening in the centre) draw with the perfect player?"""
    sides = ["--o", "perfect"] if human == "X" else ["--x", "perfect", "--o", "human"]
    for seed in ("1", "2"):
        child = spawn(*sides, "--seed", seed)
        assert play_out(child, human, best_move) == "It's a draw."
        assert finish(child)[0] == 0


def test_invalid_input_is_rejected_and_the_game_goes_on():
    """Are an out-of-range square, a non-number, an empty line and an occupied square refused with a message?"""
    child = spawn("--seed", "3")
    child.expect("Type the number of an empty square")
    child.expect("X, your move: ")
    for typed, message in [
        ("9", "9 is not a square: the squares are numbered 0 to 8"),
        ("-1", "-1 is not a square"),
        ("abc", "'abc' is not a number"),
        ("", "Type the number of an empty square"),
    ]:
        child.sendline(typed)
        child.expect_exact(message)
        child.expect("X, your move: ")
    child.sendline("4")
    child.expect("X, your move: ")
    taken = shown_board(child.before)
    child.sendline("4")
    child.expect_exact("Square 4 is taken by X. Choose an empty square:")
    child.expect("X, your move: ")
    assert shown_board(child.logfile_read.getvalue()) == taken  # nothing was played for the refused inputs
    child.sendline(str(best_move(taken)))
    assert play_out(child, "X", best_move) == "It's a draw."
    assert finish(child)[0] == 0


def test_ctrl_d_leaves_cleanly():
    child = spawn()
    child.expect("X, your move: ")
    child.sendeof()
    child.expect_exact("Game abandoned.")
    assert finish(child)[0] == 0


def worker_alive(marker):
    """Is a process whose command line mentions marker still running? (Linux /proc only.)"""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().decode(errors="replace"):
                return True
        except OSError:
            continue
    return False


def sleeper(marker):
    """Module code that starts a process in a session of its own, named by marker, that would sleep for minutes."""
    return (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {marker!r}], start_new_session=True,"
        " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    )


@pytest.mark.parametrize("moment", ["at the prompt", "while the student's function is stuck"])
def test_ctrl_c_leaves_cleanly_and_ends_the_worker(tmp_path, moment):
    """Does Ctrl-C exit with 130 and no traceback, leaving nothing of the student's running even if it was busy?"""
    stage = tmp_path / "03_minimax"
    stage.mkdir()
    body = "while True:\n            pass" if moment.startswith("while") else "return board.index(' ')"
    (stage / "minimax.py").write_text(
        f"{sleeper(str(tmp_path))}"
        f"def choose_move(board):\n    if board.count(' ') == 8:\n        {body}\n    return board.index(' ')\n"
    )
    child = spawn("--o", "minimax", "--from-folder", str(tmp_path), "--time-limit", "30")
    child.expect("X, your move: ")
    child.sendline("4")
    if moment == "at the prompt":
        child.expect("X, your move: ")
    else:
        time.sleep(0.5)  # the worker is now looping on O's first move
    child.sendintr()
    child.expect_exact("Game abandoned.")
    status, _ = finish(child)
    assert status == 130
    deadline = time.time() + 5
    while Path("/proc").is_dir() and worker_alive(str(tmp_path)) and time.time() < deadline:
        time.sleep(0.1)
    assert not (Path("/proc").is_dir() and worker_alive(str(tmp_path))), "the student's worker outlived the game"


def test_a_human_can_play_a_student_module():
    """Does a student's player (the reference memoization here) take its turns in an interactive game?"""
    child = spawn("--x", "human", "--o", "memoization", "--from-folder", str(SOLUTIONS))
    child.expect_exact(f"O: your memoization.choose_move ({SOLUTIONS.relative_to(ROOT)}/04_memoization/memoization.py)")
    assert play_out(child, "X", blunder) == "O (memoization.choose_move) wins."
    assert finish(child)[0] == 0


# ---------------------------------------------------------------- matches


def run(*args):
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "play", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def tally(output):
    found = dict(re.findall(r"^(X wins|O wins|draws): +(\d+)$", output, re.MULTILINE))
    return int(found["X wins"]), int(found["O wins"]), int(found["draws"])


@pytest.mark.parametrize("side", ["X", "O"])
def test_perfect_never_loses_to_random(side):
    """Over 300 seeded games from each side, does the perfect player never lose?"""
    x, o = ("perfect", "random") if side == "X" else ("random", "perfect")
    for seed in ("1", "2", "3"):
        result = run("--x", x, "--o", o, "--games", "100", "--seed", seed)
        assert result.returncode == 0, result.stdout
        x_wins, o_wins, draws = tally(result.stdout)
        assert x_wins + o_wins + draws == 100
        assert (o_wins if side == "X" else x_wins) == 0
        assert f"perfect ({side}) never lost." in result.stdout


def test_perfect_only_ever_picks_best_moves():
    """At every reachable position, is each square perfect may pick (any tie) a best square by the reference?

    Stronger than any number of matches: whatever ties it breaks, and whoever it faces, it cannot lose.
    """
    perfect = Perfect(rng=None)
    perfect.start()
    seen, stack = set(), [[" "] * 9]
    while stack:
        board = stack.pop()
        if "".join(board) in seen or winner(board) or " " not in board:
            continue
        seen.add("".join(board))
        quick = perfect.scores(list(board))
        best_quick = (max if to_move(board) == "X" else min)(quick.values())
        plain = move_scores(board)
        best_plain = (max if to_move(board) == "X" else min)(plain.values())
        assert all(plain[square] == best_plain for square, value in quick.items() if value == best_quick), board
        stack.extend(after(board, square) for square in plain)
    assert len(seen) == 4520  # every unfinished reachable position (COURSE.md)


@pytest.mark.parametrize("module", ["minimax", "memoization", "quickest_move"])
@pytest.mark.parametrize("side", ["X", "O"])
def test_reference_modules_never_lose_to_random(module, side):
    x, o = (module, "random") if side == "X" else ("random", module)
    result = run("--x", x, "--o", o, "--games", "100", "--seed", "5", "--from-folder", str(SOLUTIONS))
    assert result.returncode == 0, result.stdout
    x_wins, o_wins, _ = tally(result.stdout)
    assert (o_wins if side == "X" else x_wins) == 0
    assert f"({side}) never lost." in result.stdout


def test_a_wrong_choose_move_loses_and_the_lost_game_is_shown():
    """Does a choose_move that maximises for O lose games, and are the printed moves a game it really lost?"""
    result = run("--x", "random", "--o", "minimax", "--games", "100", "--seed", "7", "--from-folder", str(MAX_FOR_BOTH))
    assert result.returncode == 0, result.stdout
    x_wins, _, _ = tally(result.stdout)
    assert x_wins > 0
    assert re.search(
        rf"minimax\.choose_move \(O\) lost {x_wins} of the 100 games\. The first was game \d+:", result.stdout
    )
    moves = [int(square) for square in re.search(r"^  moves: ([\d ]+)$", result.stdout, re.MULTILINE)[1].split()]
    board = [" "] * 9
    for square in moves:
        assert board[square] == " " and not winner(board)
        board[square] = to_move(board)
    assert winner(board) == "X"
    assert draw(board) in result.stdout
    x_moves = " ".join(map(str, moves[::2]))
    assert f"autograde play --x human --o minimax --from-folder {MAX_FOR_BOTH}  and, as X, play {x_moves}" in (
        result.stdout
    )


def test_a_wrong_choose_move_loses_to_perfect_on_screen():
    result = run("--x", "perfect", "--o", "minimax", "--seed", "1", "--from-folder", str(MAX_FOR_BOTH))
    assert result.returncode == 0
    assert "O (minimax.choose_move) plays" in result.stdout
    assert result.stdout.rstrip().endswith("X (perfect) wins.")


def test_games_needs_two_players_that_are_not_human():
    result = run("--games", "10")
    assert result.returncode == 2
    assert "not human" in result.stderr


# ---------------------------------------------------------------- a student's function that goes wrong

FIRST_EMPTY = "return board.index(' ')"
# Each fixture misbehaves only on O's first move (8 empty squares) so the game, not the readiness check, stops.
BROKEN = {
    "raises": ("return 1 // 0", ["raised ZeroDivisionError: integer division or modulo by zero", "minimax.py line 3"]),
    "occupied": ("return board.index('X')", ["returned", "but square", "is taken by X"]),
    "out of range": ("return 9", ["returned 9, which is not a square"]),
    "bool": ("return True", ["returned True, a bool"]),
    "none": ("return None", ["returned None (does every way through the function end in a return?)"]),
    "str": ("return '4'", ["returned '4', a str"]),
    "changes the board": ("board[board.index(' ')] = 'O'\nreturn board.index(' ')", ["changed the board"]),
    "loops": ("while True:\n    pass", ["took more than 1 second to choose a move and was stopped"]),
    "exits": ("raise SystemExit(3)", ["raised SystemExit: 3"]),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_function_stops_the_game_with_one_message(tmp_path, name):
    body, expected = BROKEN[name]
    stage = tmp_path / "03_minimax"
    stage.mkdir()
    source = f"def choose_move(board):\n    if board.count(' ') == 8:\n{textwrap.indent(body, ' ' * 8)}\n"
    (stage / "minimax.py").write_text(f"{source}    {FIRST_EMPTY}\n")
    started = time.time()
    result = run("--x", "random", "--o", "minimax", "--games", "20", "--seed", "1", "--from-folder", str(tmp_path),
                 "--time-limit", "1")  # fmt: skip
    assert result.returncode == 1
    assert time.time() - started < 10
    out = result.stdout
    assert "The game stops: minimax.choose_move " in out
    for text in expected:
        assert text in out
    assert "It was O's move (game 1 of 20, moves so far: " in out
    assert "---+---+---" in out  # the board it was asked about


def test_a_function_broken_from_the_start_fails_the_readiness_check(tmp_path):
    stage = tmp_path / "03_minimax"
    stage.mkdir()
    (stage / "minimax.py").write_text("def choose_move(board):\n    return 0\n")
    result = run("--x", "minimax", "--o", "random", "--from-folder", str(tmp_path))
    assert result.returncode == 1
    assert "The game stops: minimax.choose_move returned 0, but square 0 is taken by X" in result.stdout
    assert "before play began" in result.stdout


def test_an_unwritten_stage_is_one_line():
    """Does the starter's NotImplementedError give one line that names the function, and exit 1?"""
    result = run("--x", "human", "--o", "quickest_move", "--from-folder", str(ASSIGNMENTS))
    assert result.returncode == 1
    assert result.stdout.strip().startswith("quickest_move.quickest_move is not written yet:")
    assert len(result.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "source, expected",
    [
        (None, "there is no"),
        ("def choose_move(board)\n    return 1\n", "could not be loaded: SyntaxError"),
        ("while True:\n    pass\n", "took more than 1 second to load"),
    ],
    ids=["missing", "syntax error", "loops on import"],
)
def test_a_module_that_cannot_load_is_one_message(tmp_path, source, expected):
    if source is not None:
        (tmp_path / "03_minimax").mkdir()
        (tmp_path / "03_minimax" / "minimax.py").write_text(source)
    result = run("--o", "minimax", "--from-folder", str(tmp_path), "--time-limit", "1")
    assert result.returncode == 1
    assert expected in result.stdout


# ---------------------------------------------------------------- a student's module runs in the grading sandbox


def student_folder(tmp_path, source):
    folder = tmp_path / "student"
    (folder / "03_minimax").mkdir(parents=True)
    (folder / "03_minimax" / "minimax.py").write_text(textwrap.dedent(source))
    return folder


def test_a_student_module_sees_nothing_of_the_course(tmp_path):
    """Can a module run with --from-folder read the course's solutions, or write outside its sandbox? It must not."""
    if sandbox.detect().level != "bubblewrap":
        pytest.skip(f"only bubblewrap hides the course's files: {sandbox.detect().detail}")
    escaped = tmp_path / "escaped"
    folder = student_folder(
        tmp_path,
        f"""
        import os, sys

        def find():
            # Wherever the course might be: the working folder, this file's folders, the import path, its real place.
            for start in [os.getcwd(), os.path.abspath(__file__), *sys.path, {str(ROOT)!r}]:
                folder = start
                while True:
                    candidate = os.path.join(folder, "solutions", "03_minimax", "minimax.py")
                    try:
                        with open(candidate) as handle:
                            return handle.read()
                    except OSError:
                        pass
                    if os.path.dirname(folder) == folder:
                        break
                    folder = os.path.dirname(folder)

        found = {{}}
        source = find()
        if source is not None:
            exec(source, found)
            print("read the course's solutions")
        try:
            open({str(escaped)!r}, "w").close()
        except OSError:
            pass

        def choose_move(board):
            return found["choose_move"](board) if found else 9
        """,
    )
    result = run("--x", "minimax", "--o", "random", "--games", "3", "--seed", "1", "--from-folder", str(folder))
    assert "read the course's solutions" not in result.stdout + result.stderr
    assert result.returncode == 1
    assert "The game stops: minimax.choose_move returned 9, which is not a square" in result.stdout
    assert not escaped.exists(), "the module wrote a file outside its sandbox"


def processes_named(marker):
    return [path.parent.name for path in Path("/proc").glob("[0-9]*/cmdline") if marker in read_cmdline(path)]


def read_cmdline(path):
    try:
        return path.read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_no_process_a_module_starts_outlives_the_game(tmp_path):
    """Is a process the student's code starts in a session of its own gone when play exits?"""
    marker = f"autograde-play-sleeper-{time.time_ns()}"
    folder = student_folder(tmp_path, sleeper(marker) + "def choose_move(board):\n    return board.index(' ')\n")
    try:
        result = run("--x", "minimax", "--o", "random", "--games", "3", "--seed", "1", "--from-folder", str(folder))
        assert result.returncode == 0, result.stdout
        deadline = time.time() + 5
        while processes_named(marker) and time.time() < deadline:
            time.sleep(0.1)
        assert not processes_named(marker), "a process started by the student's module outlived the game"
    finally:
        for pid in processes_named(marker):
            subprocess.run(["kill", "-KILL", pid], check=False)


@pytest.mark.parametrize(
    "prelude",
    [
        "import signal\nfor number in (signal.SIGXCPU, signal.SIGTERM, signal.SIGALRM):\n"
        "    signal.signal(number, signal.SIG_IGN)\n",
        "import os\nfor _ in range(3):\n    try:\n        if os.fork() == 0:\n            break\n"
        "    except OSError:\n        break\n",
    ],
    ids=["ignoring signals", "in several processes"],
)
def test_a_loop_that_resists_is_stopped_by_the_time_limit(tmp_path, prelude):
    """Is a choose_move that loops while ignoring the usual signals, or in forked processes, stopped in time?"""
    body = "    if board.count(' ') == 8:\n" + textwrap.indent(prelude + "while True:\n    pass\n", " " * 8)
    folder = student_folder(tmp_path, f"def choose_move(board):\n{body}    return board.index(' ')\n")
    started = time.time()
    result = run("--x", "random", "--o", "minimax", "--games", "5", "--seed", "1", "--from-folder", str(folder),
                 "--time-limit", "1")  # fmt: skip
    assert time.time() - started < 15
    assert result.returncode == 1
    assert "took more than 1 second to choose a move and was stopped" in result.stdout
    assert "It was O's move (game 1 of 5, moves so far: " in result.stdout


def test_what_a_module_prints_is_shown_once_per_move_played(tmp_path):
    """Is print() output visible, once per move the game really asks for, with terminal escapes made harmless?"""
    folder = student_folder(
        tmp_path,
        """
        print("imported \\x1b[2J")

        def choose_move(board):
            print("thinking about", "".join(board).replace(" ", "."))
            return board.index(" ")
        """,
    )
    result = run("--x", "minimax", "--o", "random", "--seed", "4", "--from-folder", str(folder))
    assert result.returncode == 0, result.stdout
    played = result.stdout.count("X (minimax.choose_move) plays")
    assert played >= 3
    thoughts = re.findall(r"^thinking about (\S{9})$", result.stderr, re.MULTILINE)
    assert thoughts[0] == "XOXOXOOX."  # the readiness check, before play
    assert len(thoughts) == played + 1, result.stderr
    assert result.stderr.count("imported") == 1
    assert "\x1b" not in result.stderr and "imported \\x1b[2J" in result.stderr


FORGED_ANSWER = (
    "import json, os\n"
    "os.write(3, (json.dumps({'board': ''.join(board), 'move': 8, 'after': ['s' + s for s in board]}) + '\\n')"
    ".encode())\n"
    "return 0\n"
)


@pytest.mark.parametrize(
    "module_code, function_code",
    [
        ("import os\nos.write(3, b'{\"loaded\": true}\\n')\n", "return board.index(' ')\n"),
        ("", FORGED_ANSWER),
        ("", "import os\nos.write(3, b'not json\\n')\nreturn board.index(' ')\n"),
        ("", 'import os\nos.write(3, b\'{"board": "XOXOXOOX ", "move": 8, "extra": 1}\\n\')\nreturn 8\n'),
    ],
    ids=["a second loaded line", "a forged answer", "garbage", "an unknown field"],
)
def test_writing_to_the_reply_channel_is_tampering(tmp_path, module_code, function_code):
    """Does anything the student's code writes on the child's reply channel stop the game as tampering?"""
    folder = student_folder(tmp_path, f"{module_code}def choose_move(board):\n{textwrap.indent(function_code, '    ')}")
    result = run("--x", "minimax", "--o", "random", "--games", "2", "--seed", "1", "--from-folder", str(folder))
    assert result.returncode == 1
    assert "The game stops: minimax.choose_move: the grader's reply channel was tampered with" in result.stdout


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.lists(
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.text(max_size=12),
                lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
                max_leaves=12,
            ),
            max_size=5,
        ).map(lambda values: b"".join(json.dumps(value).encode() + b"\n" for value in values)),
    )
)
def test_the_reply_decoder_accepts_only_what_the_child_writes(data):
    """Whatever bytes arrive on the reply channel, is the result a list of known shapes or Tampered, never a crash?"""
    try:
        lines = decode(data)
    except Tampered:
        return
    for index, line in enumerate(lines):
        assert any(shape.keys() == line.keys() for shape in SHAPES)
        assert ("board" in line) == (index > 0)


# ---------------------------------------------------------------- quickest_move plays where it can force a win


def quickest_move_folder(tmp_path, on_forced_win, elsewhere):
    """A stage 7 module: the reference quick_score, and a quickest_move that answers forced wins one way and
    every other board another."""
    reference = (SOLUTIONS / "07_quickest_move" / "quickest_move.py").read_text()
    stage = tmp_path / "07_quickest_move"
    stage.mkdir()
    code = reference.split("def quickest_move")[0] + textwrap.dedent(f"""
        def quickest_move(board):
            mark = to_move(board)
            scores = {{}}
            for square in range(9):
                if board[square] == " ":
                    board[square] = mark
                    scores[square] = quick_score(board)
                    board[square] = " "
            best = (max if mark == "X" else min)(scores.values())
            if (best > 0) != (mark == "X") or best == 0:
                {elsewhere}
            {on_forced_win}
        """)
    (stage / "quickest_move.py").write_text(code)
    return tmp_path


@pytest.mark.parametrize("side", ["X", "O"])
def test_a_quickest_move_that_answers_only_forced_wins_plays_a_match(tmp_path, side):
    """Is a correct quickest_move that returns None off its contract (no forced win) played, not blamed?"""
    folder = quickest_move_folder(
        tmp_path, "return min(s for s in scores if scores[s] == best)", "return None  # never asked in stage 7"
    )
    x, o = ("quickest_move", "random") if side == "X" else ("random", "quickest_move")
    result = run("--x", x, "--o", o, "--from-folder", str(folder), "--games", "10", "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("the perfect reference move is played for it") == 1, result.stdout
    assert f"quickest_move.quickest_move ({side}) never lost." in result.stdout


def test_a_quickest_move_is_still_asked_where_it_can_force_a_win(tmp_path):
    """Where the mover can force a win, is it the student's function that moves (a taken square is named)?"""
    folder = quickest_move_folder(tmp_path, "return next(s for s in range(9) if board[s] != ' ')", "return None")
    result = run("--x", "quickest_move", "--o", "random", "--from-folder", str(folder))
    assert result.returncode == 1
    assert "The game stops: quickest_move.quickest_move returned 0, but square 0 is taken by X" in result.stdout
