"""The players of `autograde play`: a human at the keyboard, a random player, the perfect reference player and
the student's own stage modules.

A student's function runs in a worker process of its own (see serve below), so a call stuck in a loop can be
stopped after a time limit, and a crash, an illegal answer or a changed board becomes a Stop that names the
function instead of a traceback.
"""

import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path

from autograder.board import empty_squares, to_move
from autograder.course import ROOT, SOLUTIONS, STAGE_BY_MODULE

# The student players: module name -> the function asked for a move.
STUDENT_FUNCTIONS = {"minimax": "choose_move", "memoization": "choose_move", "quickest_move": "quickest_move"}
KINDS = ("human", "random", "perfect", *STUDENT_FUNCTIONS)

# Asked once before play so a starter that still raises NotImplementedError is caught before the first move.
# One empty square, and X to move wins there: a legal board for every stage, quickest_move's included.
PROBE = ["X", "O", "X", "O", "X", "O", "O", "X", " "]


def shown(path):
    """A path relative to the working directory when it is below it (shorter in messages), else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class Stop(Exception):
    """A player cannot go on. board is the position it was asked about (None for a problem before play)."""

    def __init__(self, message, board=None):
        super().__init__(message)
        self.message = message
        self.board = board


class Quit(Exception):
    """The human left the game (Ctrl-D)."""


class Human:
    name = "human"
    thinks = False  # its moves are typed, so there is nothing to announce

    def start(self):
        pass

    def move(self, board):
        mark = to_move(board)
        while True:
            try:
                text = input(f"{mark}, your move: ").strip()
            except EOFError:
                raise Quit from None
            free = ", ".join(map(str, empty_squares(board)))
            if not text:
                print(f"Type the number of an empty square ({free}), or press Ctrl-D to quit.")
                continue
            try:
                square = int(text)
            except ValueError:
                print(f"{text!r} is not a number. Type the number of an empty square: {free}.")
                continue
            if not 0 <= square <= 8:
                print(f"{square} is not a square: the squares are numbered 0 to 8. Empty now: {free}.")
            elif board[square] != " ":
                print(f"Square {square} is taken by {board[square]}. Choose an empty square: {free}.")
            else:
                return square

    def close(self):
        pass


class RandomPlayer:
    name = "random"
    thinks = True

    def __init__(self, rng):
        self.rng = rng

    def start(self):
        pass

    def move(self, board):
        return self.rng.choice(empty_squares(board))

    def close(self):
        pass


class Perfect:
    """The reference player: a best move by minimax, and among those the quickest win (or the slowest loss).

    It scores with the reference quick_score of stage 7 (a win is worth more the more squares are still empty,
    so its sign is the plain minimax score), remembered per board so a whole game costs milliseconds. Ties
    between equally good squares are broken with the seeded random generator, so games vary but repeat.
    """

    name = "perfect"
    thinks = True
    reference = SOLUTIONS / "07_quickest_move" / "quickest_move.py"

    def __init__(self, rng):
        self.rng = rng
        self.quick_score = None

    def start(self):
        if not self.reference.exists():
            raise Stop(f"perfect plays with the reference solution {shown(self.reference)}, which is not here")
        spec = importlib.util.spec_from_file_location("_autograde_perfect_reference", self.reference)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        plain, memo = module.quick_score, {}

        def remembered(board):
            key = "".join(board)
            if key not in memo:
                memo[key] = plain(board)
            return memo[key]

        # quick_score recurses through the module's global name, so this memoizes the inner calls too.
        module.quick_score = remembered
        self.quick_score = remembered

    def scores(self, board):
        """Square -> quick score for every empty square of board."""
        mark, found = to_move(board), {}
        for square in empty_squares(board):
            board[square] = mark
            found[square] = self.quick_score(board)
            board[square] = " "
        return found

    def move(self, board):
        found = self.scores(list(board))
        best = (max if to_move(board) == "X" else min)(found.values())
        return self.rng.choice([square for square, value in found.items() if value == best])

    def close(self):
        pass


class Student:
    """A student's move function from <folder>/<stage>/<module>.py, run in a worker process.

    Answers are remembered per board for the whole run: a move function depends only on the board, and
    plain minimax then pays its one-second empty-board search once per match instead of once per game.
    """

    thinks = True

    def __init__(self, module, folder, time_limit):
        stage = STAGE_BY_MODULE[module]
        self.stage = stage
        self.function = STUDENT_FUNCTIONS[module]
        self.name = f"{module}.{self.function}"
        self.path = Path(folder) / stage.id / stage.filename
        self.time_limit = time_limit
        self.answers = {}
        self.process = None
        self.replies = queue.Queue()

    def start(self):
        if not self.path.is_file():
            raise Stop(f"{self.name}: there is no {shown(self.path)} (is --from-folder the folder of the stages?)")
        code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from autograder.players import serve; serve()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(self.path.resolve()), self.function],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        threading.Thread(target=self._read, daemon=True).start()
        reply = self._reply(None)
        if "error" in reply:
            raise Stop(f"{shown(self.path)} could not be loaded: {reply['error']}{where(reply)}")
        self.move(PROBE)

    def _read(self):
        for line in self.process.stdout:
            try:
                self.replies.put(json.loads(line))
            except ValueError:
                sys.stderr.write(line)  # not ours: something the student's code wrote straight to the pipe
        self.replies.put({"gone": True})

    def _reply(self, board):
        """The worker's answer about board (None: about loading the module), within the time limit."""
        try:
            reply = self.replies.get(timeout=self.time_limit)
        except queue.Empty:
            self.close()
            limit = f"{self.time_limit:g} second{'' if self.time_limit == 1 else 's'}"
            if board is None:
                message = f"{shown(self.path)} took more than {limit} to load: is there a loop outside a function?"
                raise Stop(message) from None
            raise Stop(
                f"{self.name} took more than {limit} to choose a move and was stopped. Is it stuck in a loop? "
                "(Plain minimax needs about a second from the empty board; memoization makes it instant.)",
                board,
            ) from None
        if reply.get("gone"):
            code = self.process.wait()
            doing = "while loading" if board is None else "while choosing a move"
            raise Stop(f"the process running {self.name} ended (exit code {code}) {doing}", board)
        return reply

    def move(self, board):
        key = "".join(board)
        if key in self.answers:
            return self.answers[key]
        try:
            self.process.stdin.write(json.dumps(board) + "\n")
            self.process.stdin.flush()
        except OSError:  # the worker has already ended; _reply below reports how
            pass
        reply = self._reply(board)
        if reply.get("not_written"):
            raise Stop(
                f"{self.name} is not written yet: {shown(self.path)} still raises NotImplementedError"
                f" (in {reply['function']}). Finish stage {int(self.stage.id[:2])} first, or pick another player."
            )
        if "error" in reply:
            raise Stop(f"{self.name} raised {reply['error']}{where(reply)}", board)
        if reply["changed"]:
            raise Stop(
                f"{self.name} changed the board it was given (every function must leave the board as it found it:"
                f" undo each mark you try). Afterwards the board was {reply['after']}",
                board,
            )
        move = reply.get("move")
        if move is None:
            if reply["type"] == "NoneType":
                kind = "None (does every way through the function end in a return?)"
            else:
                kind = f"{reply['repr']}, a {reply['type']}"
            raise Stop(f"{self.name} returned {kind}: a move is an int, the number of an empty square 0 to 8", board)
        if not 0 <= move <= 8:
            raise Stop(f"{self.name} returned {move}, which is not a square: the squares are numbered 0 to 8", board)
        if board[move] != " ":
            raise Stop(f"{self.name} returned {move}, but square {move} is taken by {board[move]}", board)
        self.answers[key] = move
        return move

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def where(reply):
    return f"\n  at {reply['where']}" if reply.get("where") else ""


