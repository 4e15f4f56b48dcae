"""`autograde tournament SUBMISSIONS --out OUT`: a round robin of the class's players, as X and as O.

    autograde tournament SUBMISSIONS --out OUT [--seed 1] [--openings 6] [--time-limit 5]

Writes OUT/tournament.html (the table, which players never lost, the shortest win each found, the first game
each lost with the reason, and the students who did not enter with theirs) and OUT/tournament.json (every game),
and prints the table. A student none of whose players could start did not enter (entrants.py): they play no
game, are not in the table and are listed apart with the reason. The same class, seed and options give the same
files. OUT may be the folder `autograde grade` wrote: only these two files are
touched, and the class report links the page the next time `autograde grade` writes it.
"""

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.course.board import draw
from autograder.grading import sandbox
from autograder.grading.submissions import ClassError, find_class
from autograder.outputs import clean_line, uncreatable, write_atomically
from autograder.outputs.command_line import fail
from autograder.outputs.folders import blocked_output
from autograder.outputs.report.pages import environment
from autograder.tournament.entrants import Absent, Entrant, references, student_entrants
from autograder.tournament.games import Game, Standing, balanced_openings, openings, play, schedule, standings

DEFAULT_OPENINGS = 6


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="autograde tournament",
        description="Play every student's player against every other and against the reference players.",
    )
    parser.add_argument("submissions", type=Path, metavar="SUBMISSIONS", help="one folder or zip per student")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT", help="where tournament.html goes")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="chooses the openings (default: 1)")
    parser.add_argument(
        "--openings",
        type=int,
        default=DEFAULT_OPENINGS,
        metavar="N",
        help=f"openings played (default: {DEFAULT_OPENINGS}; at most {len(balanced_openings())})",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="CPU seconds a player may think about one move (default: 5)",
    )
    args = parser.parse_args(argv)
    most = len(balanced_openings())
    if not 1 <= args.openings <= most:
        parser.error(
            f"--openings must be between 1 and {most} (the two-move openings that are a draw), not {args.openings}"
        )
    if not 0 < args.time_limit <= 60:
        parser.error(f"--time-limit must be more than 0 and at most 60 seconds, not {args.time_limit:g}")
    return args


def run(submissions: Path, seed: int, count: int, time_limit: float, out: Path | None = None):
    """(entrants, openings, games, standings, notes, absent) of one tournament; absent: who did not enter."""
    found = find_class(submissions, out)
    students, notes = found.students, list(found.notes)
    entrants: list[Entrant] = references()
    absent: list[Absent] = []
    for name, path in students:
        joined, why, missing = student_entrants(name, path, time_limit)
        entrants += joined
        notes += why
        absent += [missing] if missing else []
    chosen = openings(seed, count)
    games = [play(game, entrants[game.x], entrants[game.o], seed) for game in schedule(entrants, chosen)]
    return entrants, chosen, games, standings(entrants, games), notes, absent


def game_json(game: Game, entrants: list[Entrant]) -> dict:
    return {
        "x": entrants[game.x].name,
        "o": entrants[game.o].name,
        "opening": game.opening,
        "moves": game.moves,
        "winner": game.winner,
        "forfeit": game.forfeit,
    }


