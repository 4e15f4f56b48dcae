"""score uses the window (-inf, inf), floats that are never returned.

Bonus stage 8: alpha-beta pruning.

Minimax looks at every move of every position. Alpha-beta keeps a window (alpha, beta) of the scores that
can still change the answer higher up the tree, and stops looking at a position's moves as soon as one of
them shows the position cannot matter: same scores, a small part of the work.
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


def alphabeta(board, alpha, beta):
    """Return board's minimax score (1, 0 or -1) when it lies strictly between alpha and beta.

    When the score is alpha or less, return any value that is alpha or less; when it is beta or more, any
    value that is beta or more. Try the moves in square order, 0 to 8.
    """
    won = winner(board)
    if won is not None:
        return 1 if won == "X" else -1
    if " " not in board:
        return 0
    mark = to_move(board)
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            value = alphabeta(board, alpha, beta)
            board[square] = " "
            if mark == "X":
                alpha = max(alpha, value)
            else:
                beta = min(beta, value)
            if alpha >= beta:
                break
    return alpha if mark == "X" else beta


def score(board):
    """Return 1, 0 or -1 like minimax's score, found by alphabeta with a window that holds every score."""
    return alphabeta(board, float("-inf"), float("inf"))


def choose_move(board):
    """Return an empty square that is best for the player to move."""
    mark = to_move(board)
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = score(board)
            board[square] = " "
            better = best_score is None or (result > best_score if mark == "X" else result < best_score)
            if better:
                best_square, best_score = square, result
    return best_square
