"""Helpers for the test cells below (read-only). Run this cell once, after your code and before the tests.

Each test cell below is one check of the course's autograder, worth its points when every call in it
gives a right answer. Answers are compared by their exact type, as the autograder compares them: True is
not 1, 1.0 is not 1, "X " is not "X"; three tallies may be a list or a tuple.

A hidden test asks its boards from a table: one `board=answer` per board, with `.` for an empty square,
`board,argument=answer` when the function takes more than the board, and `answer|answer` when several
answers are right.
"""

import ast
import functools
import time

# The grader's error hints (autograder/course/error_hints.py), its source put here when the cell is built, so
# an error says what to try in the same words as the grader and the visible tests.
_ERROR_HINTS_SOURCE = ""
_error_hints = {}
exec(_ERROR_HINTS_SOURCE or "def one_line(kind, message, where=''): return f'{kind}: {message}'", _error_hints)

_changed = []  # (function name, board given, board left) of every call that changed the board it was given
_passed = []  # the checks that passed so far
_answers = {}  # (function, args) -> (value, error) of every call made so far


def _show(board):
    """The board drawn as three rows, for messages (or its repr when it is not nine squares)."""
    if type(board) not in (list, tuple, str) or len(board) != 9 or any(type(square) is not str for square in board):
        return f"\n{_repr(board)}\n"
    rows = [" " + " | ".join(board[row * 3 : row * 3 + 3]) for row in range(3)]
    return "\n" + "\n---+---+---\n".join(rows) + "\n"


def _repr(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:199] + "…"


_literal = functools.cache(ast.literal_eval)  # the same few answers come back thousands of times


def _cases(table):
    """The (args, right answers) of a hidden test's table, described in this cell's docstring."""
    cases = []
    for token in table.split():
        call, answers = token.split("=")
        board, *extra = call.split(",")
        args = (board.replace(".", " "), *map(_literal, extra))
        cases.append((args, [_literal(answer) for answer in answers.split("|")]))
    return cases


def _scores(table):
    """A table of boards with one answer each, as a dict: board -> answer."""
    return {args[0]: answers[0] for args, answers in _cases(table)}


def _form(value):
    """value as the autograder compares it: its exact type with it, a list and a tuple alike (tallies)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return ("tally", tuple(_form(item) for item in value))
    return (kind, value)


def _right(value, answers):
    form = _form(value)
    return any(form == _form(answer) for answer in answers)


def _text(function, args):
    """The call as messages name it; the board itself is drawn below the message, as the grader's feedback does."""
    return f"{function.__name__}(board{''.join(', ' + _repr(arg) for arg in args[1:])})"


def _call(function, args):
    """(value, None) or (None, the error it raised) of function(a fresh list of the board's squares, *rest).

    Each distinct call is made once and its answer reused by every cell that asks it, as the autograder asks a
    board that two checks share once: a stateful function sees the same calls in both, and a plain search of
    the empty board is not repeated.
    """
    key = (function, args)
    if key not in _answers:
        _answers[key] = _first_call(function, args)
    return _answers[key]


def _first_call(function, args):
    """_call's answer, made now; a call that returns with its board changed is noted for board-unchanged."""
    given = list(args[0])
    board = list(given)
    try:
        value = function(board, *args[1:])
    except Exception as error:
        return None, error
    if any(type(square) is not str for square in board) or board != given:
        _changed.append((function.__name__, given, board))
    return value, None


def _run(function, cases, fresh=False):
    """Make every call, as the autograder does whatever fails; the problems: (case number, value, error).

    fresh: make each call again rather than reuse an earlier cell's answer, so its cost is measured.
    """
    problems = []
    for number, (args, answers) in enumerate(cases):
        value, error = _first_call(function, args) if fresh else _call(function, args)
        if error is not None or not _right(value, answers):
            problems.append((number, value, error))
    return problems


