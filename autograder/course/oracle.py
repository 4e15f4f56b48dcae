"""Expected answers, computed in the trusted process from the reference solutions in solutions/.

The reference functions are plain recursions; wrapping their module-level names in a cache
(the recursion looks the name up at each call) makes whole-game tables cheap while every
answer still comes from the reference code itself.
"""

import functools
import importlib.util
from types import ModuleType

from autograder.course.stages import FUNCTIONS, REFERENCE, STAGE_BY_ID, STAGES

EMPTY = (" ",) * 9


def load_reference(stage_id: str) -> ModuleType:
    """Import a fresh copy of the stage's reference solution (trusted code)."""
    path = STAGE_BY_ID[stage_id].solution_path
    spec = importlib.util.spec_from_file_location(f"reference_{stage_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cached(module: ModuleType, name: str) -> None:
    """Replace module.name by a cached version keyed on the board's squares."""
    plain = getattr(module, name)

    @functools.cache
    def by_key(key, *extra):
        return plain(list(key), *extra)

    def cached(board, *extra):
        result = by_key(tuple(board), *extra)
        return list(result) if isinstance(result, list) else result

    setattr(module, name, cached)


def cached_reference(stage_id: str, *names: str) -> ModuleType:
    """A fresh copy of the stage's reference solution with each function of names cached by board (see _cached)."""
    module = load_reference(stage_id)
    for name in names:
        _cached(module, name)
    return module


class Oracle:
    """Every position that can occur in a game, and the reference answers about them."""

    def __init__(self):
        # Every stage's reference solution, with the functions its manifest entry names `cached` cached by board.
        self.references = {stage.id: cached_reference(stage.id, *stage.cached) for stage in STAGES}
        # Each function's reference: that of the first stage whose contract has it (a shared name has one contract).
        self.reference_of = {}
        for stage in STAGES:
            for name in stage.functions:
                self.reference_of.setdefault(name, self.references[stage.id])
        self.rules = self.references["01_rules"]
        self.counting = self.references["02_count_games"]
        self.results = self.references["06_count_results"]
        self.minimax = self.references["04_memoization"]
        self.quick = self.references["07_quickest_move"]
        self.arm = self.references.get("09_best_squares")  # None when the course has no bonus stages
        self.symmetry = self.references.get("10_symmetry")
        self.positions = self._reachable()

    def answer(self, function: str, board, *extra):
        """The right answer of function (or the set of them) for these arguments, as its contract says it comes."""
        how = FUNCTIONS[function].oracle
        if how == REFERENCE:
            return getattr(self.reference_of[function], function)(list(board), *extra)
        return getattr(self, how)(board, *extra)

    def _reachable(self) -> list[tuple[str, ...]]:
        """All positions reachable from the empty board, in breadth-first order (empty board first)."""
        seen, order, frontier = {EMPTY}, [EMPTY], [EMPTY]
        while frontier:
            following = []
            for board in frontier:
                if self.finished(board):
                    continue
                for child in self.children(board).values():
                    if child not in seen:
                        seen.add(child)
                        order.append(child)
                        following.append(child)
            frontier = following
        return order

    def children(self, board: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
        mark = self.to_move(board)
        return {square: board[:square] + (mark,) + board[square + 1 :] for square in range(9) if board[square] == " "}

    def finished(self, board) -> bool:
        return self.winner(board) is not None or " " not in board

    def winner(self, board):
        return self.rules.winner(list(board))

    def to_move(self, board) -> str:
        return self.rules.to_move(list(board))

    def score(self, board) -> int:
        return self.minimax.score(list(board))  # the reference memoization stage keeps its own memo

    def count_games(self, board) -> int:
        return self.counting.count_games(list(board))

    def count_results(self, board) -> list[int]:
        return list(self.results.count_results(list(board)))

    def best_moves(self, board: tuple[str, ...]) -> set[int]:
        """Every square that keeps the best score for the player to move."""
        scores = {square: self.score(child) for square, child in self.children(board).items()}
        best = (max if self.to_move(board) == "X" else min)(scores.values())
        return {square for square, value in scores.items() if value == best}

    def winning_squares(self, board, mark: str) -> set[int]:
        """Every empty square where mark completes a line."""
        return {
            square
            for square in range(9)
            if board[square] == " " and self.winner(board[:square] + (mark,) + board[square + 1 :]) == mark
        }

    def winning_square_answers(self, board, mark: str) -> set[int]:
        """winning_square's right answers: every winning square, or -1 when there is none."""
        return self.winning_squares(board, mark) or {-1}

    def quick_score(self, board) -> int:
        return self.quick.quick_score(list(board))

    def quickest_moves(self, board: tuple[str, ...]) -> set[int]:
        """Every move that wins as soon as possible against any defence."""
        scores = {square: self.quick_score(child) for square, child in self.children(board).items()}
        best = (max if self.to_move(board) == "X" else min)(scores.values())
        return {square for square, value in scores.items() if value == best}

    def alphabeta(self, board, alpha: int, beta: int) -> set[int]:
        """Every right answer of alphabeta(board, alpha, beta): the score itself when it lies inside the window;
        outside it, any bound on the right side that is no further than the score (alpha itself, the fail-hard
        answer, or a score of the board's moves, the fail-soft one)."""
        value = self.score(board)
        if alpha < value < beta:
            return {value}
        candidates = {-1, 0, 1, alpha, beta}
        if value <= alpha:
            return {bound for bound in candidates if value <= bound <= alpha}
        return {bound for bound in candidates if beta <= bound <= value}

    def depth_score(self, board, depth: int) -> int:
        return self.arm.depth_score(list(board), depth)

    def best_squares(self, board) -> tuple[int, ...]:
        return tuple(self.arm.best_squares(list(board)))

    def symmetries(self, board) -> tuple[tuple[str, ...], ...]:
        """The 8 boards in the contract's order: 0 to 3 quarter turns clockwise, then the mirror image turned so."""
        return tuple(tuple(other) for other in self.symmetry.symmetries(list(board)))

    def canonical(self, board) -> str:
        return self.symmetry.canonical(list(board))

    def can_force_win(self, board) -> bool:
        return not self.finished(board) and self.score(board) == (1 if self.to_move(board) == "X" else -1)


@functools.cache
def oracle() -> Oracle:
    return Oracle()
