"""The recursion does not go one deeper: every win counts at the same depth.

Bonus stage 9: every best square, by depth.

A robot arm that plays tic-tac-toe scores a move by how soon the game ends after it: a win for X is worth 10
minus the depth at which it comes (the candidate move itself is depth 1), a win for O the negative of that,
and a draw 0. So a win at once beats a win later, a loss later beats a loss now, and the arm can list every
square that is best, not just one of them.
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


def depth_score(board, depth):
    """Return board's score with perfect play, a win for X worth 10 - d and a win for O d - 10 at depth d.

    board is depth moves after the position a move is being chosen in; each further move is one deeper.
    """
    won = winner(board)
    if won is not None:
        return 10 - depth if won == "X" else depth - 10
    if " " not in board:
        return 0
    mark = to_move(board)
    results = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            results.append(depth_score(board, depth))
            board[square] = " "
    return max(results) if mark == "X" else min(results)


def best_squares(board):
    """Return the sorted list of every empty square whose move has the best depth_score for the player to move."""
    mark = to_move(board)
    scores = {}
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            scores[square] = depth_score(board, 1)
            board[square] = " "
    best = max(scores.values()) if mark == "X" else min(scores.values())
    return sorted(square for square, value in scores.items() if value == best)