def _raised(function, args, error):
    try:
        message = str(error)
    except Exception:
        message = "(the message could not be read)"
    said = _error_hints["one_line"](type(error).__name__, message)
    return f"{_text(function, args)} raised {said}{_show(args[0])}"


def check_examples(function, rows):
    """A visible test: each row is (args, expected, why); expected is the answer, or a set of right answers."""
    cases = [
        (args, sorted(expected, key=repr) if isinstance(expected, set) else [expected]) for args, expected, _ in rows
    ]
    problems = _run(function, cases)
    if problems:
        number, value, error = problems[0]
        (args, answers), why = cases[number], rows[number][2]
        if error is not None:
            raise AssertionError(_raised(function, args, error)) from error
        wanted = "one of " + ", ".join(map(repr, answers)) if len(answers) > 1 else repr(answers[0])
        raise AssertionError(
            f"{_text(function, args)} returned {_repr(value)}; expected {wanted} ({why}){_show(args[0])}"
        )


def check_hidden(function, table):
    """A hidden test: a failure shows the board and the answer given, never the expected one."""
    cases = _cases(table)
    problems = _run(function, cases)
    if problems:
        number, value, error = problems[0]
        args = cases[number][0]
        wrong = f"{len(problems)} of {len(cases)} boards were not right; the first:"
        if error is not None:
            raise AssertionError(f"{wrong} {_raised(function, args, error)}") from error
        raise AssertionError(f"{wrong} {_text(function, args)} returned {_repr(value)}{_show(args[0])}")


def passed(check):
    """Count the check as passed (the board-unchanged check needs one) and say so."""
    _passed.append(check)
    print(f"{check}: all checks passed")


def check_unchanged():
    """No call so far changed the board it was given, and some check passed (doing nothing earns nothing)."""
    if _changed:
        function, given, left = _changed[0]
        raise AssertionError(
            f"{len(_changed)} calls changed the board they were given. {function} was given:{_show(given)}"
            f"and left it as:{_show(left)}Undo every mark you place (board[square] = ' '), or work on a copy."
        )
    if not _passed:
        raise AssertionError("No function of this stage gave right answers yet, so this is not counted yet.")


# ---------------------------------------------------------------------------------------------------------------
# The memo experiment, as the autograder runs it


def _board_of(key):
    """The 9 squares a memo key names when it is one of the usual forms of a board: ''.join(board),
    tuple(board) or str(board); else None."""
    kind = type(key)
    if kind is str:
        if len(key) == 9:
            squares = key
        elif len(key) == 45 and key[0] in "[(":
            squares = key[2::5]
            if key != repr(list(squares)) and key != repr(tuple(squares)):
                return None
        else:
            return None
    elif kind is tuple and len(key) == 9 and all(type(square) is str for square in key):
        squares = "".join(key)
    else:
        return None
    return squares if len(squares) == 9 and not squares.strip("XO ") else None


def _score_value(value):
    return value if type(value) is int and value in (-1, 0, 1) else None


def _memo_experiment(namespace, name, table_name, case, scores, again, again_seconds):
    """Clear the memo (the module-level dict table_name) and score the board, counting every call of the function;
    then score the board again (again times) and every reachable board, all within again_seconds of CPU time.

    Returns the memo's entries, the number of calls, whether the scoring again was right, and the CPU time.
    """
    (args, answers), start = _cases(case)[0], time.process_time()
    original, memo = namespace.get(name), namespace.get(table_name)
    if not callable(original):
        raise AssertionError(f"there is no function {name}")
    if type(memo) is not dict:
        raise AssertionError(f"there is no module-level dict called {table_name}")
    memo.clear()
    calls = [0]

    def counted(board):
        calls[0] += 1
        return original(board)

    namespace[name] = counted  # the recursion looks its own name up, so it is counted too
    try:
        value = counted(list(args[0]))
    except Exception as error:
        raise AssertionError(_raised(original, args, error)) from error
    finally:
        namespace[name] = original
    memo = namespace.get(table_name)
    if type(memo) is not dict:
        raise AssertionError(f"after {name} of the empty board, {table_name} is no longer a dict")
    if not (type(value) is int and _right(value, answers)):
        raise AssertionError(f"{name} of the empty board returned {_repr(value)}, which is not its score")
    entries = list(memo.items())[:6000]
    boards = [args[0]] * again + list(scores)
    deadline, right = time.process_time() + again_seconds, True
    for board in boards:
        try:
            right = time.process_time() < deadline and _score_value(original(list(board))) == scores[board]
        except Exception:
            right = False
        if not right:
            break
    return entries, calls[0], right, time.process_time() - start


