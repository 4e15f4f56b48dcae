"""`autograde tournament`: the reference players, the class's players in the sandbox, forfeits, who did not enter
and the seed."""

import json
import subprocess
import sys
from html import unescape

import pytest

from autograder.course.board import empty_squares, to_move, winner
from autograder.course.oracle import oracle
from autograder.course.stages import ROOT
from autograder.tournament.classic import classic_move
from autograder.tournament.entrants import ClassicEntrant, PerfectEntrant, RandomEntrant
from autograder.tournament.games import balanced_openings, openings, play, schedule, standings
from tests.classes import reference, starter, write_student

VARIANTS = ROOT / "tests" / "variants"
HANGS = reference("03_minimax").replace(
    "def choose_move(board):", "def choose_move(board):\n    while True:\n        pass"
)
CRASHES = reference("03_minimax").replace("def choose_move(board):", "def choose_move(board):\n    return [][0]")
# Answers the first board (nearly full) but gives up in every game once four or five marks are down.
GIVES_UP = reference("03_minimax").replace(
    "def choose_move(board):", "def choose_move(board):\n    if board.count(' ') in (4, 5):\n        raise ValueError"
)
ABSENT = ("hangs", "crashes", "starter", "nothing")


def tournament(submissions, out, *extra):
    command = [sys.executable, "-m", "autograder", "tournament", str(submissions), "--out", str(out), *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A small class played twice with the same seed, once with another: right, wrong, one that gives up in every
    game, one with a quickest player (and stage 4 left as the starter), and four whose player cannot start: it
    hangs, crashes, is the starter, or was not submitted (only stage 1 was)."""
    root = tmp_path_factory.mktemp("tournament")
    submissions = root / "class"
    write_student(submissions / "right", {"04_memoization": reference("04_memoization")})
    wrong = (VARIANTS / "03_minimax" / "wrong_first_empty.py").read_text()
    write_student(submissions / "wrong", {"03_minimax": wrong})
    write_student(submissions / "hangs", {"03_minimax": HANGS})
    write_student(submissions / "crashes", {"03_minimax": CRASHES})
    write_student(submissions / "starter", {"03_minimax": starter("03_minimax")})
    write_student(submissions / "nothing", {"01_rules": reference("01_rules")})
    write_student(submissions / "gives_up", {"03_minimax": GIVES_UP})
    quick = {stage: reference(stage) for stage in ("03_minimax", "07_quickest_move")}
    quick["04_memoization"] = starter("04_memoization")
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
def test_a_student_whose_player_cannot_start_did_not_enter_and_credits_no_one_with_a_win(played):
    """Is a student whose player never started (it hangs, crashes, is the starter, was not submitted) left out of
    the games and the standings, and listed apart with the reason, on the page, in the JSON and in the terminal?"""
    out, printed = played["first"]
    data = json.loads((out / "tournament.json").read_text())
    absent = {entry["student"]: entry["reason"] for entry in data["did_not_enter"]}
    assert sorted(absent) == sorted(ABSENT)
    assert "took more than 1 second" in absent["hangs"]
    assert "IndexError" in absent["crashes"]
    assert absent["starter"] == "minimax.py of stage 3 is the starter, left as is"
    assert absent["nothing"] == "neither stage 4 nor stage 3 was submitted"
    table = rows(out)
    assert not set(ABSENT) & set(table)
    assert not {name for game in data["games"] for name in (game["x"], game["o"])} & set(ABSENT)
    games = 3 * 2 * (len(table) - 1)  # each player's games: every opening, every opponent, as X and as O
    assert table["right"]["wins"] + table["right"]["draws"] == games and table["right"]["forfeits"] == 0
    assert len(data["games"]) == games * len(table) // 2
    page = unescape((out / "tournament.html").read_text())
    section = page[page.index('id="did-not-enter"') : page.index("</section>", page.index('id="did-not-enter"'))]
    for name, reason in absent.items():
        assert f"<td>{name}</td>" in section and reason.splitlines()[0] in section, name  # the page's is one line
    assert "(4 students did not enter)" in page
    assert "Did not enter (4)" in printed and "starter: minimax.py of stage 3 is the starter" in printed


@pytest.mark.slow
def test_a_forfeit_in_a_game_is_a_loss_for_the_player_and_a_win_for_its_opponent_only(played):
    """A player that started and then fails on a board (gives_up) is ranked: does each game it forfeits count as
    its loss and its opponent's win, and no more, so that every game hands out exactly two points?"""
    out, _ = played["first"]
    data, table = json.loads((out / "tournament.json").read_text()), rows(out)
    forfeited = [game for game in data["games"] if game["forfeit"] is not None]
    assert forfeited and all("raised ValueError" in game["forfeit"] for game in forfeited)
    for game in forfeited:
        assert "gives_up" in (game["x"], game["o"]) and game["winner"] == ("O" if game["x"] == "gives_up" else "X")
    assert table["gives_up"]["forfeits"] == len(forfeited) and table["gives_up"]["wins"] == 0
    assert table["gives_up"]["points"] == table["gives_up"]["draws"]  # nothing from the games it forfeited
    assert min(table.values(), key=lambda row: row["points"])["player"] == "gives_up"
    assert sum(row["points"] for row in table.values()) == 2 * len(data["games"])
    assert all(row["forfeits"] == 0 for name, row in table.items() if name != "gives_up")


@pytest.mark.slow
def test_a_right_quickest_move_enters_a_second_player(played):
    table = rows(played["first"][0])
    assert table["quick (quickest)"]["plays"] == "quickest_move, else minimax.choose_move"
    assert table["quick (quickest)"]["losses"] == 0
    assert table["quick"]["plays"] == "minimax.choose_move"  # stage 4 is the starter: stage 3 plays, and it is said
    page = unescape((played["first"][0] / "tournament.html").read_text())
    assert (
        "quick: plays stage 3's choose_move, as stage 4's cannot play: memoization.py of stage 4 is the starter" in page
    )


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
