"""Stage 3: minimax.

score(board) is the result of the game from X's point of view if both sides play
perfectly from board: 1 (X wins), 0 (draw) or -1 (O wins). X picks the largest
score among its moves, O the smallest.
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


def score(board):
    """Return 1, 0 or -1: the result for X if both players play perfectly from board."""
    # YOUR CODE HERE
    raise NotImplementedError()


def choose_move(board):
    """Return an empty square that is best for the player to move."""
    # YOUR CODE HERE
    raise NotImplementedError()
