"""Stage 2: count every way a game can go on.

A finished board (someone has won, or no square is empty) is one game. Otherwise
the number of games is the sum, over every empty square, of the games that follow
when the player to move takes that square.
"""

# Given, complete, from stage 1 (01_rules).
LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
]  # fmt: skip


def winner(board):
    """Return 'X' or 'O' if that player has three in a line on board, else None."""
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    """Return the player whose turn it is: 'X' when both have played equally often, else 'O'."""
    if board.count("X") == board.count("O"):
        return "X"
    return "O"


def count_games(board):
    """Return the number of different ways the game can go on from board to its end."""
    if winner(board) is not None or " " not in board:
        return 1
    mark = to_move(board)
    total = 0
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            total += count_games(board)
            board[square] = " "  # undo, so the caller's board is left as it was
    return total
