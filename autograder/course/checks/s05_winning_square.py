"""Hidden checks of 05_winning_square: every reachable unfinished board, for each mark."""

from autograder.course.checks import Check, case, unchanged
from autograder.course.oracle import Oracle


def checks(oracle: Oracle) -> list[Check]:
    unfinished = [p for p in oracle.positions if not oracle.finished(p)]
    return [
        Check(
            id=f"winning_square/{mark}",
            function="winning_square",
            title=f"winning_square(board, '{mark}') on every reachable unfinished board",
            points=5 if mark == "X" else 4,  # 9 points for the two marks: the odd one to X, who starts
            cases=[case(p, mark, accept=oracle.winning_squares(p, mark) or {-1}) for p in unfinished],
            hint="A line is ready when two of its squares hold the mark and the third is empty; else return -1.",
        )
        for mark in ("X", "O")
    ] + [unchanged("winning_square")]
