"""symmetries lists the mirror images in the wrong order: the flipped board is turned counterclockwise.

Bonus stage 10: the same board turned and flipped.

Turning the board a quarter turn, or flipping it over, changes no one's chances: many of the 5,478 positions
are the same game seen from another side. Up to rotation and reflection there are only 765. A memo keyed by
one chosen representative of each family of 8 boards, the canonical board, scores each family once.
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


def turned(board):
    """The board turned a quarter turn clockwise: the left column becomes the top row."""
    return [board[6], board[3], board[0], board[7], board[4], board[1], board[8], board[5], board[2]]


def flipped(board):
    """The board flipped left to right, as seen in a mirror: each row reversed."""
    return [board[2], board[1], board[0], board[5], board[4], board[3], board[8], board[7], board[6]]


def symmetries(board):
    """Return the 8 boards board becomes when turned and flipped, each a new list of 9 squares, in this order:
    board, then turned 1, 2 and 3 quarter turns clockwise, then flipped, then flipped and turned 1, 2, 3 times."""
    result = []
    start = list(board)
    for _ in range(4):
        result.append(start)
        start = turned(start)
    start = flipped(board)
    for _ in range(4):
        result.append(start)
        start = turned(turned(turned(start)))
    return result


def canonical(board):
    """Return the smallest of board's 8 symmetries as a string of 9 characters (as ''.join gives them)."""
    return min("".join(other) for other in symmetries(board))


# Maps canonical(board) to the board's score: one entry for each family of boards that are the same turned or
# flipped.
memo = {}


def score(board):
    """Return 1, 0 or -1 like minimax's score, remembering every board it scores in memo under canonical(board)."""
    key = canonical(board)
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
