"""Hidden checks of 08_alpha_beta (bonus): exact scores everywhere, bounds outside a window, and that it prunes.

A known limit of score/prunes: it measures the CPU time of a child that scores the empty board and the nine
openings, so a plain minimax with the scores of those ten boards written in passes it (the other checks pass
too: the answers are right). Adding the 72 boards two moves in does not close it cheaply: plain minimax spends as
much on them as on the empty board, but alpha-beta's advantage there is 9x, not 30x (61,578 calls against
549,936), and on the grading machine the child then takes 0.21 s for the reference and 0.63 s for that cheat,
so a threshold between them would leave honest code that is twice as slow per call (copying boards, say) no
margin. Closing it needs a second experiment child scoring other boards, judged by the ratio of the two CPU
times (independent of how fast each call is), and even then a table of every board asked passes. Instructors
who suspect it: the code shows it at a glance (a dict of scores; no `alpha >= beta`).
"""

from autograder.course.checks import Check, case, sample, unchanged
from autograder.course.oracle import EMPTY, Oracle
from autograder.course.stages import ALPHA_BETA_WINDOWS

POSITIONS = 5478
# Narrow windows tell an alphabeta that narrows the window the wrong way, or returns the wrong bound, from a
# right one; a full window hides both. Each board of the sample is asked with every one of them.
WINDOWS = ALPHA_BETA_WINDOWS  # the manifest's, so verify --mutants asks the same
# Alpha-beta on every reachable board costs about 0.5 s of CPU; a notebook cell asks a sample (see s04).
NOTEBOOK_SAMPLE = 500


def checks(oracle: Oracle) -> list[Check]:
    unfinished = [p for p in oracle.positions if not oracle.finished(p) and p != EMPTY]
    forced = [p for p in unfinished if len(oracle.best_moves(p)) == 1]
    windowed = sample(unfinished, 60, "alphabeta/windows")
    return [
        Check(
            id="alphabeta/windows",
            function="alphabeta",
            title="alphabeta on a fixed sample of 60 unfinished boards, each with five narrow windows",
            points=2,
            cases=[case(p, a, b, accept=oracle.alphabeta(p, a, b)) for p in windowed for a, b in WINDOWS],
            hint="Inside the window return the score; outside it, a bound on the right side of alpha or beta.",
        ),
        Check(
            id="score/all-positions",
            function="score",
            title=f"score on every one of the {POSITIONS:,} reachable boards",
            points=2,
            cases=[case(p, accept=oracle.score(p)) for p in oracle.positions],
            notebook_sample=NOTEBOOK_SAMPLE,
            hint="X takes the largest score and O the smallest; pass the narrowed window to every recursive call.",
        ),
        Check(
            id="choose_move/sample",
            function="choose_move",
            title="choose_move on a fixed sample of 60 unfinished boards, 20 of them with one good move",
            points=1,
            cases=[
                case(p, accept=oracle.best_moves(p))
                for p in sample(unfinished, 40, "alphabeta/choose_move") + sample(forced, 20, "alphabeta/forced")
            ],
            hint="Score the board after each empty square with score and keep the best for the player to move.",
        ),
        Check(
            id="score/prunes",
            function="score",
            title="scoring the empty board and the nine openings costs far less CPU time than plain minimax",
            points=2,
            kind="prune",
            cases=[case(EMPTY, accept=oracle.score(EMPTY))],
            hint="Stop trying moves once alpha >= beta, and pass the narrowed window down to the recursive calls.",
        ),
        unchanged("alphabeta, score, choose_move"),
    ]
