"""Hidden checks of 04_memoization: the memo itself, its speed, and every reachable position."""

from autograder.course.checks import Check, case, unchanged
from autograder.course.oracle import EMPTY, Oracle

POSITIONS = 5478  # reachable positions, the empty board and finished boards included
# A plain search (a memo that is never looked up) answers every reachable board right, in about 3 s of
# straightforward Python; a notebook cell asks a sample, so slower honest code stays inside nbgrader's
# per-cell time limit and earns the points the grader gives it.
NOTEBOOK_SAMPLE = 500


def checks(oracle: Oracle) -> list[Check]:
    unfinished = [p for p in oracle.positions if not oracle.finished(p)]
    return [
        Check(
            id="memo/size",
            function="score",
            title=f"after scoring the empty board from an empty memo, memo holds all {POSITIONS:,} boards",
            points=4,
            kind="memo-size",
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            hint="Write every board you score into memo, finished boards included, one entry per board.",
        ),
        Check(
            id="memo/speed",
            function="score",
            title="scoring the empty board from an empty memo uses the memo (few calls of score)",
            points=4,
            kind="memo-speed",
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            hint="Look the board up in memo at the start of score and return the stored value when it is there.",
        ),
        Check(
            id="score/all-positions",
            function="score",
            title=f"score on every one of the {POSITIONS:,} reachable boards",
            points=5,
            cases=[case(p, accept=oracle.score(p)) for p in oracle.positions],
            notebook_sample=NOTEBOOK_SAMPLE,
            hint="A key must describe the whole board: ''.join(board) or tuple(board).",
        ),
        Check(
            id="choose_move/all-positions",
            function="choose_move",
            title="choose_move on every reachable unfinished board (any best move is right)",
            points=5,
            cases=[case(p, accept=oracle.best_moves(p)) for p in unfinished],
            notebook_sample=NOTEBOOK_SAMPLE,
            hint="Score the board after each empty square and keep the best for the player to move.",
        ),
        unchanged("score, choose_move"),
    ]
