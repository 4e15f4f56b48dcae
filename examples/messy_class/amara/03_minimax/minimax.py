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
    won = winner(board)
    if won == "X":
        return 1
    if won == "O":
        return -1
    if " " not in board:
        return 0
    mark = to_move(board)
    results = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            results.append(score(board))
            board[square] = " "
    if mark == "X":
        return max(results)
    return min(results)


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
