"""The stage manifest: the one place each stage of the course is described.

The generator, the visible-test checks, the grader and the reports all read it.
"""

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
ASSIGNMENTS = ROOT / "assignments"


# What an answer must be before it can be right or wrong, by rule (grading/judging.py checks each rule):
RETURN_RULES = (
    "one of",  # one of Function.allowed, compared by type and value
    "int",  # an int (not a bool)
    "empty square",  # an int from 0 to 8 naming an empty square of the board given
    "empty square or -1",  # the same, or -1 for "none"
    "tally",  # a list (or tuple) of three ints
    "squares",  # a list (or tuple) of ints from 0 to 8
    "eight boards",  # a list of 8 lists of 9 squares
    "board string",  # a str of 9 characters
)


@dataclass(frozen=True)
class Function:
    """One function of the student contract, as the generic grading code needs to know it."""

    name: str
    # How its right answer (or the set of them) comes from the reference, for the same args: REFERENCE calls the
    # same function of the stage's reference solution (in the grader's process); any other value names the
    # course/oracle.py Oracle method that gives it (a set of right squares, a table computed once).
    oracle: str
    returns: str  # one of RETURN_RULES
    allowed: tuple = ()  # "one of": the values an answer may take
    slow: bool = False  # a call may search the whole game tree: each gets its own CPU budget (plan.CALL_SECONDS)
    wrong: str = ""  # how the class statistics name a wrong answer ("" : "returned <the value>")
    # The calls the contract allows (autograde verify --mutants tries every one): each board of `given`, one of
    # BOARD_DOMAINS, with each tuple of extra arguments after it.
    given: str = "positions"
    extra: tuple[tuple, ...] = ((),)
    plays: bool = False  # it chooses a move for the player to move: `autograde play` and the tournament use it


REFERENCE = "reference"  # Function.oracle: the answer is the reference solution's own function, called the same way


# Stage 1's helpers, given complete in every later stage's module so that a mistake in one stage never spoils the
# next (`autograde build` checks each copy against stage 1's).
GIVEN_HELPERS = ("LINES", "winner", "to_move")
# The boards a function may be given, by name: every reachable position, the unfinished ones, or those where the
# player to move can force a win (course/oracle.py computes each).
BOARD_DOMAINS = ("positions", "unfinished", "forced win")
# 08_alpha_beta's windows: the hidden checks' narrow ones, and the full one score gives alphabeta (every score in it)
ALPHA_BETA_WINDOWS = ((-1, 1), (0, 1), (-1, 0), (0, 2), (-2, 0))
FULL_WINDOW = (-2, 2)
DEPTHS = (0, 1, 2, 4)  # 09_best_squares: the depths depth_score is asked at (a depth off by one shows on any)

# The two contracts several stages share (03, 04, 08 and 10 ask for score; 03, 04 and 08 for choose_move).
SCORE = Function("score", "score", "int", slow=True)
CHOOSE_MOVE = Function(
    "choose_move",
    "best_moves",
    "empty square",
    slow=True,
    wrong="chose a square that is not best",
    given="unfinished",
    plays=True,
)


@dataclass(frozen=True)
class Stage:
    id: str  # the stage folder, e.g. "01_rules"
    title: str
    module: str  # the module the student completes, without ".py"
    checks: str  # its hidden checks: the module of autograder/course/checks/ that defines checks(oracle)
    contract: tuple[Function, ...]  # the functions of the student contract, in teaching order
    points: int
    stars: int  # 0 for the core lessons, 1 to 3 for the challenges
    hints: tuple[str, ...]
    bonus: bool = False  # worth bonus points, reported after the core total (see BONUS_STAGES_ON)
    # The module-level dict the contract asks the student to fill ("" for none): the memo checks read it.
    memo: str = ""
    # The function whose calls stand for the work of a search in the memo or prune experiment (a memo answers the
    # scoring again with one call of it a board; pruning makes few calls of it).
    counted: str = ""
    # The reference's functions the oracle wraps in a cache keyed on the board (their recursion looks the name up
    # at each call, so a whole-game table costs one call a position).
    cached: tuple[str, ...] = ()

    @property
    def functions(self) -> tuple[str, ...]:
        """The contract's function names, in teaching order."""
        return tuple(function.name for function in self.contract)

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    @property
    def solution_path(self) -> Path:
        return SOLUTIONS / self.id / self.filename

    @property
    def starter_path(self) -> Path:
        return ASSIGNMENTS / self.id / self.filename

    @property
    def test_path(self) -> Path:
        return ASSIGNMENTS / self.id / f"test_{self.module}.py"

    @property
    def readme_path(self) -> Path:
        return ASSIGNMENTS / self.id / "README.md"


