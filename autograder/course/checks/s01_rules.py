"""Hidden checks of 01_rules: winner and to_move on every reachable position."""

from autograder.course.checks import Check, case, unchanged
from autograder.course.oracle import Oracle

KINDS = {"rows": range(0, 3), "columns": range(3, 6), "diagonals": range(6, 8)}
HOW_MANY = {"rows": "three", "columns": "three", "diagonals": "two"}


def checks(oracle: Oracle) -> list[Check]:
    lines = oracle.rules.LINES

    def completed(board, kind):
        return any(board[a] != " " and board[a] == board[b] == board[c] for a, b, c in (lines[i] for i in KINDS[kind]))

    won = {kind: [p for p in oracle.positions if completed(p, kind)] for kind in KINDS}
    return [
        Check(
            id="winner/no-line",
            function="winner",
            title="winner on every reachable board with no completed line",
            points=2,
            cases=[case(p, accept=None) for p in oracle.positions if oracle.winner(p) is None],
            hint="Return None when no line is complete; three empty squares in a line are not a win.",
        ),
        *(
            Check(
                id=f"winner/{kind}",
                function="winner",
                title=f"winner on every reachable board won on one of the {kind}",
                points=1,
                cases=[case(p, accept=oracle.winner(p)) for p in won[kind]],
                hint=f"Check that LINES has all {HOW_MANY[kind]} {kind} "
                "(eight lines in all) and that your loop looks at every line.",
            )
            for kind in KINDS
        ),
        Check(
            id="to_move/all-positions",
            function="to_move",
            title="to_move on every reachable board",
            points=3,
            cases=[case(p, accept=oracle.to_move(p)) for p in oracle.positions],
            hint="X moves first: it is X's turn when both have the same number of marks, otherwise O's.",
        ),
        unchanged("winner, to_move"),
    ]
