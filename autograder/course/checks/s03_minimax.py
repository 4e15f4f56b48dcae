"""Hidden checks of 03_minimax: score and choose_move on finished boards, samples and the empty board."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import EMPTY, Oracle


def checks(oracle: Oracle) -> list[Check]:
    finished = [p for p in oracle.positions if oracle.finished(p)]
    unfinished = [p for p in oracle.positions if not oracle.finished(p) and p != EMPTY]
    # Positions where exactly one move keeps the best result: a win to take or a loss to block.
    forced = [p for p in unfinished if len(oracle.best_moves(p)) == 1]
    return [
        Check(
            id="score/finished",
            function="score",
            title="score on every finished board",
            points=3,
            cases=[case(p, accept=oracle.score(p)) for p in finished],
            hint="Check for a winner before checking for a full board: a full board can have a winner.",
        ),
        Check(
            id="score/sample",
            function="score",
            title="score on a fixed sample of 40 unfinished boards",
            points=5,
            cases=[case(p, accept=oracle.score(p)) for p in sample(unfinished, 40, "score")],
            hint="X takes the largest score of its moves and O the smallest, at every level of the search.",
        ),
        Check(
            id="score/empty-board",
            function="score",
            title="score on the empty board",
            points=2,
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            hint="Perfect play from the first move is a draw; each call must undo its move and return a score.",
        ),
        Check(
            id="choose_move/sample",
            function="choose_move",
            title="choose_move on a fixed sample of 40 unfinished boards (any best move is right)",
            points=5,
            cases=[case(p, accept=oracle.best_moves(p)) for p in sample(unfinished, 40, "choose_move")],
            hint="Try every empty square, score the board after the move, and keep the best for the player to move.",
        ),
        Check(
            id="choose_move/forced",
            function="choose_move",
            title="choose_move on a fixed sample of 40 boards with exactly one good move (win or block)",
            points=3,
            cases=[case(p, accept=oracle.best_moves(p)) for p in sample(forced, 40, "choose_move/forced")],
            hint="O wants the smallest score, X the largest: compare in the right direction for the mover.",
        ),
        unchanged("score, choose_move"),
    ]