STAGES: tuple[Stage, ...] = (
    Stage(
        id="01_rules",
        title="The rules: who has won, whose turn is it",
        module="rules",
        checks="s01_rules",
        contract=(
            Function("winner", "winner", "one of", ("X", "O", None)),
            Function("to_move", "to_move", "one of", ("X", "O")),
        ),
        points=10,
        stars=0,
        hints=(
            "Check all eight LINES: three rows, three columns and two diagonals.",
            "A line of three empty squares is not a win: check the first square is not ' '.",
            "X moves first, so it is X's turn exactly when both players have the same number of marks.",
        ),
    ),
    Stage(
        id="02_count_games",
        title="Counting games: the size of the game tree",
        module="count_games",
        checks="s02_count_games",
        cached=("count_games",),
        contract=(Function("count_games", "count_games", "int", slow=True, wrong="returned a wrong count"),),
        points=10,
        stars=0,
        hints=(
            "Ask 'is the game over?' first: a board with a winner is finished even if squares are empty.",
            "Try each empty square with the mark of the player to move, count from there, then undo the mark.",
            "Add up the counts of the children; a finished board counts as one game.",
        ),
    ),
    Stage(
        id="03_minimax",
        title="Minimax: perfect play",
        module="minimax",
        checks="s03_minimax",
        contract=(
            SCORE,
            CHOOSE_MOVE,
        ),
        points=20,
        stars=0,
        hints=(
            "A finished board scores 1 if X has won, -1 if O has won and 0 for a draw.",
            "X takes the largest score of its children, O the smallest.",
            "choose_move tries each empty square, scores the board after that move and keeps the best for the mover.",
        ),
    ),
    Stage(
        id="04_memoization",
        title="Memoization: remember what you have scored",
        module="memoization",
        checks="s04_memoization",
        memo="memo",
        counted="score",
        contract=(
            SCORE,
            CHOOSE_MOVE,
        ),
        points=20,
        stars=0,
        hints=(
            "Look the board up in memo before doing any work, and return the stored score if it is there.",
            "Write every board you score into memo, finished boards included.",
            "The key must not change when the board changes later: use ''.join(board) or tuple(board), not the list.",
        ),
    ),
    Stage(
        id="05_winning_square",
        title="Challenge: win in one move",
        module="winning_square",
        checks="s05_winning_square",
        contract=(
            Function(
                "winning_square",
                "winning_square_answers",
                "empty square or -1",
                given="unfinished",
                extra=(("X",), ("O",)),
            ),
        ),
        points=10,
        stars=1,
        hints=(
            "A line can be completed when two of its squares hold mark and the third is empty.",
            "Return the empty square of that line, not the line itself; return -1 when no line qualifies.",
        ),
    ),
    Stage(
        id="06_count_results",
        title="Challenge: who wins the games?",
        module="count_results",
        checks="s06_count_results",
        cached=("count_results",),
        contract=(Function("count_results", "count_results", "tally", slow=True, wrong="returned a wrong count"),),
        points=15,
        stars=2,
        hints=(
            "Start from count_games: a finished board is one game, and it is an X win, an O win or a draw.",
            "Add the three tallies of the children position by position.",
            "Check the winner before checking for a full board: a full board can have a winner.",
        ),
    ),
    Stage(
        id="07_quickest_move",
        title="Challenge: the quickest win",
        module="quickest_move",
        checks="s07_quickest_move",
        cached=("quick_score",),
        contract=(
            Function(
                "quickest_move",
                "quickest_moves",
                "empty square",
                slow=True,
                wrong="chose a square that is not best",
                given="forced win",
                plays=True,
            ),
        ),
        points=15,
        stars=3,
        hints=(
            "Minimax treats every win alike; make a sooner win worth more than a later one.",
            "One way: score a won board by the number of empty squares left plus one (negative for O).",
            "The player to move then picks the move with the best such score.",
        ),
    ),
)

