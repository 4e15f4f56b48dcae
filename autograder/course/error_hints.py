"""What to try when a student's function raises an error: one hint per kind of error, said the same way everywhere.

The visible tests (assignments/conftest.py), the check of every stage, the grader's feedback and the notebooks
all use it. Standard library only and no imports from the course: assignments/error_hints.py is a copy of this
file, generated from it, and ships with the visible tests.
"""

RECURSION_ADVICE = (
    "return before recursing when the board is finished, and make each call work on a board with one more mark"
)
MESSAGE_CAP = 160  # characters of an error's own message shown; a student's message may be anything


def hint(kind: str, message: str = "") -> str:
    """What to try for an error of this kind (its class name) with this message; "" when there is nothing to add."""
    if kind == "NotImplementedError":
        return "not written yet: replace `raise NotImplementedError()` with your code"
    if kind == "RecursionError":
        return f"it never stops calling itself: {RECURSION_ADVICE}"
    if kind == "TypeError":
        if "unhashable type" in message:
            return "a list cannot be a dict key: use tuple(board) or ''.join(board) as the key"
        if "NoneType" in message:
            return "a value here is None: some path through a function ends without a return; make every path return"
        return "a value in that line is not of the type the line expects: print it to see what it is"
    if kind == "IndexError":
        return "an index is out of range: a board has squares 0 to 8, and an empty list has no [0]"
    if kind == "KeyError":
        return "a key that is not in the dict: look it up only after checking `key in memo`"
    if kind == "NameError":
        return "a name that is not defined here: check its spelling, and define it before it is used"
    if kind == "UnboundLocalError":
        return "a variable is read before it is given a value on this path: give it one before the loop or branch"
    if kind == "AttributeError":
        return "a value has no such method or attribute: check its spelling and the value's type"
    if kind == "ValueError" and "not in list" in message:
        return "list.index found nothing: check that the value is there before asking where it is"
    return ""


def shorten(text: str, cap: int = MESSAGE_CAP) -> str:
    """text on one line and at most cap characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def one_line(kind: str, message: str, where: str = "") -> str:
    """The error in one line: where in the student's file, its kind and message, and what to try.

    e.g. "memoization.py line 9: TypeError: unhashable type: 'list' — a list cannot be a dict key: ..."
    """
    head = f"{where}: {kind}" if where else kind
    message = shorten(message)
    if message and kind not in ("NotImplementedError", "RecursionError"):
        head += f": {message}"
    advice = hint(kind, message)
    return f"{head} — {advice}" if advice else head
