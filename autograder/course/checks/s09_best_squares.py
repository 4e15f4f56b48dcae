"""Hidden checks of 09_best_squares (bonus): depth scores at several depths, and every best square, sorted."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import Oracle
from autograder.course.stages import DEPTHS


def checks(oracle: Oracle) -> list[Check]:
    finished = [p for p in oracle.positions if oracle.finished(p)]
    unfinished = [p for p in oracle.positions if not oracle.finished(p) and p.count(" ") < 9]
    # Boards where a plain minimax move is not always a best square: the sooner win (or later loss) decides.
    telling = [p for p in unfinished if set(oracle.best_squares(p)) != oracle.best_moves(p)]
    several = [p for p in unfinished if len(oracle.best_squares(p)) > 1]
    won = [p for p in finished if oracle.winner(p) is not None]
    return [
        Check(
            id="depth_score/finished",
            function="depth_score",
            title="depth_score on a fixed sample of 100 finished boards, at depths 0, 1, 2 and 4",
            points=2,
            cases=[
                case(p, depth, accept=oracle.depth_score(p, depth))
                for p in sample(finished, 60, "depth/finished") + sample(won, 40, "depth/won")
                for depth in DEPTHS
            ],
            hint="A board won by X scores 10 - depth, won by O depth - 10, a draw 0.",
        ),
        Check(
            id="depth_score/sample",
            function="depth_score",
            title="depth_score on a fixed sample of 40 unfinished boards, at depths 1 and 2",
            points=2,
            cases=[
                case(p, depth, accept=oracle.depth_score(p, depth))
                for p in sample(unfinished, 40, "depth/sample")
                for depth in (1, 2)
            ],
            hint="Each recursive call is one move deeper: depth_score(board, depth + 1).",
        ),
        Check(
            id="best_squares/sooner-or-later",
            function="best_squares",
            title="best_squares on 40 boards where winning sooner (or losing later) decides",
            points=2,
            cases=[case(p, accept=oracle.best_squares(p)) for p in sample(telling, 40, "best/telling")],
            hint="Score every move with depth_score(board, 1) after it: X keeps the highest, O the lowest.",
        ),
        Check(
            id="best_squares/several",
            function="best_squares",
            title="best_squares on 40 boards with more than one best square (all of them, sorted)",
            points=2,
            cases=[case(p, accept=oracle.best_squares(p)) for p in sample(several, 40, "best/several")],
            hint="Keep every square whose score equals the best, not just the first, and return them sorted.",
        ),
        unchanged("depth_score, best_squares"),
    ]
