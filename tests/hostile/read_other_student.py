"""Copies another student's rules.py instead of writing its own."""

import glob
import os


def _someone_else():
    mine = os.path.abspath(__file__)
    patterns = [os.path.join("/", *["*"] * depth, "rules.py") for depth in range(1, 8)]
    for pattern in patterns:
        for path in glob.glob(pattern):
            if os.path.abspath(path) == mine or "solutions" in path or "hostile" in path:
                continue
            try:
                with open(path) as handle:
                    source = handle.read()
            except OSError:
                continue
            if "def winner" in source and "_someone_else" not in source:
                namespace = {}
                exec(source, namespace)
                return namespace
    raise RuntimeError("no other student's work within reach")


def winner(board):
    return _someone_else()["winner"](board)


def to_move(board):
    return _someone_else()["to_move"](board)
