"""The board for the grader's own use: the rules of the game, and drawing a board for people.

Feedback, the terminal game and its players share these. (The right answers the grader judges
with come from the reference solutions, through autograder.course.oracle.)
"""

# The eight lines that win: three rows, three columns, two diagonals.
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)  # fmt: skip


def winner(board):
    """'X' or 'O' if that player has a line on board, else None."""
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board) -> str:
    return "X" if board.count("X") == board.count("O") else "O"


def empty_squares(board) -> list[int]:
    return [square for square in range(9) if board[square] == " "]


def draw(board, numbers: bool = True) -> str:
    """A 3x3 grid; empty squares show their number so a student can name them."""
    cells = [mark if mark != " " else (str(square) if numbers else " ") for square, mark in enumerate(board)]
    rows = [" " + " | ".join(cells[r * 3 : r * 3 + 3]) for r in (0, 1, 2)]
    return "\n---+---+---\n".join(rows)


def draw_with_key(board) -> str:
    """The board with empty squares as dots, and the square numbers in a grid beside it.

    In feedback a digit in an empty square is easily misread (0 looks like O), so the numbers stand apart.
    Anything can be drawn, as a board a student's code left behind may hold anything: a square that is not
    'X', 'O' or ' ' shows as '?' and is described under the grid, as is a board without nine squares.
    """
    squares = list(board[:10]) if type(board) in (list, tuple, str) else []
    cells, notes = [], []
    for square in range(9):
        mark = squares[square] if square < len(squares) else None
        if type(mark) is str and mark in ("X", "O", " "):
            cells.append("·" if mark == " " else mark)
        else:
            cells.append("?")
            if square < len(squares):
                notes.append(f"square {square} holds {_described(mark)}")
    rows = [" " + " | ".join(cells[r * 3 : r * 3 + 3]) for r in (0, 1, 2)]
    keys = [" ".join(str(square) for square in range(r * 3, r * 3 + 3)) for r in (0, 1, 2)]
    drawing = "\n---+---+---\n".join(f"{row}      {key}" for row, key in zip(rows, keys, strict=True))
    if type(board) not in (list, tuple, str):
        notes.insert(0, f"this is not a list of squares but {_described(board)}")
    elif len(board) != 9:
        notes.insert(0, f"the board has {len(board)} squares, not 9")
    return drawing + "".join(f"\n({note})" for note in notes)


def _described(value) -> str:
    """A short, printable description of anything (repr escapes control characters and lone surrogates)."""
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__!r} object"
    if type(text) is not str:
        text = "?"
    return text if len(text) <= 40 else text[:39] + "…"
