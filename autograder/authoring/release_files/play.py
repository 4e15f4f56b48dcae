"""`python play.py`: play tic-tac-toe against your own minimax, watch two players, or run a match of many games.

    python play.py                                   you (X) against the perfect player (O)
    python play.py --o minimax                       you against your stage 3 choose_move
    python play.py --x perfect --o human             the perfect player starts
    python play.py --x minimax --o random --games 100 --seed 1

A player is human, random, perfect or one of your stage modules (minimax, memoization, quickest_move), read from
assignments/ (or --from-folder). Your function runs here, in this process, on a copy of the board; if it raises,
returns an illegal move, changes the board or thinks longer than --time-limit seconds, play stops and says so.

This file knows the game only as a table: for every board that can happen, who has won or whose move it is, and
the perfect player's best squares. It holds no code of any stage's answer, so reading it teaches nothing you are
asked to write. The release made the table from the course's reference solutions.
"""

import argparse
import base64
import os
import random
import sys
import threading
import types
import zlib
from array import array
from pathlib import Path

# Your players: name -> (stage folder, module file, the function that plays, whether it is asked only where it
# can force a win). Filled in by the release, from the course's manifest.
PLAYERS = {}
# For every board (its number in base 3, square 0 first: " " 0, "X" 1, "O" 2), one code: 0 a board that cannot
# happen, 1 X has won, 2 O has won, 3 a draw; otherwise 4 + the best squares as bits + 512 if O is to move
# + 1024 if the player to move can force a win. Filled in by the release (zlib, then base64).
TABLE = ""
X_WON, O_WON, DRAWN, IN_PLAY = 1, 2, 3, 4
KINDS = ("human", "random", "perfect", *PLAYERS)
DESCRIPTIONS = {
    "human": "you, at the keyboard",
    "random": "a random player",
    "perfect": "the perfect player",
}
_codes = None


class Stop(Exception):
    """Play cannot go on (a player broke the rules, or cannot be asked); args: the message and the board."""


class Quit(Exception):
    """The person at the keyboard left the game."""


def codes():
    global _codes
    if _codes is None:
        _codes = array("H")
        _codes.frombytes(zlib.decompress(base64.b64decode(TABLE)))
        if sys.byteorder == "big":
            _codes.byteswap()  # the table is written little-endian
    return _codes


def lookup(board):
    number = 0
    for mark in board:
        number = number * 3 + " XO".index(mark)
    code = codes()[number]
    if code == 0:
        raise Stop("this board cannot happen in a game", list(board))
    return code


def status(board):
    """X_WON, O_WON, DRAWN or IN_PLAY."""
    return min(lookup(board), IN_PLAY)


def mark_to_play(board):
    return "O" if (lookup(board) - IN_PLAY) & 512 else "X"


def perfect_squares(board):
    """The squares the perfect player counts as best (it picks one of them at random). No stage's answer: a lookup."""
    bits = (lookup(board) - IN_PLAY) & 511
    return [square for square in range(9) if bits >> square & 1]


def can_force_a_win(board):
    return bool((lookup(board) - IN_PLAY) & 1024)


def open_squares(board):
    return [number for number in range(9) if board[number] == " "]


def draw(board):
    """The board, with each empty square showing its number."""
    cells = [mark if mark != " " else str(number) for number, mark in enumerate(board)]
    return "\n---+---+---\n".join(" " + " | ".join(cells[row : row + 3]) for row in (0, 3, 6))


# ---------------------------------------------------------------------------------------------------------------
# Players: each has a name, thinks (True for a computer), start(), move(board) -> square.


class Human:
    name = "human"
    thinks = False

    def start(self):
        pass

    def move(self, board):
        while True:
            try:
                typed = input(f"Your move ({mark_to_play(board)}): ").strip()
            except EOFError:
                raise Quit() from None
            if typed.isdigit() and int(typed) in open_squares(board):
                return int(typed)
            print(f"Type the number of an empty square: {', '.join(map(str, open_squares(board)))}.")


class RandomPlayer:
    name = "random"
    thinks = True

    def __init__(self, rng):
        self.rng = rng

    def start(self):
        pass

    def move(self, board):
        return self.rng.choice(open_squares(board))


class Perfect:
    """A best square by minimax, and among those the quickest win (or the slowest loss), ties broken at random."""

    name = "perfect"
    thinks = True

    def __init__(self, rng):
        self.rng = rng

    def start(self):
        pass

    def move(self, board):
        return self.rng.choice(perfect_squares(board))


