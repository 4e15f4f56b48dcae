"""The players of `autograde play`: a human at the keyboard, a random player, the perfect reference player and
the student's own stage modules.

A student's function runs only in the grading sandbox (autograder/grading/sandbox/), one short run per request
of autograder/practice/play_child.py, with the grader's limits: it never runs in this process, sees nothing of the
course but its own module, and nothing it starts outlives its run. A call stuck in a loop is stopped by its CPU limit,
and a crash, an illegal answer or a changed board becomes a Stop that names the function instead of a traceback.
"""

import functools
import json
import os
import signal
import sys
from pathlib import Path

from autograder.course.board import empty_squares, to_move
from autograder.course.oracle import cached_reference, oracle
from autograder.course.stages import FUNCTIONS, STAGE_BY_ID, STAGE_BY_MODULE, STAGES
from autograder.grading import judge, sandbox
from autograder.grading.submissions import read_student
from autograder.practice.play_child import BOARD_ITEMS, MARK, SQUARE_CAP, TEXT_CAP, Plan, legal, unchanged

# The student players, from the manifest: each core stage's module -> its function that plays (asked for a move).
STUDENT_FUNCTIONS = {
    stage.module: function.name for stage in STAGES if not stage.bonus for function in stage.contract if function.plays
}
KINDS = ("human", "random", "perfect", *STUDENT_FUNCTIONS)

# Asked once before play so a starter that still raises NotImplementedError is caught before the first move.
# One empty square, and X to move wins there: a legal board for every stage, quickest_move's included.
PROBE = ["X", "O", "X", "O", "X", "O", "O", "X", " "]
EMPTY = " " * 9

CHILD = "play_child.py"
STARTUP_SECONDS = 0.5  # CPU a run gets beyond the move's own limit: starting Python and importing the module
AHEAD_SECONDS = 2.0  # a run answers boards ahead of the game for this long at most (and half the move's limit)
OUTPUT_SHOWN = 2000  # characters of one call's print() output shown in the terminal
MAX_REPLY_BYTES = 2 << 20  # an honest run writes at most a few hundred KB: one short line per board
MAX_LINE_BYTES = 8192


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
    reference = STAGE_BY_ID["07_quickest_move"].solution_path

    def __init__(self, rng):
        self.rng = rng
        self.quick_score = None

    def start(self):
        if not self.reference.exists():
            raise Stop(f"perfect plays with the reference solution {shown(self.reference)}, which is not here")
        # quick_score recurses through the module's global name, so caching that name caches the inner calls too.
        self.quick_score = cached_reference("07_quickest_move", "quick_score").quick_score

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


class Tampered(Exception):
    """The reply channel held something the child never writes: the student's code wrote to it."""


