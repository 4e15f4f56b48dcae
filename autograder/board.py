"""Drawing boards for people: the grader's feedback and the terminal game share it."""


def draw(board, numbers: bool = True) -> str:
    """A 3x3 grid; empty squares show their number so a student can name them."""
    cells = [mark if mark != " " else (str(square) if numbers else " ") for square, mark in enumerate(board)]
    rows = [" " + " | ".join(cells[r * 3 : r * 3 + 3]) for r in (0, 1, 2)]
    return "\n---+---+---\n".join(rows)
