"""Stage 6 (challenge, two stars): who wins the games?

count_games from stage 2, extended to keep three tallies instead of one: the
games X wins, the games O wins and the draws.
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


def count_results(board):
    """Return [x_wins, o_wins, draws] over all the games that can follow board."""
    won = winner(board)
    if won == "X":
        return [1, 0, 0]
    if won == "O":
        return [0, 1, 0]
    if " " not in board:
        return [0, 0, 1]
    mark = to_move(board)
    totals = [0, 0, 0]
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            x_wins, o_wins, draws = count_results(board)
            board[square] = " "
            totals[0] += x_wins
            totals[1] += o_wins
            totals[2] += draws
    return totals