class Student:
    """Your stage's move function, imported from its module and called on a copy of each board."""

    thinks = True
    # A board one square from the end where X wins at once: asked before play, so a stage not written yet says
    # so before the first move rather than in the middle of a game.
    PROBE = ["X", "O", "X", "O", "X", "O", "O", "X", " "]

    def __init__(self, kind, folder, time_limit, fallback):
        self.stage, filename, self.function_name, _ = PLAYERS[kind]
        self.kind = kind
        self.name = f"{kind}.{self.function_name}"
        self.path = Path(folder) / self.stage / filename
        self.time_limit = time_limit
        self.fallback = fallback  # quickest_move is asked only where it can force a win; elsewhere perfect moves
        self.fallback_said = False
        self.function = None
        self.answers = {}  # board -> square: a move depends only on the board, so a match asks about each once

    def start(self):
        if not self.path.is_file():
            raise Stop(f"{self.name}: there is no {self.path} (is stage {self.stage} in your copy?)", None)
        sys.path.insert(0, str(self.path.parent))  # so the module finds its own helpers, as the tests do
        module = types.ModuleType(self.path.stem)
        module.__file__ = str(self.path)
        sys.modules[self.path.stem] = module

        def load():  # from the source itself, never a cached .pyc that may be older than the last edit
            exec(compile(self.path.read_bytes(), str(self.path), "exec"), module.__dict__)

        self.call(load, None, f"loading {self.path}")
        self.function = getattr(module, self.function_name, None)
        if not callable(self.function):
            raise Stop(f"{self.path} has no function {self.function_name}: check its name", None)
        self.move(list(self.PROBE))

    def call(self, work, board, what):
        """work() in a thread, within the time limit; its error, or its running out of time, becomes a Stop."""
        done = {}

        def run():
            try:
                done["value"] = work()
            except BaseException as error:  # whatever the student's code raises is reported, never a traceback
                done["error"] = error

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(self.time_limit)
        if thread.is_alive():
            raise Stop(
                f"{what} took more than {self.time_limit:g} s: look for a loop that never ends, or a search that "
                "does far more work than it needs",
                board,
                "timed out",
            )
        error = done.get("error")
        if isinstance(error, NotImplementedError):
            raise Stop(f"{self.function_name} in {self.path} is not written yet: write it first", None)
        if error is not None:
            line = where(error, self.path)
            raise Stop(f"{what} raised {type(error).__name__}: {error}{line}", board)
        return done.get("value")

    def move(self, board):
        if self.fallback is not None and not can_force_a_win(board):
            if not self.fallback_said:
                print(f"({self.name} is asked only where it can force a win; the perfect player moves elsewhere.)")
                self.fallback_said = True
            return self.fallback.move(board)
        if tuple(board) in self.answers:
            return self.answers[tuple(board)]
        given = list(board)
        square = self.call(lambda: self.function(given), list(board), f"{self.name}")
        if given != list(board):
            raise Stop(f"{self.name} changed the board it was given (leave it as you found it)", list(board))
        if type(square) is not int:
            kind = "None (does every way through the function end in a return?)" if square is None else repr(square)
            raise Stop(f"{self.name} returned {kind}, not the number of a square", list(board))
        if square not in open_squares(board):
            raise Stop(f"{self.name} returned {square}, which is not an empty square", list(board))
        self.answers[tuple(board)] = square
        return square


def where(error, path):
    """ " (file line N)" for the deepest line of your module in the error's traceback, or ""."""
    found, trace = "", error.__traceback__
    while trace is not None:
        if Path(trace.tb_frame.f_code.co_filename).resolve() == path.resolve():
            found = f" ({path} line {trace.tb_lineno})"
        trace = trace.tb_next
    return found


def make(kind, rng, folder, time_limit):
    if kind == "human":
        return Human()
    if kind == "random":
        return RandomPlayer(rng)
    if kind == "perfect":
        return Perfect(rng)
    fallback = Perfect(rng) if PLAYERS[kind][3] else None  # asked only where it can force a win
    return Student(kind, folder, time_limit, fallback)


# ---------------------------------------------------------------------------------------------------------------
# Games


def describe(player):
    return f"your {player.name} ({player.path})" if isinstance(player, Student) else DESCRIPTIONS[player.name]


def over(board):
    return status(board) != IN_PLAY


