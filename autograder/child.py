"""Runs inside the sandbox: import one student module, make the calls asked for, report plain values.

Standard library only, started as `python -I -S child.py`. It reads one JSON job on stdin and writes
one JSON line per step on file descriptor 3 as each step finishes, so the steps done before a crash
or a timeout still count. Nothing here decides a grade: the trusted parent judges the values, and
whatever the student's code writes on fd 3 is parsed as strictly as anything else.
"""

import json
import os
import signal
import sys
import time
import traceback

MAX_ITEMS = 16  # longest list or tuple reported back; answers in this course are at most 9 long


def encode(value, depth=0):
    """A short string that keeps value's exact type: bool is not int, a str subclass is not str.

    "n" None, "b1"/"b0" a bool, "i<digits>" an int, "s<text>" a str, "f<repr>" a float, "l[...]"/"t[...]" a
    list or tuple (a JSON list of its items' encodings), "o<type name>:<text>" anything else.
    """
    kind = type(value)
    if value is None:
        return "n"
    if kind is str:
        return "s" + value
    if kind is int:
        return "i" + str(value) if -(10**18) < value < 10**18 else "ohuge int:"
    if kind is bool:
        return "b1" if value else "b0"
    if kind is float:
        return "f" + repr(value)
    if (kind is list or kind is tuple) and depth < 2:
        items = [encode(item, depth + 1) for item in value[:MAX_ITEMS]]
        return ("l" if kind is list else "t") + json.dumps(items + ["..."] * (len(value) > MAX_ITEMS))
    try:
        text = object.__repr__(value)  # never the object's own __repr__, which is student code
    except Exception:
        text = "?"
    name = kind.__name__ if isinstance(kind.__name__, str) else "?"
    return f"o{name[:40]}:{text[:80]}"


class CallTimeout(BaseException):
    """Raised in a call that runs past its own time budget (a slow honest function, not a hostile one)."""


def on_alarm(signum, frame):
    raise CallTimeout()


def where_in(filename, error):
    """The last line of the student's file in a traceback, e.g. 'rules.py line 12'."""
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.basename(frame.filename) == filename:
            line = frame.lineno
    if isinstance(error, SyntaxError) and error.lineno:
        line = error.lineno
    return f"{filename} line {line}" if line else filename


def describe(error):
    if isinstance(error, SyntaxError):
        text = str(error.msg)  # without the "(file, line n)" tail: the location is reported separately
    elif isinstance(error, RecursionError):
        text = "maximum recursion depth exceeded"
    else:
        text = str(error)
    return type(error).__name__, text[:300]


def same_squares(board, given):
    """Whether the list handed to the student still holds the squares of the board string given."""
    try:
        return "".join(board) == given
    except TypeError:  # something that is not a string was put on the board
        return False


def run_step(module, filename, step):
    """One step: a call with a copy of a board, or the memo experiment of the memoization stage.

    A call that returns without touching its board replies with the short form (id, value); anything
    else (an error, a changed board, the memo experiment) replies with a dict that says what happened.
    """
    function = getattr(module, step["call"], None)
    if not callable(function):
        message = f"{filename} has no function {step['call']}"
        return {"id": step["id"], "ok": False, "error": "missing", "message": message}
    given = step["args"][0]
    board = list(given)
    if step.get("memo"):
        return memo_experiment(module, filename, step, function, board)
    seconds = step.get("seconds")  # only the searches get a timer of their own: arming it costs time
    if seconds:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        value = function(board, *step["args"][1:])
    except CallTimeout:
        return {"id": step["id"], "ok": False, "error": "slow", "message": f"took longer than {seconds} seconds"}
    except BaseException as error:  # noqa: B036 - SystemExit and KeyboardInterrupt are student errors here
        name, text = describe(error)
        return {"id": step["id"], "ok": False, "error": name, "message": text, "where": where_in(filename, error)}
    finally:
        if seconds:
            signal.setitimer(signal.ITIMER_REAL, 0)
    if not same_squares(board, given):
        return {"id": step["id"], "ok": True, "value": encode(value), "changed": encode(board)}
    return step["id"], encode(value)


def memo_experiment(module, filename, step, original, board):
    """Clear memo, score the board while counting every call of score, and report memo's size."""
    reply = {"id": step["id"]}
    memo = getattr(module, "memo", None)
    if type(memo) is not dict:
        reply.update(ok=False, error="memo", message=f"{filename} has no module-level dict called memo")
        return reply
    memo.clear()
    counter = [0]

    def counted(board):
        counter[0] += 1
        return original(board)

    setattr(module, step["call"], counted)  # the recursion looks the name up, so it is counted too
    signal.setitimer(signal.ITIMER_REAL, step.get("seconds", 10))
    started = time.perf_counter()
    try:
        reply.update(ok=True, value=encode(counted(board)))
    except CallTimeout:
        reply.update(ok=False, error="slow", message=f"took longer than {step.get('seconds', 10)} seconds")
    except BaseException as error:  # noqa: B036
        name, text = describe(error)
        reply.update(ok=False, error=name, message=text, where=where_in(filename, error))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        setattr(module, step["call"], original)
    reply["seconds"] = round(time.perf_counter() - started, 6)
    reply["calls"] = counter[0]
    memo = getattr(module, "memo", None)
    reply["memo_size"] = len(memo) if type(memo) is dict else None
    if not same_squares(board, step["args"][0]):
        reply["changed"] = encode(board)
    return reply


class Replies:
    """Replies go out in batches, one JSON object per line: one write per batch, not one per call.

    A batch is {"ids": [...], "values": [...], "details": [...]}: the calls that simply returned, as two
    parallel lists, and the full replies of the rest. It is sent when BATCH long or FLUSH_SECONDS old,
    so a child that dies loses at most that much of its finished work.
    """

    BATCH = 1024
    FLUSH_SECONDS = 0.02

    def __init__(self, fd):
        self.fd, self.since = fd, time.monotonic()
        self.ids, self.values, self.details = [], [], []

    def add(self, reply):
        if type(reply) is tuple:
            self.ids.append(reply[0])
            self.values.append(reply[1])
        else:
            self.details.append(reply)
        if len(self.ids) + len(self.details) >= self.BATCH or time.monotonic() - self.since >= self.FLUSH_SECONDS:
            self.flush()

    def send(self, message):
        self.flush()
        self._write(json.dumps(message) + "\n")

    def flush(self):
        if self.ids or self.details:
            self._write(json.dumps({"ids": self.ids, "values": self.values, "details": self.details}) + "\n")
            self.ids, self.values, self.details = [], [], []
        self.since = time.monotonic()

    def _write(self, text):
        data = text.encode()
        while data:
            data = data[os.write(self.fd, data) :]


def main():
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    replies = Replies(3)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.setrecursionlimit(job.get("recursion_limit", 3000))
    signal.signal(signal.SIGALRM, on_alarm)
    filename = job["module"] + ".py"

    signal.setitimer(signal.ITIMER_REAL, job.get("import_seconds", 10))
    try:
        module = __import__(job["module"])
    except CallTimeout:
        replies.send({"import": "error", "error": "slow", "message": "importing it took too long"})
        return
    except BaseException as error:  # noqa: B036 - a student's SystemExit at import is an import failure
        name, text = describe(error)
        replies.send({"import": "error", "error": name, "message": text, "where": where_in(filename, error)})
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    replies.send({"import": "ok"})
    for step in job["steps"]:
        replies.add(run_step(module, filename, step))
    replies.send({"done": True})


if __name__ == "__main__":
    main()