def to_json(seed: int, chosen: list[str], time_limit: float, entrants, games, table: list[Standing], absent) -> str:
    data = {
        "seed": seed,
        "openings": chosen,
        "time_limit": time_limit,
        "standings": [
            {
                "player": row.entrant.name,
                "plays": row.entrant.plays,
                "student": row.entrant.student,
                "points": row.points,
                "wins": row.wins,
                "draws": row.draws,
                "losses": row.losses,
                "forfeits": row.forfeits,
                "average_plies_to_win": None
                if row.average_plies_to_win is None
                else round(row.average_plies_to_win, 2),
                "never_lost": row.never_lost,
            }
            for row in table
        ],
        "did_not_enter": [{"student": entry.student, "reason": entry.reason} for entry in absent],
        "games": [game_json(game, entrants) for game in games],
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def shown_game(game: Game, entrants: list[Entrant]) -> dict:
    """A game as the page shows it: who played what, the final board drawn, and how it ended."""
    x, o = entrants[game.x].name, entrants[game.o].name
    if game.winner is None:
        ending = "a draw"
    else:
        loser = o if game.winner == "X" else x
        ending = f"{x if game.winner == 'X' else o} won" + (
            f": {loser} forfeited ({game.forfeit})" if game.forfeit else ""
        )
    return {
        "x": x,
        "o": o,
        "opening": f"X on {game.opening.index('X')}, O on {game.opening.index('O')}",
        "moves": ", ".join(map(str, game.moves)) or "none",
        "board": draw(game.board, numbers=False),
        "plies": game.plies,
        "ending": clean_line(ending, 600),
    }


def page_html(seed: int, chosen: list[str], time_limit: float, entrants, table: list[Standing], notes, absent) -> str:
    rows = [
        {
            "name": row.entrant.name,
            "plays": row.entrant.plays,
            "reference": row.entrant.student is None,
            "points": row.points,
            "wins": row.wins,
            "draws": row.draws,
            "losses": row.losses,
            "forfeits": row.forfeits,
            "plies": "–" if row.average_plies_to_win is None else f"{row.average_plies_to_win:.1f}",
            "never_lost": row.never_lost,
            "shortest": row.shortest_win and shown_game(row.shortest_win, entrants),
            "first_loss": row.lost and shown_game(row.lost[0], entrants),
        }
        for row in table
    ]
    return (
        environment()
        .get_template("tournament.html.j2")
        .render(
            rows=rows,
            seed=seed,
            openings=len(chosen),
            games=sum(row.wins + row.draws + row.losses for row in table) // 2,
            time_limit=f"{time_limit:g}",
            notes=[clean_line(note, 600) for note in notes],
            absent=[{"student": entry.student, "reason": clean_line(entry.reason, 600)} for entry in absent],
        )
    )


def print_table(table: list[Standing], games: int, absent: list[Absent]) -> None:
    console = Console(highlight=False, width=max(100, Console().width))
    grid = Table(title=f"Tournament: {games} games", caption="plies/win: marks on the board when it won")
    grid.add_column("player", overflow="fold")
    for heading in ("points", "won", "drawn", "lost", "forfeits", "plies/win", "unbeaten"):
        grid.add_column(heading, justify="right", no_wrap=True)
    for row in table:
        plies = "–" if row.average_plies_to_win is None else f"{row.average_plies_to_win:.1f}"
        never = "yes" if row.never_lost else ""
        cells = (
            clean_line(row.entrant.name, 80),
            row.points,
            row.wins,
            row.draws,
            row.losses,
            row.forfeits,
            plies,
            never,
        )
        grid.add_row(*(str(cell) for cell in cells))
    # Names come from folder names: printed as text, never as rich markup.
    console.print(grid, markup=False)
    if absent:
        console.print(f"Did not enter ({len(absent)}): they played no game and are not ranked.", markup=False)
    for entry in absent:
        console.print(f"  {clean_line(entry.student, 80)}: {clean_line(entry.reason, 600)}", markup=False)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    problem = uncreatable(args.out) or blocked_output(args.out, "tournament.json")
    problem = problem or blocked_output(args.out, "tournament.html")
    if problem:
        return fail("autograde tournament", f"{problem}")
    try:
        sandbox.detect()
    except RuntimeError as error:
        return fail("autograde tournament", f"{error}")
    try:
        entrants, chosen, games, table, notes, absent = run(
            args.submissions, args.seed, args.openings, args.time_limit, args.out
        )
    except ClassError as error:
        return fail("autograde tournament", f"{error}")
    args.out.mkdir(parents=True, exist_ok=True)
    data = to_json(args.seed, chosen, args.time_limit, entrants, games, table, absent)
    write_atomically(args.out / "tournament.json", data)
    page = args.out / "tournament.html"
    write_atomically(page, page_html(args.seed, chosen, args.time_limit, entrants, table, notes, absent))
    for note in notes:
        print(clean_line(note, 600))
    print_table(table, len(games), absent)
    print(f"wrote {page}")
    return 0
