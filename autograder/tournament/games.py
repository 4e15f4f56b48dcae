"""The games of a tournament: seeded openings, every pairing as X and as O, and the standings.

Each game starts from a two-move opening (X's first mark, then O's), chosen with the seed among the 72 there are,
so that players who always open the same way still meet many positions. Only openings that are a draw with
perfect play are used: after some (O answering a corner with a side) X can force a win, and a game from a lost
position says nothing about the player who was handed it. Every ordered pair of entrants plays
every opening. A game's random choices (the random player's moves, the perfect player's ties) come from a
generator seeded by the tournament's seed, the opening and the two players, so a game is the same whatever
order games are played in. A player that forfeits loses the game; the reason and the board are recorded.
"""

import itertools
import random
from dataclasses import dataclass, field

from autograder.course.board import empty_squares, to_move, winner
from autograder.course.oracle import oracle
from autograder.tournament.entrants import Entrant, Forfeit

WIN, DRAW, LOSS = 2, 1, 0  # points a game gives


def balanced_openings() -> list[str]:
    """The two-move openings that are a draw with perfect play, in square order."""
    boards = []
    for x, o in itertools.permutations(range(9), 2):
        board = [" "] * 9
        board[x], board[o] = "X", "O"
        if oracle().score(tuple(board)) == 0:
            boards.append("".join(board))
    return boards


def openings(seed: int, count: int) -> list[str]:
    """count distinct openings chosen with seed, in the order chosen."""
    boards = balanced_openings()
    return random.Random(f"openings:{seed}").sample(boards, min(count, len(boards)))


@dataclass
class Game:
    x: int  # indexes into the entrants
    o: int
    opening: str
    moves: list[int] = field(default_factory=list)  # squares played after the opening, in order
    winner: str | None = None  # "X", "O" or None for a draw
    forfeit: str | None = None  # why the loser lost, when it lost by what it did rather than on the board

    @property
    def board(self) -> list[str]:
        board = list(self.opening)
        for square in self.moves:
            board[square] = to_move(board)
        return board

    @property
    def plies(self) -> int:
        """Marks on the board at the end, the opening's two included."""
        return 9 - self.board.count(" ")

    def points(self, mark: str) -> int:
        return DRAW if self.winner is None else WIN if self.winner == mark else LOSS


def play(game: Game, x: Entrant, o: Entrant, seed: int) -> Game:
    rng = random.Random(f"game:{seed}:{game.opening}:{x.name}:{o.name}")
    board = list(game.opening)
    while winner(board) is None and empty_squares(board):
        mark = to_move(board)
        player = x if mark == "X" else o
        try:
            square = player.move(list(board), rng)
        except Forfeit as forfeit:
            game.winner, game.forfeit = ("O" if mark == "X" else "X"), forfeit.reason
            return game
        if type(square) is not int or not 0 <= square <= 8 or board[square] != " ":
            # The student players' moves were already checked by players.Student; a reference player's never fail.
            game.winner, game.forfeit = ("O" if mark == "X" else "X"), f"played {square!r}, not an empty square"
            return game
        board[square] = mark
        game.moves.append(square)
    game.winner = winner(board)
    return game


def schedule(entrants: list[Entrant], chosen: list[str]) -> list[Game]:
    """Every opening, and in it every ordered pair of different entrants."""
    pairs = [(x, o) for x in range(len(entrants)) for o in range(len(entrants)) if x != o]
    return [Game(x, o, opening) for opening in chosen for x, o in pairs]


@dataclass
class Standing:
    entrant: Entrant
    points: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: int = 0  # losses by crashing, timing out or an illegal move
    won: list[Game] = field(default_factory=list)  # wins on the board, not by the opponent's forfeit
    lost: list[Game] = field(default_factory=list)

    @property
    def average_plies_to_win(self) -> float | None:
        return sum(game.plies for game in self.won) / len(self.won) if self.won else None

    @property
    def shortest_win(self) -> Game | None:
        return min(self.won, key=lambda game: (game.plies, game.opening, game.moves), default=None)

    @property
    def never_lost(self) -> bool:
        return self.losses == 0


def standings(entrants: list[Entrant], games: list[Game]) -> list[Standing]:
    """One row per entrant, best first: points, then wins, then name."""
    rows = [Standing(entrant) for entrant in entrants]
    for game in games:
        for index, mark in ((game.x, "X"), (game.o, "O")):
            row, points = rows[index], game.points(mark)
            row.points += points
            if points == WIN:
                row.wins += 1
                if game.forfeit is None:
                    row.won.append(game)
            elif points == DRAW:
                row.draws += 1
            else:
                row.losses += 1
                row.forfeits += game.forfeit is not None
                row.lost.append(game)
    return sorted(rows, key=lambda row: (-row.points, -row.wins, row.entrant.name.casefold(), row.entrant.name))
