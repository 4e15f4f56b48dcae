"""The Python side of the course page's worker: the visible tests with pytest, matches with play.py, the zip.

It runs inside Pyodide, in a Web Worker, over the student copy written to COURSE (the release's files). Each
call gets the student's code as text, writes it where the terminal course keeps it, and runs the same thing a
terminal would: `python -m pytest assignments/STAGE -q` from the copy's root, or play.py's players and games.
There is no timer signal here: a loop that never ends is stopped by the page, which ends the whole worker.
"""

import contextlib
import io
import json
import os
import random
import sys
import zipfile
from pathlib import Path

COURSE = Path("/course")
ASSIGNMENTS = COURSE / "assignments"
STAGES = {}  # stage id -> its module (without .py), set by setup()


def setup(stages_json, wheels):
    """Install the wheels (the folder the page wrote them to) into site-packages and note the stages."""
    import site

    target = site.getsitepackages()[0]
    for wheel in sorted(Path(wheels).glob("*.whl")):
        zipfile.ZipFile(wheel).extractall(target)
    STAGES.update(json.loads(stages_json))
    import pytest  # noqa: F401 (imported once here, so that the first run costs what the others do)

    os.chdir(COURSE)
    sys.path.insert(0, str(COURSE))  # play.py


def _write(stage, code):
    path = ASSIGNMENTS / stage / f"{STAGES[stage]}.py"
    path.write_text(code)
    return path


def _forget_course_modules():
    """Drop every module imported from the copy (the student's, the tests, conftest), so each run starts afresh,
    as a new `python -m pytest` would, and reads the code just written."""
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(ASSIGNMENTS)):
            del sys.modules[name]


class _Counts:
    """pytest's own tallies at the end of the run, as its summary line counts them."""

    def __init__(self):
        self.stats = {}

    def pytest_terminal_summary(self, terminalreporter):
        self.stats = {key: len(terminalreporter.stats.get(key, [])) for key in ("passed", "failed", "error")}


def run_tests(stage, code):
    """The stage's visible tests on code: {passed, failed, errors, output, exit}, as JSON."""
    import pytest

    _write(stage, code)
    _forget_course_modules()
    counts = _Counts()
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        exit_code = pytest.main([f"assignments/{stage}", "-q", "--color=no", "-p", "no:cacheprovider"], [counts])
    stats = counts.stats or {"passed": 0, "failed": 0, "error": 0}
    return json.dumps(
        {
            "passed": stats["passed"],
            "failed": stats["failed"],
            "errors": stats["error"],
            "exit": int(exit_code),
            "output": output.getvalue(),
        }
    )


def _player(stage, code, rng):
    """The stage's player from play.py (the release's game, its checks of every move), called directly: Pyodide
    has no threads for play.py's time limit, and the page's limit on the worker stands in for it."""
    import play

    class InPage(play.Student):
        def call(self, work, board, what):
            try:
                return work()
            except NotImplementedError:
                said = f"{self.function_name} in {self.path.name} is not written yet: write it first"
                raise play.Stop(said, None) from None
            except Exception as error:  # what the student's code raises is reported in a sentence
                said = f"{what} raised {type(error).__name__}: {error}{play.where(error, self.path)}"
                raise play.Stop(said, board) from None

    _write(stage, code)
    _forget_course_modules()
    kind = STAGES[stage]
    fallback = play.Perfect(rng) if play.PLAYERS[kind][3] else None
    player = InPage(kind, ASSIGNMENTS, None, fallback)
    with contextlib.redirect_stdout(io.StringIO()):  # its note about the fallback is for a terminal
        player.start()
    return player


def _stopped(stop):
    return json.dumps({"error": stop.args[0], "board": stop.args[1]})


def match(stage, code, opponent, games, seed):
    """games games of the stage's player against random or perfect, the player X in odd games and O in even
    ones: {wins, draws, losses} from the player's side, as JSON (or {error} when its code stops the match)."""
    import play

    rng = random.Random(seed)
    tally = {"wins": 0, "draws": 0, "losses": 0}
    try:
        student = _player(stage, code, rng)
        other = play.make(opponent, rng, ASSIGNMENTS, None)
        with contextlib.redirect_stdout(io.StringIO()):
            for number in range(games):
                mark = "X" if number % 2 == 0 else "O"
                won = play.quiet_game({mark: student, "O" if mark == "X" else "X": other}, [])
                tally["draws" if won is None else "wins" if won == mark else "losses"] += 1
    except play.Stop as stop:
        return _stopped(stop)
    return json.dumps(tally)


def state(board):
    """Where a game stands, from play.py's table: {over, won, toMove}."""
    import play

    board = list(board)
    over = play.over(board)
    to_move = None if over else play.mark_to_play(board)
    return json.dumps({"over": over, "won": play.winner_of(board), "toMove": to_move})


_playing = {}  # (stage, code) -> its player, for the moves of games on the board: loaded once, answers kept


def move(stage, code, board):
    """The stage's player's move on board, as JSON {square} (or {error})."""
    import play

    try:
        if (stage, code) not in _playing:
            _playing.clear()
            _playing[stage, code] = _player(stage, code, random.Random())
        return json.dumps({"square": _playing[stage, code].move(list(board))})
    except play.Stop as stop:
        return _stopped(stop)


def submission(codes_json):
    """The zip of the student's work, {stage id: code} in the release's layout (assignments/STAGE/MODULE.py), as
    `autograde grade` reads a submission."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for stage, code in sorted(json.loads(codes_json).items()):
            archive.writestr(f"assignments/{stage}/{STAGES[stage]}.py", code)
    return data.getvalue()
