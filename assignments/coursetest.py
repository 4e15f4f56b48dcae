"""Helpers for the visible tests: draw a board, judge an answer exactly, and explain a wrong one.

The test files keep their examples in a table of plain values (EXAMPLES); this module turns a row of that
table and the value your function returned into a message that shows the board and says what to try next.
"""

import reprlib

# One "try this" line per function, used when nothing more specific applies.
TRY_THIS = {
    "winner": "look at all eight LINES (three rows, three columns, two diagonals), and return None only after the "
    "loop has looked at every one.",
    "to_move": "X moves first, so it is X's turn exactly when both players have the same number of marks.",
    "count_games": "a finished board is 1 game; otherwise play each empty square with the mark of the player to "
    "move, count the games from there, and undo the mark before trying the next square.",
    "score": "X takes the largest score of its moves, O the smallest; a finished board scores 1, -1 or 0.",
    "choose_move": "try each empty square with the mover's mark, score the board, undo the move, and keep the "
    "highest score for X, the lowest for O.",
    "winning_square": "look for a line holding two of mark and one empty square, and return that empty square; "
    "return -1 when there is none.",
    "count_results": "a finished board is one game: [1, 0, 0], [0, 1, 0] or [0, 0, 1]; otherwise play each empty "
    "square, add its three tallies position by position, and undo the mark.",
    "alphabeta": "X raises alpha and O lowers beta as scores come in; stop once alpha >= beta, and pass the "
    "narrowed window down to every recursive call.",
    "depth_score": "a win for X scores 10 - depth, for O depth - 10; the board after the candidate move is depth 1, "
    "and each recursive call is depth + 1.",
    "best_squares": "score every empty square with depth_score(board, 1) after the move, then keep every square "
    "with the best score (highest for X, lowest for O), sorted.",
    "symmetries": "turn the board a quarter turn clockwise three times, then flip it left to right and turn that "
    "three times: 8 boards, each a new list.",
    "canonical": "join each of the 8 symmetries into a string and return the smallest (min).",
    "quickest_move": "a sooner win must be worth more than a later one, and any win, even one that fills the "
    "board, more than a draw; then pick the move with the best such score (`autograde hint 7` says more).",
}


def draw(board, indent="    "):
    """The board as a 3 x 3 grid, empty squares as dots, with the square numbers beside it.

    (A number inside an empty square is easily misread: 0 looks like O.)
    """
    cells = [mark if mark in ("X", "O") else "·" if mark == " " else "?" for mark in board]
    rows = [f"{indent} {cells[r]} | {cells[r + 1]} | {cells[r + 2]}      {r} {r + 1} {r + 2}" for r in (0, 3, 6)]
    return f"\n{indent}---+---+---\n".join(rows)


def side_by_side(left, right, left_title, right_title):
    """Two drawn boards next to each other, each under its title."""
    left_lines = [left_title] + draw(left, indent="").splitlines()
    right_lines = [right_title] + draw(right, indent="").splitlines()
    width = max(len(line) for line in left_lines) + 6
    return "\n".join(f"    {a:<{width}}{b}" for a, b in zip(left_lines, right_lines, strict=True))


# Said after score's "try this" in the stages that keep a memo (4 and 10), never before the memo is taught.
MEMO_ADVICE = "With a memo, two different boards must never share a key."

SHOWN_CAP = 300  # characters of a returned value shown: a wrong answer can be millions of characters long


def short_repr(value, cap=SHOWN_CAP):
    """repr(value), shortened to at most cap characters (reprlib shortens long lists and strings inside it)."""
    shortener = reprlib.Repr()  # attributes, not keyword arguments: those need Python 3.12
    shortener.maxlist = shortener.maxtuple = shortener.maxset = 12
    shortener.maxstring = shortener.maxother = 60
    try:
        text = shortener.repr(value)
    except Exception:
        text = f"(a {type(value).__name__} whose repr() failed)"
    if type(value) in (list, tuple) and len(value) > shortener.maxlist:
        text += f" ({len(value):,} items)"
    return text if len(text) <= cap else text[: cap - 1] + "…"


def show(value):
    """A value as Python would print it, naming its type when the type is part of the mistake; shortened."""
    if isinstance(value, bool) or type(value) not in (int, str, list, tuple, set, type(None)):
        return f"{short_repr(value)} (a {type(value).__name__})"
    return short_repr(value)


def call_text(function_name, args):
    """How the call looks in code: winner(board), winning_square(board, 'X')."""
    rest = "".join(f", {arg!r}" for arg in args[1:])
    return f"{function_name}(board{rest})"


def matches(result, expected):
    """Is result the expected answer, with exactly the expected type (True is not 1, 'X ' is not 'X')?

    A set of expected answers means any one of them is right. A list of expected counts also accepts a tuple.
    """
    if isinstance(expected, set):
        return type(result) is int and result in expected
    if expected is None:
        return result is None
    if isinstance(expected, list) and expected and all(type(board) is str for board in expected):
        return (  # a list of boards, each written as its 9 characters
            type(result) is list
            and len(result) == len(expected)
            and all(type(board) is list and len(board) == 9 and all(type(s) is str for s in board) for board in result)
            and ["".join(board) for board in result] == expected
        )
    if isinstance(expected, list):
        return (
            type(result) in (list, tuple)
            and len(result) == len(expected)
            and all(type(value) is int for value in result)
            and list(result) == expected
        )
    return type(result) is type(expected) and result == expected


