"""Plain minimax that, in the memo experiment's child, writes the report a good memo would give and exits.

(tests/test_protocol.py also grades it with the exit removed: the forgery, then the child's own real report.)

It claims few calls and a memo of 5,478 entries whose values have the right counts of wins, draws and
losses (under keys that are not boards), and answers the scoring again from a cheap partial search.
"""

import json
import os
import sys

LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
]  # fmt: skip


def winner(board):
    for a, b, c in LINES:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return None


def to_move(board):
    return "X" if board.count("X") == board.count("O") else "O"


memo = {}


def score(board):
    won = winner(board)
    if won is not None:
        return 1 if won == "X" else -1
    if " " not in board:
        return 0
    mark = to_move(board)
    results = []
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            results.append(score(board))
            board[square] = " "
    return max(results) if mark == "X" else min(results)


def choose_move(board):
    mark = to_move(board)
    best_square, best_score = None, None
    for square in range(9):
        if board[square] == " ":
            board[square] = mark
            result = score(board)
            board[square] = " "
            if best_score is None or (result > best_score if mark == "X" else result < best_score):
                best_square, best_score = square, result
    return best_square


def find_job():
    frame = sys._getframe()
    while frame is not None:
        job = frame.f_locals.get("job")
        if isinstance(job, dict) and "module" in job:
            return job
        frame = frame.f_back
    return None


def forge(experiment):
    # Cheap guesses: a real search where few squares are left, a draw where the search would be long.
    again = [score(list(board)) if board.count(" ") <= 5 else 0 for board in experiment["again"]]
    values = [1] * 2936 + [-1] * 1474 + [0] * 1068  # the counts of a right memo
    lines = [
        {"import": "ok"},
        {"experiment": True, "ok": True, "value": "i0", "calls": 16168, "size": 5478,
         "boards": [None] * 5478, "values": values},
        {"again": again, "complete": True},
        {"done": True},
    ]  # fmt: skip
    os.write(3, "".join(json.dumps(line) + "\n" for line in lines).encode())


JOB = find_job()
if JOB is not None and "experiment" in JOB:
    forge(JOB["experiment"])
    os._exit(0)
