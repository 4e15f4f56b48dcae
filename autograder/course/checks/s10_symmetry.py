"""Hidden checks of 10_symmetry (bonus): the 8 symmetries and the canonical board of every reachable board, and
the memo keyed by the canonical board (765 boards after scoring the empty board)."""

from autograder.course.checks import Check, case, unchanged
from autograder.course.oracle import EMPTY, Oracle

POSITIONS = 5478
CANONICAL_POSITIONS = 765


def memo_contents(oracle: Oracle) -> dict[str, int]:
    """What a right memo holds after scoring the empty board: each canonical board with its score."""
    return {oracle.canonical(p): oracle.score(p) for p in oracle.positions}


def checks(oracle: Oracle) -> list[Check]:
    contents = memo_contents(oracle)
    return [
        Check(
            id="symmetries/all-positions",
            function="symmetries",
            title=f"symmetries on every one of the {POSITIONS:,} reachable boards, in the order of the contract",
            points=1,
            cases=[case(p, accept=oracle.symmetries(p)) for p in oracle.positions],
            hint="Turn a quarter turn clockwise three times, then flip left to right and turn that three times.",
        ),
        Check(
            id="canonical/all-positions",
            function="canonical",
            title=f"canonical on every one of the {POSITIONS:,} reachable boards",
            points=1,
            cases=[case(p, accept=oracle.canonical(p)) for p in oracle.positions],
            hint="Take the smallest of all 8 symmetries, the flipped ones too, each joined into a string.",
        ),
        Check(
            id="memo/size",
            function="score",
            title=f"after scoring the empty board from an empty memo, memo holds the {CANONICAL_POSITIONS} canonical "
            "boards",
            points=2,
            kind="memo-size",
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            memo_contents=contents,
            hint="Key memo by canonical(board), not by the board itself, and store every board you score.",
        ),
        Check(
            id="memo/speed",
            function="score",
            title="scoring the empty board from an empty memo uses the memo (few calls of score)",
            points=1,
            kind="memo-speed",
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            memo_contents=contents,
            hint="Look canonical(board) up in memo at the start of score and return the stored value when it is there.",
        ),
        Check(
            id="score/all-positions",
            function="score",
            title=f"score on every one of the {POSITIONS:,} reachable boards",
            points=2,
            cases=[case(p, accept=oracle.score(p)) for p in oracle.positions],
            notebook_sample=500,
            hint="Turned or flipped boards have the same score: one memo entry answers for all 8.",
        ),
        unchanged("symmetries, canonical, score"),
    ]
