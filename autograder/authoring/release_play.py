"""The release's play.py: release_files/play.py with its players and its table of every board filled in.

The student copy has no grader and no reference solution, and play.py must not hold the code of any stage's
answer (the leak check reads it like every released file). So the game is a table, made here from the course's
own reference players: for each board that can happen, who has won or whose move it is, the perfect player's best
squares (players.Perfect: minimax, then the quickest win) and whether the player to move can force a win (where
quickest_move is asked).
"""

import base64
import random
import sys
import zlib
from array import array

from autograder.course.board import to_move, winner
from autograder.course.stages import STAGE_BY_MODULE
from autograder.practice.players import STUDENT_FUNCTIONS, Perfect, forced_wins_only

X_WON, O_WON, DRAWN, IN_PLAY = 1, 2, 3, 4
O_TO_MOVE, CAN_FORCE_A_WIN = 512, 1024


def board_number(board) -> int:
    number = 0
    for mark in board:
        number = number * 3 + " XO".index(mark)
    return number


def table() -> array:
    """The code of every board of 3**9 (play.py's TABLE, before compression): 0 for one that cannot happen."""
    perfect = Perfect(random.Random(0))
    perfect.start()
    codes = array("H", [0]) * 3**9
    todo = [(" ",) * 9]
    while todo:
        board = todo.pop()
        number = board_number(board)
        if codes[number]:
            continue
        won = winner(list(board))
        if won is not None or " " not in board:
            codes[number] = {"X": X_WON, "O": O_WON, None: DRAWN}[won]
            continue
        mark = to_move(list(board))
        scores = perfect.scores(list(board))
        best = (max if mark == "X" else min)(scores.values())
        bits = sum(1 << square for square, value in scores.items() if value == best)
        forced = best > 0 if mark == "X" else best < 0
        codes[number] = IN_PLAY + bits + (O_TO_MOVE if mark == "O" else 0) + (CAN_FORCE_A_WIN if forced else 0)
        for square in scores:
            todo.append(board[:square] + (mark,) + board[square + 1 :])
    return codes


def encoded_table() -> str:
    codes = table()
    if codes.itemsize != 2:
        raise AssertionError("the table's codes must be two bytes each")
    data = array("H", codes)
    if sys.byteorder == "big":
        data.byteswap()  # play.py reads it little-endian
    return base64.b64encode(zlib.compress(data.tobytes(), 9)).decode("ascii")


def players() -> dict[str, tuple[str, str, str, bool]]:
    """Your players, as play.py names them: module -> (stage folder, module file, the function that plays,
    whether it is asked only where it can force a win)."""
    found = {}
    for module, function in STUDENT_FUNCTIONS.items():
        stage = STAGE_BY_MODULE[module]
        found[module] = (stage.id, stage.filename, function, forced_wins_only(module))
    return found


def play_script() -> bytes:
    from autograder.authoring.release import RELEASE_FILES

    template = (RELEASE_FILES / "play.py").read_text()
    for empty, filled in (("PLAYERS = {}\n", f"PLAYERS = {players()!r}\n"), ('TABLE = ""\n', None)):
        if template.count(empty) != 1:
            raise AssertionError(f"release_files/play.py must hold the line {empty!r} exactly once")
        if filled is None:
            text = encoded_table()
            lines = [text[i : i + 100] for i in range(0, len(text), 100)]
            filled = "TABLE = (\n" + "".join(f'    "{line}"\n' for line in lines) + ")\n"
        template = template.replace(empty, filled)
    return template.encode()
