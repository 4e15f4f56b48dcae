"""Correct: counts with an explicit depth the fewest moves to a forced win and picks the move with the shortest.

Stage 7 (challenge, three stars): the quickest win.

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


def moves_to_win(board, player):
    """Return the fewest moves after which player has won from board against any defence, or None."""
    won = winner(board)
    if won is not None:
        return 0 if won == player else None
    if " " not in board:
        return None
    mover = to_move(board)
    depths = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mover
            depths.append(moves_to_win(board, player))
            board[square] = " "
    if mover == player:
        wins = [depth for depth in depths if depth is not None]
        return 1 + min(wins) if wins else None
    if None in depths:
        return None  # the defender has a move that escapes the loss
    return 1 + max(depths)


def quickest_move(board):
    """Return a move for the player to move that wins as soon as possible against any defence."""
    mark = to_move(board)
    best_square, best_depth = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            depth = moves_to_win(board, mark)
            board[square] = " "
            if depth is not None and (best_depth is None or depth < best_depth):
                best_square, best_depth = square, depth
    return best_square