def check_memo_size(namespace, name, memo, case, table, again, again_seconds, exact=False):
    """After memo.clear() and scoring the board, memo holds every reachable board (the table), each with its score.

    Keys that are not the boards themselves pass when the memo answers every reachable board right, unless exact:
    then the keys must be the table's boards (the canonical boards, in 10_symmetry).
    """
    scores = _scores(table)
    entries, _, right, _ = _memo_experiment(namespace, name, memo, case, scores, again, again_seconds)
    size = len(namespace[memo])
    if size != len(scores):
        raise AssertionError(
            f"After {memo}.clear() and {name} of the empty board, {memo} held {size:,} boards; every reachable "
            f"position ({len(scores):,}) should be in it, each once."
        )
    boards = [_board_of(key) for key, _ in entries]
    values = [_score_value(value) for _, value in entries]
    if len(set(boards)) == len(scores) and dict(zip(boards, values, strict=True)) == scores:
        return
    if exact:
        raise AssertionError(
            f"{memo} held {size:,} entries, but they are not the canonical boards (canonical(board), a string of 9 "
            "characters), each with its score."
        )
    if sorted(values, key=repr) != sorted(scores.values(), key=repr):
        raise AssertionError(
            f"{memo} held {size:,} entries, but their values are not the scores of the reachable boards: each value "
            "should be its board's score (1, 0 or -1, an int)."
        )
    if not right:
        raise AssertionError(
            f"{memo} held {size:,} entries, but they are not all stored with their own board's score (or its keys are "
            "not the boards themselves, and scoring every reachable board again was not answered right at once)."
        )


def check_memo_speed(namespace, name, memo, case, table, again, again_seconds, calls_limit, cpu_seconds):
    """Scoring the board from an empty memo makes few calls, and the memo answers every reachable board at once."""
    _, calls, right, seconds = _memo_experiment(namespace, name, memo, case, _scores(table), again, again_seconds)
    if calls > calls_limit:
        raise AssertionError(
            f"Scoring the empty board from an empty memo called {name} {calls:,} times; plain minimax makes "
            f"549,946 calls, and with the memo it should need under {calls_limit:,}."
        )
    if not right:
        raise AssertionError(
            f"After the empty board was scored, {name} was asked about it again and then about every reachable board, "
            f"which a memo answers at once; it did not answer them all right within {again_seconds:g} CPU seconds."
        )
    if seconds >= cpu_seconds:
        raise AssertionError(f"The memo experiment used {seconds:.2f} CPU seconds; the limit is {cpu_seconds:g} s.")


def check_prunes(function, table, cpu_seconds):
    """Scoring the boards of the table (the empty board, then the nine openings) right, within cpu_seconds of CPU
    time in all: alpha-beta needs a small fraction of a second, plain minimax about two seconds."""
    start = time.process_time()
    problems = _run(function, _cases(table), fresh=True)  # the grader times them in a child of their own
    seconds = time.process_time() - start
    if problems:
        raise AssertionError(f"{function.__name__} did not score the empty board and the nine openings right.")
    if seconds >= cpu_seconds:
        raise AssertionError(
            f"Scoring the empty board and the nine openings used {seconds:.2f} CPU seconds; the limit is "
            f"{cpu_seconds:g} s: stop trying moves once alpha >= beta."
        )
