"""Hidden checks of 02_count_games: finished boards, a seeded sample, and the whole game."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import EMPTY, Oracle


def checks(oracle: Oracle) -> list[Check]:
    finished = [p for p in oracle.positions if oracle.finished(p)]
    unfinished = [p for p in oracle.positions if not oracle.finished(p) and p != EMPTY]
    return [
        Check(
            id="count_games/finished",
            function="count_games",
            title="count_games on every finished board (won, or full)",
            points=3,
            cases=[case(p, accept=1) for p in finished],
            hint="A board with a winner is finished even if squares are empty: it is exactly one game.",
        ),
        Check(
            id="count_games/sample",
            function="count_games",
            title="count_games on a fixed sample of 40 unfinished boards",
            points=3,
            cases=[case(p, accept=oracle.count_games(p)) for p in sample(unfinished, 40, "count_games")],
            hint="Stop at a won board before trying more moves, and use the mark of the player to move.",
        ),
        Check(
            id="count_games/empty-board",
            function="count_games",
            title="count_games on the empty board (every complete game)",
            points=3,
            cases=[case(EMPTY, accept=oracle.count_games(EMPTY))],
            hint="Every game from the first move on; stop at won boards, and undo each mark so the count stays right.",
        ),
        unchanged("count_games"),
    ]