def winner_of(board):
    return {X_WON: "X", O_WON: "O"}.get(status(board))


def game(players, moves):
    """One game on screen, every move announced and the board drawn. Returns the winner or None."""
    for mark, player in players.items():
        print(f"{mark}: {describe(player)}")
    if any(isinstance(player, Human) for player in players.values()):
        print("Type the number of an empty square to play there; Ctrl-D quits.")
    board = [" "] * 9
    print(f"\n{draw(board)}\n")
    while not over(board):
        mark = mark_to_play(board)
        player = players[mark]
        square = player.move(list(board))
        board[square] = mark
        moves.append(square)
        if player.thinks:
            print(f"{mark} ({player.name}) plays {square}.\n")
        if player.thinks or over(board) or not players[mark_to_play(board)].thinks:
            print(f"{draw(board)}\n")
    won = winner_of(board)
    print(f"{won} ({players[won].name}) wins." if won else "It's a draw.")
    return won


def quiet_game(players, moves):
    board = [" "] * 9
    while not over(board):
        mark = mark_to_play(board)
        square = players[mark].move(list(board))
        board[square] = mark
        moves.append(square)
    return winner_of(board)


def replay(moves):
    board = [" "] * 9
    for square in moves:
        board[square] = mark_to_play(board)
    return board


def match(players, games, seed, folder):
    """Play games silently, print the tally, and show the first game each player that is not random lost."""
    tally, losses = {"X": 0, "O": 0, None: 0}, {"X": [], "O": []}
    for number in range(1, games + 1):
        moves = []
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
        sides = f"--x human --o {kind}" if mark == "O" else f"--x {kind} --o human"
        place = "" if Path(folder) == Path("assignments") else f" --from-folder {folder}"
        print(f"\n{player.name} ({mark}) lost {len(losses[mark])} of the {games} games. The first was game {number}:")
        print(f"  moves: {' '.join(map(str, moves))}")
        print(f"\n{draw(replay(moves))}\n")
        theirs = " ".join(map(str, moves[mark == "X" :: 2]))
        print(f"Replay it: python play.py {sides}{place}  and, as {other}, play {theirs}")
    return 0


def positive(text):
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of games")
    return number


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="python play.py",
        description="Play tic-tac-toe against your own minimax, watch two players, or run a match.",
        epilog="Players: human, random, perfect, or your own " + ", ".join(PLAYERS) + ". Ctrl-D leaves a game.",
    )
    parser.add_argument("--x", choices=KINDS, default="human", metavar="PLAYER", help="who plays X (default: human)")
    parser.add_argument(
        "--o", choices=KINDS, default="perfect", metavar="PLAYER", help="who plays O (default: perfect)"
    )
    parser.add_argument(
        "--games", type=positive, metavar="N", help="play N games between two players that are not human"
    )
    parser.add_argument("--seed", type=int, metavar="S", help="seed for random choices, so a run can be repeated")
    parser.add_argument("--from-folder", default="assignments", metavar="DIR", help="the folder of your stage folders")
    parser.add_argument(
        "--time-limit", type=float, default=5.0, metavar="SECONDS", help="how long your function may think (default 5)"
    )
    args = parser.parse_args(argv)
    if args.games and "human" in (args.x, args.o):
        parser.error("--games plays the games by itself: choose two players that are not human")
    return args


def main(argv):
    args = parse(argv)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    rng = random.Random(seed)
    players = {
        mark: make(kind, rng, args.from_folder, args.time_limit) for mark, kind in (("X", args.x), ("O", args.o))
    }
    moves, playing = [], False
    try:
        for player in players.values():
            player.start()
        playing = True
        if args.games:
            return match(players, args.games, seed, args.from_folder)
        game(players, moves)
        return 0
    except Stop as stop:
        message, board = stop.args[0], stop.args[1]
        print(f"\nThe game stops: {message}" if board is not None else message)
        if board is not None and not playing:  # start() asks about Student.PROBE to find a stage not written yet
            print(f"It was asked about this board before play began, to check that it is ready:\n\n{draw(board)}\n")
        elif board is not None:
            print(f"It was {mark_to_play(board)}'s move on this board:\n\n{draw(board)}\n")
        if len(stop.args) > 2:  # the function is still running in its thread: leave without waiting for it
            sys.stdout.flush()
            os._exit(1)
        return 1
    except (Quit, KeyboardInterrupt):
        print("\nGame abandoned.")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