# The bonus stages, for students who finish early. A course turns them off with BONUS_STAGES_ON = False: they
# then leave STAGES, so nothing builds, grades or reports them, and grades.csv ends at `total` again.
BONUS_STAGES_ON = True
BONUS_STAGES: tuple[Stage, ...] = (
    Stage(
        id="08_alpha_beta",
        title="Bonus: alpha-beta pruning",
        module="alpha_beta",
        checks="s08_alpha_beta",
        counted="alphabeta",
        contract=(
            Function("alphabeta", "alphabeta", "int", extra=(*ALPHA_BETA_WINDOWS, FULL_WINDOW)),
            SCORE,
            CHOOSE_MOVE,
        ),
        points=10,
        stars=0,
        bonus=True,
        hints=(
            "X raises alpha to the best score found so far, O lowers beta; stop trying moves once alpha >= beta.",
            "Pass the current window (alpha, beta) down to every recursive call, not the one you were given.",
            "score(board) calls alphabeta with a window that holds every score, e.g. alphabeta(board, -2, 2).",
        ),
    ),
    Stage(
        id="09_best_squares",
        title="Bonus: every best square, by depth",
        module="best_squares",
        checks="s09_best_squares",
        cached=("depth_score",),
        contract=(
            Function("depth_score", "depth_score", "int", extra=tuple((depth,) for depth in DEPTHS)),
            Function("best_squares", "best_squares", "squares", given="unfinished"),
        ),
        points=10,
        stars=0,
        bonus=True,
        hints=(
            "A board won by X scores 10 - depth, won by O depth - 10, a draw 0; the candidate move is depth 1.",
            "Each recursive call is one move deeper: call depth_score(board, depth + 1) for the moves.",
            "best_squares keeps every square whose score equals the best, highest for X, lowest for O, sorted.",
        ),
    ),
    Stage(
        id="10_symmetry",
        title="Bonus: the same board turned and flipped",
        module="symmetry",
        checks="s10_symmetry",
        memo="memo",
        counted="score",
        contract=(
            Function("symmetries", "symmetries", "eight boards"),
            Function("canonical", "canonical", "board string"),
            SCORE,
        ),
        points=10,
        stars=0,
        bonus=True,
        hints=(
            "Four turns of the board and four turns of its mirror image make the 8 symmetries.",
            "canonical is the smallest of the 8 boards, each joined into a string: min(''.join(b) for b in ...).",
            "Key memo by canonical(board), not by the board itself: memo then holds 765 boards.",
        ),
    ),
)
CORE_STAGES = STAGES
STAGES = CORE_STAGES + (BONUS_STAGES if BONUS_STAGES_ON else ())  # every stage the course builds and grades

STAGE_BY_ID = {stage.id: stage for stage in STAGES}
STAGE_BY_MODULE = {stage.module: stage for stage in STAGES}
# Every function of the contract by name: a name two stages share (score, choose_move) has one contract.
FUNCTIONS: dict[str, Function] = {}
for _stage in (*CORE_STAGES, *BONUS_STAGES):
    # Where a stage is listed decides its grades.csv column, its flag the totals: they must agree.
    if _stage.bonus != (_stage in BONUS_STAGES):
        _listed = "BONUS_STAGES" if _stage in BONUS_STAGES else "the core STAGES"
        raise AssertionError(f"{_stage.id}: bonus={_stage.bonus}, but it is listed in {_listed}")
    for _function in _stage.contract:
        if FUNCTIONS.setdefault(_function.name, _function) != _function:
            raise AssertionError(f"{_stage.id}: {_function.name} differs from its contract in another stage")
        if _function.given not in BOARD_DOMAINS:
            raise AssertionError(f"{_stage.id}: {_function.name} is given {_function.given!r}, not a domain")
        if _function.returns not in RETURN_RULES:
            raise AssertionError(f"{_stage.id}: {_function.name} returns {_function.returns!r}, not a rule")
del _stage, _function
TOTAL_POINTS = sum(stage.points for stage in STAGES if not stage.bonus)  # the core total, out of 100
BONUS_POINTS = sum(stage.points for stage in STAGES if stage.bonus)  # reported after the core total


def stage(name: str) -> Stage:
    """Find a stage by folder name ("03_minimax"), module name ("minimax") or number ("3")."""
    for candidate in STAGES:
        if name in (candidate.id, candidate.module) or name.lstrip("0") == candidate.id[:2].lstrip("0"):
            return candidate
    known = ", ".join(s.id for s in STAGES)
    raise KeyError(f"no stage called {name!r}; the stages are {known}")
