"""Stage 5 (challenge, one star): win in one move.

The first rule of every classic list of tic-tac-toe rules: if you can complete a
line with your next move, do it. Here it is computed, not guessed.
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


def winning_square(board, mark):
    """Return an empty square that completes a line of mark's, or -1 if there is none."""
    for line in LINES:
        marks = [board[square] for square in line]
        if marks.count(mark) == 2 and marks.count(" ") == 1:
            return line[marks.index(" ")]
    return -1
