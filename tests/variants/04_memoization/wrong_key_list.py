"""Keys memo by the board list itself, which a dict cannot hold: every score raises TypeError (unhashable).

Stage 4: memoization.

Different move orders reach the same board many times, so plain minimax scores
the same position again and again. Here every board scored is written into memo,
and score looks a board up there before searching.
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


# Maps a board's 9 squares joined into one string (e.g. "XO  X    ") to its score.
memo = {}


def score(board):
    """Return 1, 0 or -1 like minimax's score, remembering every board it scores in memo."""
    key = board
    if key in memo:
        return memo[key]
    won = winner(board)
    if won is not None:
        result = 1 if won == "X" else -1
    elif " " not in board:
        result = 0
    else:
        mark = to_move(board)
        results = []
        for square in range(9):
            if board[square] == " ":
                board[square] = mark
                results.append(score(board))
                board[square] = " "
        result = max(results) if mark == "X" else min(results)
    memo[key] = result
    return result


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
