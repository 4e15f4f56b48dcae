"""Answers right, but leaves the board rewritten so that its squares still join into the same string."""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board):
    found = None
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            found = board[a]
            break
    board[0], board[1] = board[0] + board[1], ""  # ['XO', '', ...]: "".join(board) is unchanged
    return found


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"