def expected_text(expected):
    if isinstance(expected, set):
        if len(expected) == 1:
            return show(next(iter(expected)))
        return "any one of " + ", ".join(str(square) for square in sorted(expected))
    return show(expected)


def hint(function_name, board, result, expected, memo=False):
    """One line saying what to try, as specific to this mistake as we can make it; memo: the stage keeps one."""
    advice = _hint(function_name, board, result, expected)
    if memo and function_name == "score" and advice == TRY_THIS["score"]:
        return f"{advice} {MEMO_ADVICE}"
    return advice


def _hint(function_name, board, result, expected):
    finished = winner_of(board) is not None or " " not in board
    if not isinstance(expected, set) and not matches(result, expected) and _same_value(result, expected):
        kind = "a list or tuple of 3 ints" if isinstance(expected, list) else type(expected).__name__
        return f"the value is right but its type is not: return {kind}, like {expected!r}."
    if function_name == "winner":
        if result == " ":
            return "three empty squares in a line are not a win: check that the first square is not ' '."
        if expected is None and result is not None:
            return "return None when no line is filled with one mark (after the loop, not inside it)."
    if function_name == "count_results" and winner_of(board) is not None and " " not in board:
        return "this full board has a winner: check for a winner before checking for a full board."
    if function_name == "count_results" and finished and _is_one_game(result) and isinstance(expected, list):
        return f"this board is one game, {expected!r}: the tallies are [x_wins, o_wins, draws], in that order."
    if function_name in ("count_games", "count_results") and finished:
        return "a finished board (a line is filled, or no square is empty) is exactly one game: check that first."
    if function_name == "score" and finished:
        return "a finished board is scored directly: 1 if X has a line, -1 if O has one, 0 if it is full."
    if isinstance(expected, set) and type(result) is not int:
        return f"return the square as a plain int, like {min(expected)}, not a {type(result).__name__}."
    if function_name in ("choose_move", "winning_square", "quickest_move") and isinstance(expected, set):
        if type(result) is int and 0 <= result <= 8 and board[result] != " ":
            return f"square {result} is already taken: only return an empty square."
    return TRY_THIS.get(function_name, "read the function's contract in the README again.")


def is_board_list(expected):
    return isinstance(expected, list) and bool(expected) and all(type(board) is str for board in expected)


def boards_difference(result, expected):
    """For a list of boards (symmetries): the first entry that differs, each board written as its 9 squares, so
    the two are compared alike and the difference is not cut off; None when result is no list of boards."""
    if type(result) is not list:
        return None
    written = ["".join(b) if type(b) is list and all(type(s) is str for s in b) else b for b in result]
    if len(written) != len(expected):
        return f"it returned {len(written)} boards, and there are {len(expected)}"
    for number, (got, want) in enumerate(zip(written, expected, strict=True)):
        if got != want:
            got_text = repr(got) if type(got) is str else show(got)
            return f"entry {number} is {got_text}, and should be {want!r} (each board written as its 9 squares)"
    return None


def wrong_answer(function_name, args, result, expected, why, memo=False):
    """The message for a row of EXAMPLES that came out wrong: the call, the board, both answers, a hint."""
    board = list(args[0])
    difference = boards_difference(result, expected) if is_board_list(expected) else None
    answer = (
        f"{call_text(function_name, args)} is wrong: {difference}"
        if difference
        else f"{call_text(function_name, args)} returned {show(result)}, but the answer is {expected_text(expected)}"
    )
    lines = [
        f"{answer} ({why}).",
        "",
        draw(board),
        "",
        f"    board = {board!r}   (dots are empty squares; the small grid numbers them)",
        f"Try this: {hint(function_name, board, result, expected, memo)}",
    ]
    return "\n".join(lines)


def board_changed(function_name, args, before, after):
    """The message when a function left the board it was given in another state."""
    return "\n".join(
        [
            f"{call_text(function_name, args)} changed the board it was given; it must leave it as it found it.",
            "",
            side_by_side(before, after, "before the call", "after the call"),
            "",
            "Try this: after trying a move (board[square] = mark) and looking ahead, undo it (board[square] = ' ').",
        ]
    )


def winner_of(board):
    """The winner of board ('X', 'O' or None), for choosing hints; a copy of the rule, not your code."""
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    for a, b, c in lines:
        if board[a] in ("X", "O") and board[a] == board[b] == board[c]:
            return board[a]
    return None


def _is_one_game(result):
    """Whether result is three int tallies that count one game: the right count, perhaps in the wrong place."""
    tallies = type(result) in (list, tuple) and len(result) == 3 and all(type(n) is int for n in result)
    return tallies and sum(result) == 1


def _same_value(result, expected):
    try:
        if isinstance(expected, list):
            return isinstance(result, (list, tuple)) and list(result) == expected
        return result == expected
    except Exception:
        return False


def wrong_type(function_name, args, result, wanted):
    """The message when a function returned a value of the wrong type."""
    return "\n".join(
        [
            f"{call_text(function_name, args)} returned {show(result)}, but it must return {wanted}.",
            "",
            draw(list(args[0])),
            "",
            "Try this: return the plain value itself; True is not 1, and '' or False is not None.",
        ]
    )
