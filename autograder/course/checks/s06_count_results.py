"""Hidden checks of 06_count_results: finished boards, a seeded sample, and the whole game."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import EMPTY, Oracle


def checks(oracle: Oracle) -> list[Check]:
    finished = [p for p in oracle.positions if oracle.finished(p)]
    unfinished = [p for p in oracle.positions if not oracle.finished(p) and p != EMPTY]
    return [
        Check(
            id="count_results/finished",
            function="count_results",
            title="count_results on every finished board",
            points=4,
            cases=[case(p, accept=oracle.count_results(p)) for p in finished],
            hint="A finished board is one game: [1, 0, 0], [0, 1, 0] or [0, 0, 1]. Check the winner first.",
        ),
        Check(
            id="count_results/sample",
            function="count_results",
            title="count_results on a fixed sample of 40 unfinished boards",
            points=6,
            cases=[case(p, accept=oracle.count_results(p)) for p in sample(unfinished, 40, "count_results")],
            hint="Add the children's tallies position by position: X wins, O wins, draws.",
        ),
        Check(
            id="count_results/empty-board",
            function="count_results",
            title="count_results on the empty board",
            points=4,
            cases=[case(EMPTY, accept=oracle.count_results(EMPTY))],
            hint="The three tallies add up to the number of games count_games finds.",
        ),
        unchanged("count_results"),
    ]
