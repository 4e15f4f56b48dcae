"""ast.parse for a process with threads: the grader parses students' sources in the threads that grade them.

CPython 3.11 keeps the recursion depth of its AST converter in state every thread shares, and the converter can
let another thread run in the middle (a garbage collection that calls a finalizer). Two parses at once then fail
with "SystemError: AST constructor recursion depth mismatch" (CPython issue gh-106905), and a student whose
source is fine could not be graded. One lock makes every parse of the package take its turn.
"""

import ast
import threading

_ONE_AT_A_TIME = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """ast.parse(source, filename), never at the same time as another thread's parse."""
    with _ONE_AT_A_TIME:
        return ast.parse(source, filename)
