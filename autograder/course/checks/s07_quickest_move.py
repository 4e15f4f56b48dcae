"""Hidden checks of 07_quickest_move: boards where the player to move can force a win."""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import Oracle


def checks(oracle: Oracle) -> list[Check]:
    winnable = [p for p in oracle.positions if oracle.can_force_win(p)]
    at_once = [p for p in winnable if oracle.winning_squares(p, oracle.to_move(p))]
    later = [p for p in winnable if not oracle.winning_squares(p, oracle.to_move(p))]
    # The boards where some move forces a win but not the soonest one: the only ones that tell a quickest
    # move from any winning move, so every one of them is always asked.
    telling = tuple(p for p in later if oracle.quickest_moves(p) != _winning_moves(oracle, p))
    return [
        Check(
            id="quickest_move/win-now",
            function="quickest_move",
            title="quickest_move on a fixed sample of 100 boards where the mover can win at once",
            points=5,
            cases=[case(p, accept=oracle.quickest_moves(p)) for p in sample(at_once, 100, "quickest/now")],
            hint="A win on this move beats any later win: make a sooner win score higher.",
        ),
        Check(
            id="quickest_move/win-later",
            function="quickest_move",
            title="quickest_move on 100 boards where the win takes more moves, the tricky ones included",
            points=9,
            cases=[case(p, accept=oracle.quickest_moves(p)) for p in sample(later, 84, "quickest/later", telling)],
            hint="A sooner win must score higher, and any win, even one that fills the board, must score above "
            "a draw: check what your scoring gives a win with no empty square left.",
        ),
        unchanged("quickest_move"),
    ]


def _winning_moves(oracle: Oracle, board) -> set[int]:
    """Every move that keeps a forced win, quick or slow."""
    return {square for square, child in oracle.children(board).items() if oracle.score(child) == oracle.score(board)}
