"""Stage 7 (challenge, three stars): the quickest win.

Minimax treats every win alike, so a player who can win now may choose a win
three moves later. Here a win counts for more the sooner it comes: a finished
board scores (empty squares + 1) for an X win, minus that for an O win, and 0
for a draw, so a quicker win leaves more empty squares and scores higher.
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


def quick_score(board):
    """Return the minimax score of board where a sooner win is worth more (see above)."""
    won = winner(board)
    empty = board.count(" ")
    if won == "X":
        return empty + 1
    if won == "O":
        return -(empty + 1)
    if empty == 0:
        return 0
    mark = to_move(board)
    results = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            results.append(quick_score(board))
            board[square] = " "
    if mark == "X":
        return max(results)
    return min(results)


def quickest_move(board):
    """Return a move for the player to move that wins as soon as possible against any defence."""
    mark = to_move(board)
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = quick_score(board)
            board[square] = " "
            better = best_score is None or (result > best_score if mark == "X" else result < best_score)
            if better:
                best_square, best_score = square, result
    return best_square
