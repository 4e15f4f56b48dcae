"""An honest mistake: winner marks the empty squares it has looked at with None and never puts them back."""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board):
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
        if board[a] == " ":
            board[a] = None  # meant to skip squares already seen; None then looks like a line of its own
    return None


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
