"""No search at all: every reachable board's score, written out, and a score that copies them into memo.

tests/test_hostile.py replaces `TABLE = {}` with the 5,478 boards and their scores. Every check of
04_memoization passes (the answers are right, memo is full, the scoring again is instant), and nothing run in
the child can tell it from a memo; the grader reads the source and lists the stage under "Needs a look".
"""

TABLE = {}

memo = {}


def score(board):
    if not memo:
        memo.update(TABLE)
    return memo["".join(board)]


def choose_move(board):
    mark = "X" if board.count("X") == board.count("O") else "O"
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = score(board)
            board[square] = " "
            if best_score is None or (result > best_score if mark == "X" else result < best_score):
                best_square, best_score = square, result
    return best_square