def make(kind, rng, folder, time_limit):
    """A player of the given kind (one of KINDS)."""
    if kind == "human":
        return Human()
    if kind == "random":
        return RandomPlayer(rng)
    if kind == "perfect":
        return Perfect(rng)
    return Student(kind, folder, time_limit)


def serve():
    """The worker: load the student's module, then answer one board per line of input with one JSON line.

    The protocol has fds of its own; fd 1 is pointed at stderr so the student's print() still reaches the
    terminal without corrupting it, and the student's input() reads nothing.
    """
    path, function = sys.argv[1], sys.argv[2]
    requests_in = os.fdopen(os.dup(0), "r")
    replies_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    # Ctrl-C reaches the whole process group; the parent decides what it means and then ends this worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def send(reply):
        replies_out.write(json.dumps(reply) + "\n")
        replies_out.flush()

    boards = queue.Queue()

    def read():
        for line in requests_in:
            boards.put(json.loads(line))
        os._exit(0)  # the parent has gone: end even if the student's code is stuck in a loop

    threading.Thread(target=read, daemon=True).start()
    folder = str(Path(path).parent)
    sys.path.insert(0, folder)  # as if the student ran their module from its own folder
    try:
        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        chosen = getattr(module, function)
    except BaseException as error:  # noqa: B036 - a SyntaxError or even SystemExit must become a message
        send({"error": describe(error), "where": location(error, path)})
        return
    send({"ready": True})
    while True:
        board = boards.get()
        given = list(board)
        try:
            result = chosen(given)
        except NotImplementedError as error:
            send({"not_written": True, "function": last_function(error, path) or function})
            continue
        except BaseException as error:  # noqa: B036 - SystemExit and RecursionError are the student's too
            send({"error": describe(error), "where": location(error, path)})
            continue
        move = result if type(result) is int else None  # bool is an int subclass, and not a square
        send({"move": move, "repr": repr(result)[:60], "type": type(result).__name__, "changed": given != board,
              "after": repr(given)[:80]})  # fmt: skip


def describe(error):
    return "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()[-1]


def _frames(error, path):
    frames = traceback.extract_tb(error.__traceback__)
    return [frame for frame in frames if os.path.abspath(frame.filename) == os.path.abspath(path)]


def location(error, path):
    """'minimax.py line 57: return 1 / 0': the last line of the student's file on the way to the error."""
    if isinstance(error, SyntaxError) and error.lineno:
        return f"{Path(path).name} line {error.lineno}: {(error.text or '').strip()}"
    frames = _frames(error, path)
    if not frames:
        return ""
    frame = frames[-1]
    return f"{Path(path).name} line {frame.lineno}, in {frame.name}: {frame.line}"


def last_function(error, path):
    frames = _frames(error, path)
    return frames[-1].name if frames else None