class Student:
    """A student's move function from <folder>/<stage>/<module>.py, run only in the grading sandbox.

    The module is never imported here. Each request is one sandboxed run of play_child.py, which gets a copy of
    this one file and nothing else of the course, under the grader's limits (CPU seconds for the move, a wall
    clock backstop, memory and processes), and leaves nothing running when it ends. Answers are remembered per
    board for the whole run: a move function depends only on the board, so a match asks about each board once,
    and each run also answers the boards the player can face next for a second or two, so that a match of a
    hundred games takes a few runs. Only the move is taken from the child: the parent checks that it is an int
    for an empty square and that the board was left as it was given.
    """

    thinks = True

    def __init__(self, module, folder, time_limit, mark=None, fallback=None):
        stage = STAGE_BY_MODULE[module]
        # quickest_move is asked only about boards where its player can force a win (its contract); elsewhere
        # the fallback (the perfect player) moves for it, and that is said once.
        self.fallback = fallback
        self.fallback_said = False
        self.stage = stage
        self.module = module
        self.function = STUDENT_FUNCTIONS[module]
        self.name = f"{module}.{self.function}"
        self.folder = Path(folder)
        self.path = self.folder / stage.id / stage.filename
        self.time_limit = time_limit
        self.mark = mark  # "X" or "O" when known: the first run then also answers the player's first boards
        self.source = b""
        self.isolation = None
        self.answers = {}  # board -> the checked reply about it
        self.outputs = {}  # board -> what the call about it printed, shown when the board is played
        self.imported = False  # what the import prints is shown once, not once per run

    def start(self):
        # The grader's own reader, so that play reads a folder exactly as grading does (links, sizes, encodings).
        submission = read_student(self.folder.name, self.folder)
        source = submission.sources.get(self.stage.id)
        if source is None:
            if not os.path.lexists(self.path):
                raise Stop(f"{self.name}: there is no {shown(self.path)} (is --from-folder the folder of the stages?)")
            raise Stop(f"{self.name}: {shown(self.path)} cannot be used: {submission.problems.get(self.stage.id)}")
        self.path = self.folder / source.name
        self.source = source.text.encode()
        try:
            self.isolation = sandbox.detect()
        except RuntimeError as error:
            raise Stop(f"{self.name} cannot be run in the sandbox: {error}") from None
        if self.mark == "X":
            ahead = [EMPTY]
        elif self.mark == "O":
            ahead = [EMPTY[:square] + "X" + EMPTY[square + 1 :] for square in range(9)]
        else:
            ahead = []
        if self.fallback is not None:
            self.fallback.start()
        self._ask(["".join(PROBE)], ahead)
        self.move(PROBE)

    def move(self, board):
        if self.fallback is not None and not oracle().can_force_win(tuple(board)):
            if not self.fallback_said:
                self.fallback_said = True
                print(
                    f"({self.name} is asked only where {to_move(board)} can force a win, as its stage says; on this "
                    "board and on others like it, the perfect reference move is played for it.)\n"
                )
            return self.fallback.move(list(board))
        key = "".join(board)
        if key not in self.answers:
            self._ask([key], [])
        show_output(self.outputs.pop(key, ""))
        return self._judge(list(board), self.answers[key])

    def _ask(self, boards, ahead):
        """One sandboxed run: its answers about boards, and about the boards ahead it had time for, go into answers."""
        known = sorted(self.answers)
        job = {"module": self.module, "function": self.function, "boards": boards, "ahead": ahead, "known": known,
               "budget": min(AHEAD_SECONDS, self.time_limit / 2)}  # fmt: skip
        limits = judge.stage_limits(self.time_limit + STARTUP_SECONDS)
        files = {CHILD: child_source(), self.stage.filename: self.source}
        outcome = sandbox.run(files, CHILD, json.dumps(job).encode(), limits, self.isolation)
        printed = outcome.output.split(MARK)  # [the import's output, then each call's]
        try:
            lines = decode(outcome.reply)
            first, replies = (lines[0], lines[1:]) if lines else (None, [])
            if first is None or "load_error" in first:
                if replies:
                    raise Tampered("an answer after the module failed to load")
                show_output(render(printed[0]))
                if first is None:
                    self._stopped(outcome, limits, None)
                raise Stop(f"{shown(self.path)} could not be loaded: {clean(first['load_error'])}{where(first)}")
            plan, found = Plan(boards, ahead, known), {}
            for reply in replies:
                key = plan.next()
                if key is None or reply.get("board") != key:
                    raise Tampered("an answer out of sequence")
                found[key] = reply
                if legal(key, reply):
                    plan.follow(key, reply["move"])
        except Tampered as why:
            raise Stop(f"{self.name}: the grader's reply channel was tampered with ({why})", list(boards[0])) from None
        if not self.imported:
            show_output(render(printed[0]))
            self.imported = True
        for index, key in enumerate(found):
            self.answers[key] = found[key]
            if index + 1 < len(printed) and printed[index + 1]:
                self.outputs[key] = render(printed[index + 1])
        for key in boards:
            if key not in found:  # the first board it did not answer: the run ended during that call
                if len(found) + 1 < len(printed):
                    show_output(render(printed[len(found) + 1]))
                self._stopped(outcome, limits, list(key))

    def _stopped(self, outcome, limits, board):
        """Why a run ended before answering board (None: before the module was loaded), as a Stop."""
        doing = "to load" if board is None else "to choose a move"
        if outcome.status == "waiting":
            raise Stop(
                f"{self.name} took more than {limits.wall_seconds:g} seconds {doing} without computing and was "
                "stopped: is it waiting for something (input, a sleep)?",
                board,
            )
        if out_of_time(outcome, limits):
            limit = f"{self.time_limit:g} second{'' if self.time_limit == 1 else 's'}"
            if board is None:
                raise Stop(f"{shown(self.path)} took more than {limit} to load: is there a loop outside a function?")
            raise Stop(
                f"{self.name} took more than {limit} to choose a move and was stopped. Is it stuck in a loop? "
                "(Plain minimax needs about a second from the empty board; memoization makes it instant.)",
                board,
            )
        if outcome.status == "sandbox-error":
            raise Stop(f"{self.name} could not be run in the sandbox: {clean(outcome.detail)}", board)
        doing = "while loading" if board is None else "while choosing a move"
        detail = f": {clean(outcome.detail)}" if outcome.detail and outcome.status != "exited" else ""
        raise Stop(f"the process running {self.name} ended (exit code {outcome.returncode}) {doing}{detail}", board)

    def _judge(self, board, reply):
        """The move in reply, or the Stop that says what is wrong with it."""
        if "not_written" in reply:
            raise Stop(
                f"{self.name} is not written yet: {shown(self.path)} still raises NotImplementedError"
                f" (in {clean(reply['not_written'])}). Finish stage {int(self.stage.id[:2])} first, or pick another"
                " player."
            )
        if "raised" in reply:
            raise Stop(f"{self.name} raised {clean(reply['raised'])}{where(reply)}", board)
        if reply["after"] != unchanged("".join(board)):
            raise Stop(
                f"{self.name} changed the board it was given (every function must leave the board as it found it:"
                f" undo each mark you try). Afterwards the board was {board_text(reply['after'])}",
                board,
            )
        if "returned" in reply:
            if reply["type"] == "NoneType":
                kind = "None (does every way through the function end in a return?)"
            else:
                kind = f"{clean(reply['returned'])}, a {clean(reply['type'])}"
            raise Stop(f"{self.name} returned {kind}: a move is an int, the number of an empty square 0 to 8", board)
        move = reply["move"]
        if not 0 <= move <= 8:
            raise Stop(f"{self.name} returned {move}, which is not a square: the squares are numbered 0 to 8", board)
        if board[move] != " ":
            raise Stop(f"{self.name} returned {move}, but square {move} is taken by {board[move]}", board)
        return move

    def close(self):
        pass  # nothing runs between requests: each run ended with everything it started


