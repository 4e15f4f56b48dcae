"""Reserves memory until something gives.

bytes(n) asks for pages it does not touch, so the limit on the process's memory is reached at once, at the same
point as with filled blocks, without the seconds of CPU that filling them can cost on a busy or fresh virtual
machine, where they could run the stage out of CPU time first and make this a timeout (the memory a run's
processes really fill is tests/test_sandbox.py's).
"""

blocks = []
while True:
    blocks.append(bytes(256 << 20))


def winner(board):
    return None


def to_move(board):
    return "X"
