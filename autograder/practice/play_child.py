"""Runs inside the sandbox for `autograde play`: import one student module and ask its move function about boards.

Standard library only, started as `python -I -S play_child.py`, one sandboxed run per request of the player
(autograder/players.py). stdin holds one JSON job:

    {"module": <the stage's module>, "function": <its function that plays>, "boards": [...], "ahead": [...],
     "known": [...], "budget": seconds}

Boards are 9-character strings. Every board of "boards" is answered; then, until "budget" seconds after it
started, the boards of "ahead" and the boards the player can face next (one per reply of the opponent to each
move it made) are answered too, skipping "known" ones, so that a whole match needs only a few runs. A call
still running when that time is up ends the run at once: what was answered stands, the rest is asked again.

On file descriptor 3 it writes one JSON line per step as the step ends: {"loaded": true} (or {"load_error": ...,
"where": ...}), then one line per board, in the order Plan gives. Before each call it writes MARK on stdout, so
the parent can tell which call printed what. Nothing here is trusted: the parent decodes every line strictly,
follows the same Plan itself and judges each move.
"""

import json
import os
import signal
import sys
import time
import traceback
from collections import deque

MARK = b"\0autograde-play: next call\0\n"
TEXT_CAP = 300  # longest message, location or repr reported
BOARD_ITEMS = 16  # squares of the board reported after a call (a board holds 9; more means it grew)
SQUARE_CAP = 20  # characters of a square reported (a square holds 1)
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def finished(key):
    """Whether the board (a 9-character string) has a completed line or no empty square."""
    return " " not in key or any(key[a] != " " and key[a] == key[b] == key[c] for a, b, c in LINES)


def to_move(key):
    return "X" if key.count("X") == key.count("O") else "O"


def follow_ups(key, move):
    """The unfinished boards the player faces next after playing move on key: one per reply of the opponent."""
    mine = to_move(key)
    after = key[:move] + mine + key[move + 1 :]
    if finished(after):
        return []
    theirs = "O" if mine == "X" else "X"
    boards = (after[:square] + theirs + after[square + 1 :] for square in range(9) if after[square] == " ")
    return [board for board in boards if not finished(board)]


class Plan:
    """The order boards are answered in: the required boards, then breadth-first the boards ahead.

    The child and the parent both follow it, the parent with the moves it has checked, so every answer
    belongs to exactly one board the parent expects next and the child never names a board of its own.
    """

    def __init__(self, boards, ahead, known):
        self.seen = set(known)
        self.queue = deque()
        for key in boards:
            self.add(key)
        self.required = len(self.queue)
        for key in ahead:
            self.add(key)

    def add(self, key):
        if key not in self.seen:
            self.seen.add(key)
            self.queue.append(key)

    def next(self):
        return self.queue.popleft() if self.queue else None

    def follow(self, key, move):
        for board in follow_ups(key, move):
            self.add(board)


def unchanged(key):
    """The report of a board left as it was given: each square the same one-character string."""
    return ["s" + square for square in key]


def encode_board(board):
    """The board after a call, square by square, keeping types: "s<text>" a str, "o<type name>" anything else."""
    items = ["s" + item[:SQUARE_CAP] if type(item) is str else "o" + type_name(item) for item in board[:BOARD_ITEMS]]
    return items + ["..."] * (len(board) > BOARD_ITEMS)


def legal(key, reply):
    """Whether a reply is a move to play on key: an int for an empty square, the board left unchanged."""
    move = reply.get("move")
    return type(move) is int and 0 <= move <= 8 and key[move] == " " and reply.get("after") == unchanged(key)


def type_name(value):
    name = type(value).__name__
    return name[:40] if type(name) is str else "?"


