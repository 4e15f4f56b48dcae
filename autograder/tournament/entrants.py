"""Who plays in a tournament: each student's player, run in the grading sandbox, and the reference players.

A student enters with their stage 4 choose_move, or their stage 3 one when stage 4 is missing or cannot be
used. A student whose stage 7 quickest_move answers every worked example of its visible tests right enters a
second player that plays quickest_move wherever the mover can force a win (the oracle, in this process, says
where) and their choose_move elsewhere, since quickest_move is only asked about boards that are forced wins.

A student's function runs only through practice/players.Student: one sandboxed run per request with the
grader's limits, the move judged here. Its answer about a board is kept for the whole tournament, and so is a
failure: a board that made a player crash, time out or play an illegal move loses every game that reaches it,
without running it again.

A student none of whose players can start did not enter: neither stage 4 nor stage 3 was submitted, both are the
starter as released, or neither loads and answers a first board (it crashes, hangs or is not written). Such a
student plays no game and is not ranked; the page lists them apart, under "Did not enter", with the reason. That
is the rule rather than letting such a player play and forfeit every game: it ranked students who never played,
gave free wins to everyone they met, and when two of them met, the one who moved second was credited with a win.
So a forfeit is only ever a player's own, during a game it started: it loses that game, and only its opponent,
who played, is credited with the win.
"""

import contextlib
import io
import random
from dataclasses import dataclass, field

from autograder.course.checks.visible import examples
from autograder.course.oracle import oracle
from autograder.course.stages import STAGE_BY_MODULE
from autograder.grading.judge import is_starter
from autograder.grading.submissions import read_student
from autograder.practice.players import STUDENT_FUNCTIONS, Perfect, RandomPlayer, Stop, Student, forced_wins_only
from autograder.tournament.classic import classic_move

# The players asked about every unfinished board, the latest stage's first (stage 4's, else stage 3's), and the one
# asked only where its player can force a win (stage 7's), from the manifest (Function.plays, Function.given).
MAIN_MODULES = tuple(reversed([module for module in STUDENT_FUNCTIONS if not forced_wins_only(module)]))
(QUICK_MODULE,) = (module for module in STUDENT_FUNCTIONS if forced_wins_only(module))


class Forfeit(Exception):
    """A player lost a game by what it did: crashed, timed out or returned an illegal move."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Entrant:
    """One player of the tournament. name is what the table shows; plays says with which function."""

    name: str
    plays: str
    student: str | None = None  # the submission it came from; None for a reference player
    failures: dict[str, str] = field(default_factory=dict)  # board -> why the player lost there

    def move(self, board: list[str], rng: random.Random) -> int:
        """The square played on board; raises Forfeit."""
        key = "".join(board)
        if key in self.failures:
            raise Forfeit(self.failures[key])
        try:
            return self._move(board, rng)
        except Stop as stop:
            self.failures[key] = stop.message
            raise Forfeit(stop.message) from None

    def _move(self, board: list[str], rng: random.Random) -> int:
        raise NotImplementedError


@dataclass(frozen=True)
class Absent:
    """A student who did not enter: no player of theirs could start. They play no game and are not ranked."""

    student: str
    reason: str


class RandomEntrant(Entrant):
    def _move(self, board, rng):
        return RandomPlayer(rng).move(board)


class PerfectEntrant(Entrant):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.player = Perfect(random.Random(0))
        self.player.start()

    def _move(self, board, rng):
        self.player.rng = rng  # ties between equally good squares follow the game's own seed
        return self.player.move(board)


class ClassicEntrant(Entrant):
    def _move(self, board, rng):
        return classic_move(board)


class StudentEntrant(Entrant):
    def __init__(self, *args, player: Student, **kwargs):
        super().__init__(*args, **kwargs)
        self.player = player

    def _move(self, board, rng):
        with quiet():
            return self.player.move(list(board))


class QuickestEntrant(Entrant):
    def __init__(self, *args, quickest: Student, fallback: StudentEntrant, **kwargs):
        super().__init__(*args, **kwargs)
        self.quickest = quickest
        self.fallback = fallback

    def _move(self, board, rng):
        if oracle().can_force_win(tuple(board)):
            with quiet():
                return self.quickest.move(list(board))
        return self.fallback.move(board, rng)


@contextlib.contextmanager
def quiet():
    """What the student's code prints is not the tournament's to show (players.Student writes it to stderr)."""
    with contextlib.redirect_stderr(io.StringIO()):
        yield


def references() -> list[Entrant]:
    return [
        PerfectEntrant("perfect", "the reference solution: a quickest win, else a best move"),
        ClassicEntrant("classic rules", "win, block, fork, block a fork, centre, opposite corner, corner, side"),
        RandomEntrant("random", "a random empty square"),
    ]


def _stage_named(module: str) -> str:
    return f"stage {int(STAGE_BY_MODULE[module].id[:2])}"


def started(module: str, path, time_limit: float, source: str) -> tuple[Student | None, str]:
    """A started player of the student's module (source: its text as submitted), or None and why it cannot play."""
    stage = STAGE_BY_MODULE[module]
    if is_starter(stage, source):
        return None, f"{stage.filename} of stage {int(stage.id[:2])} is the starter, left as is"
    player = Student(module, path, time_limit)
    try:
        with quiet():
            player.start()
    except Stop as stop:
        return None, stop.message
    return player, ""


