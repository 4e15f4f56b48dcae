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
    """A JSON form of value that keeps its exact type: bool is not int, a str subclass is not str."""
    kind = type(value)
    if value is None:
        return ["none"]
    if kind is bool or kind is int or kind is str:
        return [kind.__name__, value]
    if kind is float:
        return ["float", repr(value)]
    if (kind is list or kind is tuple) and depth < 2:
        return [kind.__name__, [encode(item, depth + 1) for item in value[:MAX_ITEMS]], len(value)]
    try:
        text = object.__repr__(value)  # never the object's own __repr__, which is student code
    except Exception:
        text = "?"
    return ["other", kind.__name__ if isinstance(kind.__name__, str) else "?", text[:80]]


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


def run_step(module, filename, step):
    """One step: a call with a copy of a board, or the memo experiment of the memoization stage."""
    reply = {"id": step["id"]}
    function = getattr(module, step["call"], None)
    if not callable(function):
        reply.update(ok=False, error="missing", message=f"{filename} has no function {step['call']}")
        return reply
    board = list(step["args"][0])
    args = [board] + list(step["args"][1:])
    counter, original = None, function
    if step.get("memo"):
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
        function = counted
    signal.setitimer(signal.ITIMER_REAL, step.get("seconds", 10))
    started = time.perf_counter()
    try:
        value = function(*args)
        reply.update(ok=True, value=encode(value))
    except CallTimeout:
        reply.update(ok=False, error="slow", message=f"took longer than {step.get('seconds', 10)} seconds")
    except BaseException as error:  # noqa: B036 - SystemExit and KeyboardInterrupt are student errors here
        name, text = describe(error)
        reply.update(ok=False, error=name, message=text, where=where_in(filename, error))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    reply["seconds"] = round(time.perf_counter() - started, 6)
    if board != list(step["args"][0]):
        reply["changed"] = encode(board)
    if counter is not None:
        setattr(module, step["call"], original)
        reply["calls"] = counter[0]
        memo = getattr(module, "memo", None)
        reply["memo_size"] = len(memo) if type(memo) is dict else None
    return reply


def main():
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    reply_channel = os.fdopen(3, "w", buffering=1)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.setrecursionlimit(job.get("recursion_limit", 3000))
    signal.signal(signal.SIGALRM, on_alarm)
    filename = job["module"] + ".py"

    def send(message):
        reply_channel.write(json.dumps(message) + "\n")

    signal.setitimer(signal.ITIMER_REAL, job.get("import_seconds", 10))
    try:
        module = __import__(job["module"])
    except CallTimeout:
        send({"import": "error", "error": "slow", "message": "importing it took too long"})
        return
    except BaseException as error:  # noqa: B036 - a student's SystemExit at import is an import failure
        name, text = describe(error)
        send({"import": "error", "error": name, "message": text, "where": where_in(filename, error)})
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    send({"import": "ok"})
    for step in job["steps"]:
        send(run_step(module, filename, step))
    send({"done": True})


if __name__ == "__main__":
    main()
