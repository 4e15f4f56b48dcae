"""A table written into a module where the stage asks for a computation, found in its source for "Needs a look".

Every stage asks for a computation (a search, a count, a check of the lines), and a memo is filled by scoring.
A module can instead hold the answers, e.g. memo = {...every board's score...} and a score that looks boards up:
its answers are right and fast, so every check passes, and nothing the child runs can tell it from a memo. Here
the parent reads the source (never runs it) and names the first literal too large for honest code: the
solutions and every variant hold literals of a few dozen items at most (the eight lines: 24 constants; the
symmetries of 10_symmetry: 72). It only flags the plain forms (a display, a long string or int, many small ones);
a table hidden some other way (compressed into a short string, in comments read back) is not found: the grade
stands, and the README says so under "Known limits".
"""

import ast
import hashlib

from autograder.course import parsing

ITEMS = 100  # constants inside one literal display (a list, tuple, set or dict, nested ones counted in)
CHARS = 1000  # characters of one str or bytes literal that is not a docstring
INT_BITS = 256  # bits of one int literal: a table can be packed into a big number
MODULE_ITEMS = 1000  # constants in the whole module, docstrings aside: a table spread over many statements
MODULE_CHARS = 10_000  # characters of all its str and bytes literals, docstrings aside


def table_look(source: str, filename: str) -> str:
    """Why the module should be read by an instructor (a table instead of a computation), or ""."""
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""  # the child reports what is wrong with it
    docstrings: set[int] = set()  # a constant that is a statement of its own (a docstring) is not counted
    constants = chars = 0
    inside: set[int] = set()  # nodes of a display already counted in an enclosing one
    # One walk, breadth first: an outer display comes before the displays inside it, and a statement before the
    # constant it holds.
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            docstrings.add(id(node.value))
        elif isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict) and id(node) not in inside:
            found = 0
            for item in ast.walk(node):
                inside.add(id(item))
                found += isinstance(item, ast.Constant)
            if found > ITEMS:
                return _look(filename, node, f"a literal of {found:,} values")
        if not isinstance(node, ast.Constant) or id(node) in docstrings:
            continue
        constants += 1
        value = node.value
        if isinstance(value, str | bytes):
            chars += len(value)
            if len(value) > CHARS:
                return _look(filename, node, f"a literal of {len(value):,} characters")
        elif type(value) is int and value.bit_length() > INT_BITS:
            return _look(filename, node, f"an int literal of {value.bit_length():,} bits")
    if constants > MODULE_ITEMS or chars > MODULE_CHARS:
        return f"{filename} holds {constants:,} literal values ({chars:,} characters){QUESTION}"
    return ""


QUESTION = ": a table where a computation is asked?"

_LOOKS: dict[tuple[bytes, str], str] = {}  # (sha256 of a source, its file name) -> table_look of it
_LOOKS_HELD = 4096  # looks kept at once (one short string each); the memo starts over past that


def table_look_once(source: str, filename: str) -> str:
    """table_look, read once per distinct source: a class hands in the same file again and again (the starter of a
    stage not done yet, a copy of the reference), and reading it is a parse and a walk of its whole tree."""
    key = (hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest(), filename)
    look = _LOOKS.get(key)
    if look is None:
        look = table_look(source, filename)
        if len(_LOOKS) >= _LOOKS_HELD:
            _LOOKS.clear()
        _LOOKS[key] = look
    return look


def _look(filename: str, node: ast.AST, what: str) -> str:
    return f"{filename} line {node.lineno} holds {what}{QUESTION}"