def shown(value, depth=0):
    """A short repr for a message, never calling the value's own __repr__ (student code)."""
    kind = type(value)
    if value is None or kind in (bool, float, complex):
        return repr(value)[:TEXT_CAP]
    if kind is int:
        return repr(value) if -(10**50) < value < 10**50 else "a very large int"
    if kind in (str, bytes):
        return repr(value[:60])
    if kind in (list, tuple) and depth < 2:
        items = [shown(item, depth + 1) for item in value[:10]] + ["..."] * (len(value) > 10)
        text = ", ".join(items) + ("," if kind is tuple and len(value) == 1 else "")
        return ("[%s]" if kind is list else "(%s)") % text
    return f"<{type_name(value)} object>"


def describe(error):
    """'ZeroDivisionError: division by zero': the last line of Python's own report of the error."""
    try:
        text = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]
    except BaseException:  # noqa: B036 - a student's __str__ may raise anything
        text = type_name(error)
    return text[:TEXT_CAP]


def _frames(error, path):
    frames = traceback.extract_tb(error.__traceback__)
    return [frame for frame in frames if os.path.abspath(frame.filename) == path]


def location(error, path):
    """'minimax.py line 57, in score: return 1 / 0': the last line of the student's file on the way to the error."""
    name = os.path.basename(path)
    if isinstance(error, SyntaxError) and error.lineno:
        text = error.text if type(error.text) is str else ""
        return f"{name} line {error.lineno}: {text.strip()}"[:TEXT_CAP]
    frames = _frames(error, path)
    if not frames:
        return ""
    frame = frames[-1]
    return f"{name} line {frame.lineno}, in {frame.name}: {frame.line}"[:TEXT_CAP]


def call(function, name, key, path):
    """Ask the student's function about one board; the reply says what happened, in plain values."""
    board = list(key)
    try:
        result = function(board)
    except NotImplementedError as error:
        frames = _frames(error, path)
        return {"board": key, "not_written": (frames[-1].name if frames else name)[:TEXT_CAP]}
    except BaseException as error:  # noqa: B036 - SystemExit and RecursionError are the student's too
        return {"board": key, "raised": describe(error), "where": location(error, path)}
    after = encode_board(board)
    if type(result) is int and -(10**6) < result < 10**6:  # bool is an int subclass, and not a square
        return {"board": key, "move": result, "after": after}
    return {"board": key, "returned": shown(result), "type": type_name(result), "after": after}


def send(reply):
    data = (json.dumps(reply) + "\n").encode()
    while data:
        data = data[os.write(3, data) :]


def flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # the student's code may have replaced or closed it
            pass


def stop_ahead(signum, frame):
    os._exit(0)  # the call in progress was only ahead of the game: the parent asks again if it needs it


def main():
    started = time.monotonic()
    job = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the student's input() reads nothing, as in a game without a keyboard
    sys.stdout.reconfigure(line_buffering=True)  # printed lines reach the parent even if the call never returns
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)  # as if the student ran their module from its own folder
    path = os.path.join(here, job["module"] + ".py")
    try:
        module = __import__(job["module"])
        function = getattr(module, job["function"])
    except BaseException as error:  # noqa: B036 - a SyntaxError or even SystemExit must become a message
        flush()
        send({"load_error": describe(error), "where": location(error, path)})
        return
    flush()
    send({"loaded": True})
    plan = Plan(job["boards"], job["ahead"], job["known"])
    answered = 0
    while (key := plan.next()) is not None:
        if answered == plan.required:  # what was asked is answered: the rest is ahead, while the budget lasts
            left = job["budget"] - (time.monotonic() - started)
            if left <= 0:
                break
            signal.signal(signal.SIGALRM, stop_ahead)
            signal.setitimer(signal.ITIMER_REAL, left)
        flush()
        try:
            os.write(1, MARK)
        except OSError:  # the student's code closed its stdout: it loses its output, nothing else
            pass
        reply = call(function, job["function"], key, path)
        flush()
        send(reply)
        answered += 1
        if legal(key, reply):
            plan.follow(key, reply["move"])


if __name__ == "__main__":
    main()
