"""Do the reference solutions agree with the facts in the course brief that students and tests rely on?"""

import importlib.util

import pytest

from autograder.course.stages import STAGE_BY_ID

EMPTY = [" "] * 9


def reference(stage_id: str):
    path = STAGE_BY_ID[stage_id].solution_path
    spec = importlib.util.spec_from_file_location(f"fact_{stage_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def board(x=(), o=()):
    squares = [" "] * 9
    for square in x:
        squares[square] = "X"
    for square in o:
        squares[square] = "O"
    return squares


@pytest.fixture(scope="module")
def memoized():
    module = reference("04_memoization")
    module.memo.clear()
    module.score(list(EMPTY))
    return module


def test_memo_holds_every_reachable_position(memoized):
    """5,478 reachable positions; 958 finished and 4,520 not; 765 up to rotation and reflection."""
    assert len(memoized.memo) == 5478
    finished = [key for key in memoized.memo if memoized.winner(list(key)) or " " not in key]
    assert len(finished) == 958 and len(memoized.memo) - len(finished) == 4520
    symmetries = [
        [6, 3, 0, 7, 4, 1, 8, 5, 2],  # a quarter turn
        [2, 1, 0, 5, 4, 3, 8, 7, 6],  # a mirror
    ]

    def images(key):
        found, frontier = {key}, [key]
        while frontier:
            current = frontier.pop()
            for permutation in symmetries:
                image = "".join(current[i] for i in permutation)
                if image not in found:
                    found.add(image)
                    frontier.append(image)
        return found

    assert len({min(images(key)) for key in memoized.memo}) == 765


def test_positions_where_the_mover_can_force_a_win(memoized):
    winning = [
        key
        for key, value in memoized.memo.items()
        if not (memoized.winner(list(key)) or " " not in key)
        and value == (1 if memoized.to_move(list(key)) == "X" else -1)
    ]
    assert len(winning) == 2836


def test_complete_games_and_who_wins_them():
    count_games = reference("02_count_games").count_games
    assert count_games(list(EMPTY)) == 255_168
    assert reference("06_count_results").count_results(list(EMPTY)) == [131_184, 77_904, 46_080]
    after_first = {square: count_games(board(x=[square])) for square in (0, 1, 4)}
    assert after_first == {0: 27_732, 1: 29_592, 4: 25_872}
    assert 4 * 27_732 + 4 * 29_592 + 25_872 == 255_168


def test_plain_minimax_visits_549946_positions():
    module = reference("03_minimax")
    plain, calls = module.score, [0]

    def counted(position):
        calls[0] += 1
        return plain(position)

    module.score = counted  # the recursion looks the name up, so every call is counted
    assert module.score(list(EMPTY)) == 0
    assert calls[0] == 549_946


def replies_that_lose(module, first_move):
    """O's replies after X's first move that lose against perfect play."""
    losing = []
    for reply in range(9):
        if reply != first_move:
            position = board(x=[first_move], o=[reply])
            if module.score(position) == 1:
                losing.append(reply)
    return losing


def test_the_opening(memoized):
    """Perfect play draws; after a corner only the centre holds; after a side or the centre four replies lose."""
    assert memoized.score(list(EMPTY)) == 0
    for square in range(9):
        assert memoized.score(board(x=[square])) == 0
    assert replies_that_lose(memoized, 0) == [1, 2, 3, 5, 6, 7, 8]
    assert replies_that_lose(memoized, 1) == [3, 5, 6, 8]
    assert replies_that_lose(memoized, 4) == [1, 3, 5, 7]


def best_moves(module, position):
    mark = module.to_move(position)
    scores = {}
    for square in range(9):
        if position[square] == " ":
            position[square] = mark
            scores[square] = module.score(position)
            position[square] = " "
    best = (max if mark == "X" else min)(scores.values())
    return {square for square, value in scores.items() if value == best}, scores


def test_the_worked_positions(memoized):
    moves, scores = best_moves(memoized, board(x=[0, 1], o=[2, 3]))
    assert moves == {4} and scores[4] == 1
    moves, scores = best_moves(memoized, board(x=[4, 7], o=[0, 1]))
    assert moves == {2} and scores[2] == 0 and all(v == -1 for s, v in scores.items() if s != 2)
    moves, _ = best_moves(memoized, board(x=[0, 8], o=[4]))
    assert moves == {1, 3, 5, 7}
    for module in (reference("03_minimax"), memoized):
        assert module.choose_move(list("XOXXOO   ")) == 6
    assert reference("07_quickest_move").quickest_move(list("O    OXX ")) == 8


def test_square_order_alpha_beta_visits_18297_positions_with_the_same_scores(memoized):
    """Alpha-beta from the empty board, moves in square order, window (-2, 2), the root counted: 18,297 calls."""
    module = reference("08_alpha_beta")
    original, calls = module.alphabeta, [0]

    def counted(squares, alpha, beta):
        calls[0] += 1
        return original(squares, alpha, beta)

    module.alphabeta = counted
    assert module.alphabeta(list(EMPTY), -2, 2) == 0
    assert calls[0] == 18_297
    module.alphabeta = original
    assert all(module.score(list(key)) == value for key, value in memoized.memo.items())


def test_the_robot_arms_worked_examples():
    """X on 0 and 1, O on 3 and 4, X to move: 2 scores 9, 5 scores 0, 6, 7, 8 score -8; X on 0 and 8, O on 4,
    O to move: the sides score 0, the corners 2 and 6 score 6, so the best squares are the sides."""
    module = reference("09_best_squares")

    def scores(squares):
        mark = module.to_move(squares)
        found = {}
        for square in [s for s in range(9) if squares[s] == " "]:
            squares[square] = mark
            found[square] = module.depth_score(squares, 1)
            squares[square] = " "
        return found

    assert scores(board(x=(0, 1), o=(3, 4))) == {2: 9, 5: 0, 6: -8, 7: -8, 8: -8}
    assert scores(board(x=(0, 8), o=(4,))) == {1: 0, 2: 6, 3: 0, 5: 0, 6: 6, 7: 0}
    assert module.best_squares(board(x=(0, 8), o=(4,))) == [1, 3, 5, 7]


def test_a_canonical_memo_holds_765_boards(memoized):
    module = reference("10_symmetry")
    module.memo.clear()
    assert module.score(list(EMPTY)) == 0
    assert len(module.memo) == 765
    assert {module.canonical(list(key)) for key in memoized.memo} == set(module.memo)
