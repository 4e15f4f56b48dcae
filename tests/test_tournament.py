"""`autograde tournament`: the reference players, the class's players in the sandbox, forfeits and the seed."""

import json
import subprocess
import sys

import pytest

from autograder.course.board import empty_squares, to_move, winner
from autograder.course.oracle import oracle
from autograder.course.stages import ROOT
from autograder.tournament.classic import classic_move
from autograder.tournament.entrants import ClassicEntrant, PerfectEntrant, RandomEntrant
from autograder.tournament.games import balanced_openings, openings, play, schedule, standings
from tests.classes import reference, write_student

VARIANTS = ROOT / "tests" / "variants"
HANGS = reference("03_minimax").replace(
    "def choose_move(board):", "def choose_move(board):\n    while True:\n        pass"
)
CRASHES = reference("03_minimax").replace("def choose_move(board):", "def choose_move(board):\n    return [][0]")


def tournament(submissions, out, *extra):
    command = [sys.executable, "-m", "autograder", "tournament", str(submissions), "--out", str(out), *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A small class (right, wrong, hanging, crashing) played twice with the same seed, once with another."""
    root = tmp_path_factory.mktemp("tournament")
    submissions = root / "class"
    write_student(submissions / "right", {"04_memoization": reference("04_memoization")})
    wrong = (VARIANTS / "03_minimax" / "wrong_first_empty.py").read_text()
    write_student(submissions / "wrong", {"03_minimax": wrong})
    write_student(submissions / "hangs", {"03_minimax": HANGS})
    write_student(submissions / "crashes", {"03_minimax": CRASHES})
    quick = {stage: reference(stage) for stage in ("03_minimax", "07_quickest_move")}
    write_student(submissions / "quick", quick)
    runs = {}
    for name, seed in (("first", "3"), ("again", "3"), ("other", "4")):
        done = tournament(submissions, root / name, "--seed", seed, "--openings", "3", "--time-limit", "1")
        assert done.returncode == 0, done.stderr
        runs[name] = (root / name, done.stdout)
    return runs


def rows(out):
    return {row["player"]: row for row in json.loads((out / "tournament.json").read_text())["standings"]}


@pytest.mark.slow
def test_perfect_never_loses_and_the_wrong_player_loses_a_game_that_is_shown(played):
    out, printed = played["first"]
    table = rows(out)
    assert table["perfect"]["losses"] == 0 and table["perfect"]["never_lost"]
    assert table["right"]["losses"] == 0 and table["right"]["plays"] == "memoization.choose_move"
    assert table["wrong"]["losses"] >= 1 and table["wrong"]["forfeits"] == 0
    games = json.loads((out / "tournament.json").read_text())["games"]
    lost = [g for g in games if "wrong" in (g["x"], g["o"]) and g["winner"] == ("O" if g["x"] == "wrong" else "X")]
    assert lost and all(g["forfeit"] is None for g in lost)
    page = (out / "tournament.html").read_text()
    assert "First loss" in page and ("wrong (X) against" in page or "against wrong (O)" in page)
    assert "perfect" in printed and "unbeaten" in printed


@pytest.mark.slow
def test_a_player_that_hangs_or_crashes_forfeits_and_the_others_still_play(played):
    out, _ = played["first"]
    table = rows(out)
    entrants = len(table)
    games = 3 * 2 * (entrants - 1)  # each player's games: every opening, every opponent, as X and as O
    for name in ("hangs", "crashes"):
        # Every game lost by forfeit, but for the three where the other one, as X, forfeited first.
        assert table[name]["forfeits"] == table[name]["losses"] == games - 3, name
        assert table[name]["disqualified"]
    assert "took more than 1 second" in table["hangs"]["disqualified"]
    assert "IndexError" in table["crashes"]["disqualified"]
    assert table["right"]["wins"] + table["right"]["draws"] == games


@pytest.mark.slow
def test_a_right_quickest_move_enters_a_second_player(played):
    table = rows(played["first"][0])
    assert table["quick (quickest)"]["plays"] == "quickest_move, else minimax.choose_move"
    assert table["quick (quickest)"]["losses"] == 0


@pytest.mark.slow
def test_the_same_seed_gives_the_same_files_and_another_seed_other_openings(played):
    first, again, other = (played[name][0] for name in ("first", "again", "other"))
    for name in ("tournament.json", "tournament.html"):
        assert (first / name).read_bytes() == (again / name).read_bytes()
    assert (
        json.loads((first / "tournament.json").read_text())["openings"]
        != json.loads((other / "tournament.json").read_text())["openings"]
    )


def test_openings_are_draws_with_perfect_play_and_repeat_with_the_seed():
    assert len(balanced_openings()) == 24
    assert all(oracle().score(tuple(board)) == 0 for board in balanced_openings())
    assert openings(7, 5) == openings(7, 5) and len(set(openings(7, 5))) == 5


def loses_somewhere(board, mark):
    """Whether some line of play by the other side beats the classic rules playing mark from board."""
    if winner(board) or " " not in board:
        return winner(board) not in (None, mark)
    if to_move(board) == mark:
        return loses_somewhere(placed(board, classic_move(board), mark), mark)
    return any(loses_somewhere(placed(board, square, to_move(board)), mark) for square in empty_squares(board))


def placed(board, square, mark):
    return [*board[:square], mark, *board[square + 1 :]]


def test_the_classic_rules_never_lose_from_the_empty_board_and_take_a_win_or_block():
    assert classic_move(list("XX OO    ")) == 2  # its own win first
    assert classic_move(list("OO X    X")) == 2  # blocks O's top row
    assert classic_move(list("X   O   X")) in {1, 3, 5, 7}  # a corner here lets X fork: it must threaten on a side
    references = [PerfectEntrant("perfect", ""), ClassicEntrant("classic rules", ""), RandomEntrant("random", "")]
    games = [
        play(game, references[game.x], references[game.o], seed=1) for game in schedule(references, balanced_openings())
    ]
    table = {row.entrant.name: row for row in standings(references, games)}
    assert table["perfect"].losses == 0
    assert table["classic rules"].losses < table["random"].losses
    assert not loses_somewhere([" "] * 9, "X") and not loses_somewhere([" "] * 9, "O")
    assert all(winner(game.board) == game.winner for game in games)