@functools.cache
def child_source():
    return (Path(__file__).parent / CHILD).read_bytes()


def out_of_time(outcome, limits):
    """Whether the run was stopped by its CPU limit."""
    if outcome.status == "timeout":
        return True
    # RLIMIT_CPU sends SIGXCPU, and SIGKILL a second later to a process that ignores it.
    return outcome.status == "killed" and (
        outcome.returncode == -signal.SIGXCPU
        or (outcome.returncode == -signal.SIGKILL and outcome.wall_seconds >= limits.cpu_seconds)
        or outcome.cpu_seconds >= limits.cpu_seconds - 0.5
    )


# Each line the child writes is one of these: its fields, each of exactly this type.
SHAPES = (
    {"loaded": bool},
    {"load_error": str, "where": str},
    {"board": str, "move": int, "after": list},
    {"board": str, "returned": str, "type": str, "after": list},
    {"board": str, "raised": str, "where": str},
    {"board": str, "not_written": str},
)


def decode(data):
    """The child's reply lines, decoded strictly: anything it would not write raises Tampered."""
    if len(data) > MAX_REPLY_BYTES:
        raise Tampered(f"more than {MAX_REPLY_BYTES:,} bytes")
    if data and not data.endswith(b"\n"):
        raise Tampered("an unfinished line")
    lines = []
    for raw in data.split(b"\n")[:-1]:
        if len(raw) > MAX_LINE_BYTES:
            raise Tampered("an oversized line")
        try:
            value = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeats)
        except (ValueError, RecursionError):
            raise Tampered("a line that is not the child's JSON") from None
        lines.append(_checked(value, first=not lines))
    return lines


def _no_repeats(pairs):
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a field given twice")
    return value


def _checked(value, first):
    if type(value) is not dict:
        raise Tampered("a line that is not an object")
    shape = next((shape for shape in SHAPES if shape.keys() == value.keys()), None)
    if shape is None or any(type(value[name]) is not kind for name, kind in shape.items()):
        raise Tampered("a line with unknown or mistyped fields")
    if ("board" in value) == first or value.get("loaded") is False:
        raise Tampered("a line out of sequence")
    if any(type(field) is str and len(field) > TEXT_CAP for field in value.values()):
        raise Tampered("an oversized field")
    if "move" in value and not -(10**6) < value["move"] < 10**6:
        raise Tampered("an oversized move")
    after = value.get("after", [])
    if len(after) > BOARD_ITEMS + 1 or any(type(item) is not str or len(item) > SQUARE_CAP + 41 for item in after):
        raise Tampered("a malformed board")
    return value


def clean(text):
    """Text from the sandbox made safe to show: terminal escapes and other control characters as visible escapes."""
    return "".join(char if char.isprintable() or char in "\n\t" else repr(char)[1:-1] for char in text)


def render(data):
    """A call's captured output as text to show, capped."""
    text = clean(data[: OUTPUT_SHOWN * 4].decode("utf-8", "replace"))
    if len(text) > OUTPUT_SHOWN or len(data) > OUTPUT_SHOWN * 4:
        text = f"{text[:OUTPUT_SHOWN]}\n[... more output not shown: {len(data):,} bytes in all]"
    return text


def show_output(text):
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()


def board_text(after):
    """The board the child reported after a call, written as a list, from its encoded squares."""
    items = [repr(item[1:]) if item[:1] == "s" else f"<{item[1:]}>" if item[:1] == "o" else "..." for item in after]
    return clean(f"[{', '.join(items)}]"[:80])


def where(reply):
    return f"\n  at {clean(reply['where'])}" if reply.get("where") else ""


def forced_wins_only(module: str) -> bool:
    """Whether the module's player is asked only about boards where it can force a win (quickest_move's contract):
    the perfect player then moves for it elsewhere."""
    return FUNCTIONS[STUDENT_FUNCTIONS[module]].given == "forced win"


def make(kind, rng, folder, time_limit, mark=None):
    """A player of the given kind (one of KINDS), to play mark when given."""
    if kind == "human":
        return Human()
    if kind == "random":
        return RandomPlayer(rng)
    if kind == "perfect":
        return Perfect(rng)
    fallback = Perfect(rng) if forced_wins_only(kind) else None
    return Student(kind, folder, time_limit, mark, fallback)