def answers_the_examples(player: Student) -> bool:
    """Whether the player's function (stage 7's quickest_move) answers every worked example of its stage's visible
    tests right."""
    for function, args, _expected, _why in examples(player.stage):
        if function != player.function:
            continue
        board = list(args[0])
        try:
            with quiet():
                move = player.move(board)
        except Stop:
            return False
        if move not in oracle().answer(function, tuple(board)):
            return False
    return True


def student_entrants(name: str, path, time_limit: float) -> tuple[list[Entrant], list[str], Absent | None]:
    """The players one submission enters, notes about what it could not enter, and why it did not enter at all
    (then there are no players)."""
    submitted = read_student(name, path).sources  # the grader's reader: links, caps, zips and notebooks
    modules = [module for module in MAIN_MODULES if STAGE_BY_MODULE[module].id in submitted]
    if not modules:
        return [], [], Absent(name, "neither " + " nor ".join(map(_stage_named, MAIN_MODULES)) + " was submitted")
    reasons = []
    for module in modules:
        player, why = started(module, path, time_limit, submitted[STAGE_BY_MODULE[module].id].text)
        if player is not None:
            main = StudentEntrant(name, player.name, student=name, player=player)
            break
        reasons.append(why)
    else:
        return [], [], Absent(name, "; ".join(reasons))
    if reasons:
        played, skipped = main.player.module, modules[0]
        said = f"plays {_stage_named(played)}'s {STUDENT_FUNCTIONS[played]}, as {_stage_named(skipped)}'s cannot play"
        notes = [f"{name}: {said}: {reasons[0]}"]
    else:
        notes = []
    quickest, function = STAGE_BY_MODULE[QUICK_MODULE], STUDENT_FUNCTIONS[QUICK_MODULE]
    if quickest.id not in submitted:
        return [main], notes, None
    quick, why = started(QUICK_MODULE, path, time_limit, submitted[quickest.id].text)
    if quick is None:
        return [main], [*notes, f"{name}: {function} not entered: {why}"], None
    if not answers_the_examples(quick):
        wrong = f"it gets a worked example of {_stage_named(QUICK_MODULE)} wrong"
        return [main], [*notes, f"{name}: {function} not entered: {wrong}"], None
    entrant = QuickestEntrant(
        f"{name} (quickest)", f"{function}, else {main.plays}", student=name, quickest=quick, fallback=main
    )
    return [main, entrant], notes, None
