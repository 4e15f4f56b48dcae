"""`autograde play`: play tic-tac-toe against your own minimax, watch two players, or run a match of many games.

    autograde play                                   you (X) against the perfect player (O)
    autograde play --o minimax                       you against your stage 3 choose_move
    autograde play --x perfect --o human             the perfect player starts
    autograde play --x minimax --o random --games 100 --seed 1

A player is human, random, perfect (the course's reference solution) or one of your stage modules: minimax,
memoization or quickest_move, read from assignments/ (or --from-folder). Your function runs only in the grading
sandbox, with the grader's limits (the time limit is CPU seconds per move), seeing nothing but its own module;
what it prints is shown. If it raises, returns an illegal move, changes the board or takes too long, play stops
with a message.
"""

import argparse
import random
from pathlib import Path

from autograder.course.board import draw, to_move, winner
from autograder.course.stages import ASSIGNMENTS
from autograder.practice.players import KINDS, PROBE, Human, Quit, Stop, Student, make, shown

DESCRIPTIONS = {
    "human": "you, at the keyboard",
    "random": "a random player",
    "perfect": "the perfect player (the reference solution)",
}


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="autograde play",
        description="Play tic-tac-toe against your own minimax, watch two players, or run a match.",
        epilog="Players: human, random, perfect (the reference solution), or your own minimax, memoization or "
        "quickest_move (their choose_move / quickest_move). Ctrl-D or Ctrl-C leaves a game.",
    )
    parser.add_argument("--x", choices=KINDS, default="human", metavar="PLAYER", help="who plays X (default: human)")
    parser.add_argument(
        "--o", choices=KINDS, default="perfect", metavar="PLAYER", help="who plays O (default: perfect)"
    )
    parser.add_argument("--games", type=positive, metavar="N", help="play N games between two non-human players")
    parser.add_argument("--seed", type=int, metavar="S", help="seed for random choices, so a run can be repeated")
    parser.add_argument(
        "--from-folder",
        type=Path,
        default=ASSIGNMENTS,
        metavar="DIR",
        help="the folder holding your stage folders (default: assignments/)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long your function may think about one move (default: 5)",
    )
    args = parser.parse_args(argv)
    if args.games and "human" in (args.x, args.o):
        parser.error("--games plays the games by itself: choose two players that are not human")
    return args


def positive(text):
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of games")
    return number


def describe(player):
    if isinstance(player, Student):
        return f"your {player.name} ({shown(player.path)})"
    return DESCRIPTIONS[player.name]


def over(board):
    return winner(board) is not None or " " not in board


def game(players, moves):
    """Play one game on screen, every move announced and the board drawn. Returns the winner or None."""
    people = [mark for mark, player in players.items() if isinstance(player, Human)]
    for mark, player in players.items():
        print(f"{mark}: {describe(player)}")
    if people:
        print("Type the number of an empty square to play there; Ctrl-D quits.")
    board = [" "] * 9
    print(f"\n{draw(board)}\n")
    while not over(board):
        mark = to_move(board)
        player = players[mark]
        square = player.move(list(board))
        board[square] = mark
        moves.append(square)
        if player.thinks:
            print(f"{mark} ({player.name}) plays {square}.\n")
        # After a typed move the computer's reply redraws the board anyway, so draw it only when no reply follows.
        if player.thinks or over(board) or not players[to_move(board)].thinks:
            print(f"{draw(board)}\n")
    won = winner(board)
    print(f"{won} ({players[won].name}) wins." if won else "It's a draw.")
    return won


def quiet_game(players, moves):
    board = [" "] * 9
    while not over(board):
        mark = to_move(board)
        square = players[mark].move(list(board))
        board[square] = mark
        moves.append(square)
    return winner(board)


def replay(moves):
    board = [" "] * 9
    for square in moves:
        board[square] = to_move(board)
    return board


def match(players, games, seed, progress, folder):
    """Play games silently, print the tally, and show the first game each non-random player lost."""
    tally = {"X": 0, "O": 0, None: 0}
    losses = {"X": [], "O": []}
    for number in range(1, games + 1):
        moves = []
        progress.update(game=number, moves=moves)
        won = quiet_game(players, moves)
        tally[won] += 1
        if won:
            losses["O" if won == "X" else "X"].append((number, moves))
    print(f"{games} games, seed {seed}")
    for mark, player in players.items():
        print(f"  {mark}: {describe(player)}")
    print(f"\nX wins: {tally['X']}\nO wins: {tally['O']}\ndraws:  {tally[None]}")
    for mark, player in players.items():
        if player.name == "random":
            continue
        if not losses[mark]:
            print(f"\n{player.name} ({mark}) never lost.")
            continue
        number, moves = losses[mark][0]
        other = "O" if mark == "X" else "X"
        kind = player.name.split(".")[0]
        where = "" if Path(folder).resolve() == ASSIGNMENTS.resolve() else f" --from-folder {folder}"
        sides = f"--x human --o {kind}" if mark == "O" else f"--x {kind} --o human"
        print(f"\n{player.name} ({mark}) lost {len(losses[mark])} of the {games} games. The first was game {number}:")
        print(f"  moves: {' '.join(map(str, moves))}")
        print(f"\n{draw(replay(moves))}\n")
        theirs = " ".join(map(str, moves[mark == "X" :: 2]))
        print(f"Replay it: autograde play {sides}{where}  and, as {other}, play {theirs}")
    return 0


def report(stop, progress, games):
    """The one message that replaces a traceback when a player cannot go on."""
    if stop.board is None:  # a problem before play (a missing file, a stage not written yet): one line is enough
        print(stop.message)
        return
    print(f"\nThe game stops: {stop.message}")
    if stop.board == PROBE and not progress["moves"]:
        print("It was asked about this board before play began, to check that it is ready:")
    else:
        done = " ".join(map(str, progress["moves"])) or "none"
        which = f"game {progress['game']} of {games}, " if games else ""
        print(f"It was {to_move(stop.board)}'s move ({which}moves so far: {done}) on this board:")
    print(f"\n{draw(stop.board)}\n")


def main(argv):
    args = parse(argv)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    rng = random.Random(seed)
    players = {
        mark: make(kind, rng, args.from_folder, args.time_limit, mark) for mark, kind in (("X", args.x), ("O", args.o))
    }
    progress = {"game": 1, "moves": []}
    try:
        for player in players.values():
            player.start()
        if args.games:
            return match(players, args.games, seed, progress, args.from_folder)
        game(players, progress["moves"])
        return 0
    except Stop as stop:
        report(stop, progress, args.games)
        return 1
    except Quit:
        print("\nGame abandoned.")
        return 0
    except KeyboardInterrupt:
        print("\nGame abandoned.")
        return 130
    finally:
        for player in players.values():
            player.close()
