"""Who plays in a tournament: each student's player, run in the grading sandbox, and the reference players.

A student enters with their stage 4 choose_move, or their stage 3 one when stage 4 is missing or cannot be
used. A student whose stage 7 quickest_move answers every worked example of its visible tests right enters a
second player that plays quickest_move wherever the mover can force a win (the oracle, in this process, says
where) and their choose_move elsewhere, since quickest_move is only asked about boards that are forced wins.

A student's function runs only through practice/players.Student: one sandboxed run per request with the
grader's limits, the move judged here. Its answer about a board is kept for the whole tournament, and so is a
failure: a board that made a player crash, time out or play an illegal move loses every game that reaches it,
without running it again. A player that cannot even start (missing, not written, does not load, hangs on the
first board) forfeits all its games.
"""

import contextlib
import io
import random
from dataclasses import dataclass, field

from autograder.course.checks.visible import examples
from autograder.course.oracle import oracle
from autograder.course.stages import STAGE_BY_ID, STAGE_BY_MODULE
from autograder.grading.submissions import read_student
from autograder.practice.players import Perfect, RandomPlayer, Stop, Student
from autograder.tournament.classic import classic_move

CHOOSE_MOVE_MODULES = ("memoization", "minimax")  # the stage 4 player first, else stage 3's


class Forfeit(Exception):
    """A player lost a game by what it did: crashed, timed out, returned an illegal move, or could not start."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Entrant:
    """One player of the tournament. name is what the table shows; plays says with which function."""

    name: str
    plays: str
    student: str | None = None  # the submission it came from; None for a reference player
    disqualified: str | None = None  # why it forfeits every game, when it could not start
    failures: dict[str, str] = field(default_factory=dict)  # board -> why the player lost there

    def move(self, board: list[str], rng: random.Random) -> int:
        """The square played on board; raises Forfeit."""
        if self.disqualified:
            raise Forfeit(self.disqualified)
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


def started(module: str, path, time_limit: float) -> tuple[Student | None, str]:
    """A started player of the student's module, or None and why it cannot play."""
    player = Student(module, path, time_limit)
    try:
        with quiet():
            player.start()
    except Stop as stop:
        return None, stop.message
    return player, ""


def answers_the_examples(player: Student) -> bool:
    """Whether quickest_move returns a quickest move on every worked example of stage 7's visible tests."""
    for function, args, _expected, _why in examples(STAGE_BY_ID["07_quickest_move"]):
        if function != "quickest_move":
            continue
        board = list(args[0])
        try:
            with quiet():
                move = player.move(board)
        except Stop:
            return False
        if move not in oracle().quickest_moves(tuple(board)):
            return False
    return True


def student_entrants(name: str, path, time_limit: float) -> tuple[list[Entrant], list[str]]:
    """The players one submission enters, and notes about what it could not enter."""
    submitted = read_student(name, path).sources  # the grader's reader: links, caps, zips and notebooks
    modules = [module for module in CHOOSE_MOVE_MODULES if STAGE_BY_MODULE[module].id in submitted]
    if not modules:
        why = "neither stage 4 nor stage 3 was submitted"
        return [StudentEntrant(name, "nothing", student=name, player=None, disqualified=why)], [f"{name}: {why}"]
    reasons = []
    for module in modules:
        player, why = started(module, path, time_limit)
        if player is not None:
            main = StudentEntrant(name, f"{module}.choose_move", student=name, player=player)
            break
        reasons.append(why)
    else:
        # Still in the table, so that the class sees every student, forfeiting with the reason.
        main = StudentEntrant(name, f"{modules[-1]}.choose_move", student=name, player=None, disqualified=reasons[-1])
        return [main], [f"{name}: no player could start: {reasons[-1]}"]
    notes = [f"{name}: plays stage 3's choose_move, as stage 4's cannot play: {reasons[0]}"] if reasons else []
    if STAGE_BY_MODULE["quickest_move"].id not in submitted:
        return [main], notes
    quick, why = started("quickest_move", path, time_limit)
    if quick is None:
        return [main], [*notes, f"{name}: quickest_move not entered: {why}"]
    if not answers_the_examples(quick):
        return [main], [*notes, f"{name}: quickest_move not entered: it gets a worked example of stage 7 wrong"]
    entrant = QuickestEntrant(
        f"{name} (quickest)", f"quickest_move, else {main.plays}", student=name, quickest=quick, fallback=main
    )
    return [main, entrant], notes
