"""Judge one stage of one submission: build the child's job, run it in the sandbox, compare in the trusted process.

Student code shares the child's process, so nothing the child says about itself is taken on trust: its
replies are read under a strict protocol (any break of it is tampering and gives the stage 0), every value
is compared here with exact types against the oracle's answers, and what is measured (the memo
experiment's CPU time) is measured by the sandbox. Every string that comes from the child is capped and
cleaned as it is read, and every text made here is bounded, so one submission cannot stop or bloat a batch.
"""

import functools
import json
import re
import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.board import draw_with_key
from autograder.course.checks import Case, Check, stage_checks
from autograder.course.stages import STAGES, Stage
from autograder.grading import sandbox
from autograder.grading.child import (
    ERROR_CAP,
    MAX_ITEMS,
    MEMO_ENTRIES,
    MESSAGE_CAP,
    NAME_CAP,
    STR_CAP,
    TEXT_CAP,
    VALUE_CAP,
    WHERE_CAP,
    encode,
)

MEMO_POSITIONS = 5478
MEMO_CALLS_LIMIT = 40_000  # a memoized score of the empty board makes about 16,000 calls; plain minimax 549,946
SHOWN_FAILURES = 3  # failing examples shown for a visible check
OUTPUT_CAP = 4000  # characters of one test's feedback
MESSAGE_CAP_STAGE = 1000  # characters of a stage's message
MAX_LINE = 1 << 20  # bytes of one reply line; the child sends at most about a quarter of that

# The memo experiment runs in a child of its own (see child.memo_experiment). After the counted scoring of the
# empty board it scores the empty board AGAIN_EMPTY more times and then every reachable board, all within
# AGAIN_SECONDS of its CPU time: a memo answers them all in milliseconds, a plain search needs 549,946 calls for
# each empty board and over two million for the rest (seconds). Honest code is judged on the answers and the
# call count, which do not depend on the machine. The CPU time of the whole child, read by the parent, must
# also stay under MEMO_CPU_THRESHOLD: that only catches a child that claims a small count while it searched.
# Measured on the 2-core grading machine (RunResult.cpu_seconds of the memo child, rlimits level, 3 runs each):
#   solutions/04_memoization and the ok_ variants (str, tuple, str(board) keys, memo.get):  0.05-0.10 s
#   wrong_finished_not_stored (a memo, few calls):                                          0.05-0.06 s
#   plain minimax (wrong_unused_memo, wrong_never_looked_up), stopped by AGAIN_SECONDS:     1.2-1.7 s
#   the same plain searches made to answer every board again (AGAIN_SECONDS lifted):        4.4-4.7 s
# so honest memo code is 15x under the threshold and a search that really answers is 3x over it.
AGAIN_EMPTY = 3
AGAIN_SECONDS = 0.5
MEMO_CPU_THRESHOLD = 1.5


@dataclass
class TestResult:
    stage: str
    check: str
    function: str
    name: str
    points: int
    score: float
    outcome: str  # passed, failed, error, missing, timeout, crashed, output-limit, not-run, tampered
    visible: bool
    output: str


@dataclass
class StageResult:
    stage: str
    score: float
    max_score: int
    outcome: str  # the worst outcome of its tests, or "missing"/"unreadable" for the file itself
    message: str
    tests: list[TestResult] = field(default_factory=list)
    seconds: float = 0.0  # wall clock, for the record
    cpu_seconds: float = 0.0  # CPU time of all the stage's processes, as the sandbox measured it


OUTCOME_ORDER = ["passed", "not-run", "failed", "error", "missing", "timeout", "output-limit", "crashed", "tampered"]
TAMPERED = "the grader's reply channel was tampered with"


class Cancelled(Exception):
    """The run was stopped from outside (sandbox.stop_all, e.g. Ctrl-C): there is no result to store."""


DEFAULT_SECONDS = 60  # CPU seconds per stage; the slowest honest answers (plain searches in slow Python) need about 10


def stage_limits(seconds: float = DEFAULT_SECONDS) -> sandbox.Limits:
    # CPU time of all the stage's processes decides; the wall clock is only a backstop for code that sleeps or blocks.
    return sandbox.Limits(cpu_seconds=seconds, wall_seconds=sandbox.wall_backstop(seconds))


# Functions whose calls can be slow in honest code (plain searches) get a timer per call, so one slow
# board costs that board only; the cheap ones rely on the stage's limits, since arming a timer costs time.
SEARCHES = frozenset({"count_games", "score", "choose_move", "count_results", "quickest_move"})
CALL_SECONDS = 10  # CPU seconds
MEMO_CPU_CAP = CALL_SECONDS + AGAIN_SECONDS + 1  # the memo child's whole CPU limit: a forger cannot spend more


def memo_limits(seconds: float = DEFAULT_SECONDS) -> sandbox.Limits:
    return stage_limits(min(seconds, MEMO_CPU_CAP))


@functools.cache
def child_source() -> bytes:
    return (Path(__file__).parent / "child.py").read_bytes()


@dataclass(frozen=True)
class Plan:
    """Everything about a stage's checks that is the same for every submission, worked out once."""

    steps: tuple[dict, ...]  # the child's steps, one per distinct call (a board two checks share is asked once)
    step_by_id: dict[int, dict]
    job: bytes  # the child's job as sent on its stdin
    # check id -> [(step id, the child's encodings of every right answer, the case)], for judging at speed
    expected: dict[str, list[tuple[int, frozenset[str], Case]]]
    # check id -> (step ids of its cases with one right form, those forms, [(step id, forms)] of the others):
    # a check whose answers are all right is then decided by comparing two lists and a short loop
    quick: dict[str, tuple[list[int], list[str], list[tuple[int, frozenset[str]]]]]
    forms: frozenset[str]  # every right answer's encoding: values among them need no further reading
    step_ids: frozenset[int]
    memo_job: bytes | None = None  # the memo experiment's job, for the stage that has one
    memo_again: tuple[int | None, ...] = ()  # the right answers of the scoring again, in the job's order
    memo_scores: dict[str, int] = field(default_factory=dict)  # every reachable board -> its score
    memo_counts: Counter = field(default_factory=Counter)  # how many reachable boards score 1, 0 and -1


def encodings(answers) -> frozenset[str]:
    """Every form the child may report a right answer in: a tally may come back as a list or a tuple."""
    forms = set()
    for answer in answers:
        if isinstance(answer, tuple):
            forms |= {encode(list(answer)), encode(answer)}
        else:
            forms.add(encode(answer))
    return frozenset(forms)


@functools.cache
def stage_plan(stage_id: str) -> Plan:
    checks = stage_checks(stage_id)
    module = next(stage.module for stage in STAGES if stage.id == stage_id)
    steps, ids, expected, memo = [], {}, {}, {}
    for check in checks:
        if check.kind in ("memo-size", "memo-speed"):
            memo = _memo_plan(module, check)
            continue
        expected[check.id] = []
        for one in check.cases:
            key = (check.function, one.args)
            if key not in ids:
                ids[key] = len(steps)
                step = {"id": ids[key], "call": check.function, "args": ["".join(one.args[0]), *one.args[1:]]}
                if check.function in SEARCHES:
                    step["seconds"] = CALL_SECONDS
                steps.append(step)
            expected[check.id].append((ids[key], encodings(one.accept), one))
    job = json.dumps({"module": module, "steps": steps}).encode()
    quick = {}
    for check_id, cases in expected.items():
        single = [(step_id, next(iter(right))) for step_id, right, _ in cases if len(right) == 1]
        several = [(step_id, right) for step_id, right, _ in cases if len(right) != 1]
        quick[check_id] = ([step_id for step_id, _ in single], [form for _, form in single], several)
    forms = frozenset(form for cases in expected.values() for _, right, _ in cases for form in right)
    step_ids = frozenset(step["id"] for step in steps)
    return Plan(tuple(steps), {step["id"]: step for step in steps}, job, expected, quick, forms, step_ids, **memo)


def _memo_plan(module: str, check: Check) -> dict:
    from autograder.course.oracle import oracle

    positions = oracle().positions  # every reachable board, the empty board first
    scores = {"".join(board): oracle().score(board) for board in positions}
    board = "".join(check.cases[0].args[0])
    again = [board] * AGAIN_EMPTY + list(scores)
    experiment = {"call": check.function, "board": board, "seconds": CALL_SECONDS}
    experiment.update(again=again, again_seconds=AGAIN_SECONDS)
    return {
        "memo_job": json.dumps({"module": module, "memo": experiment}).encode(),
        "memo_again": tuple(scores[board] for board in again),
        "memo_scores": scores,
        "memo_counts": Counter(scores.values()),
    }


# ---------------------------------------------------------------------------------------------------------------
# Reading the child's replies: a strict protocol, bounded sizes, clean text


class Tampered(Exception):
    """The reply channel broke the protocol: what the child could not have written, something student code did."""


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_BREAKS = re.compile("[\t\n]")


def clean(text: str, cap: int, lines: bool = False) -> str:
    """text cut to cap characters, with control characters, bidi overrides and lone surrogates replaced.

    What is left can be written to any file, database or terminal. With lines, newlines are kept.
    """
    text = str.__str__(text)[:cap] if isinstance(text, str) else "?"
    if not lines:
        text = _BREAKS.sub(" ", text)
    return _UNSAFE.sub("\ufffd", text)


def _short(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


@dataclass
class Replies:
    """What one child reported, read strictly."""

    imported: dict | None = None  # the import line
    values: dict[int, str] = field(default_factory=dict)  # step id -> encoded value, for calls that simply returned
    details: dict[int, dict] = field(default_factory=dict)  # step id -> full reply (errors, changed boards)
    done: bool = False
    memo: dict | None = None  # the memo experiment's report (memo child only)
    again: dict | None = None  # the scoring again (memo child only)
    tampered: str = ""  # how the protocol was broken, or ""

    def reply(self, step_id: int) -> dict | None:
        """One step's reply in the full form, whichever form it came in."""
        if step_id in self.details:
            return self.details[step_id]
        if step_id in self.values:
            return {"id": step_id, "ok": True, "value": self.values[step_id]}
        return None


def parse_replies(raw: bytes, plan: Plan, killed: bool, memo: bool = False) -> Replies:
    """The child's lines in order: the import line, then its replies, then {"done": true}, and nothing else.

    killed: the run was stopped (time, memory, output), so a last line cut short is expected and ignored.
    Any other departure from what child.py writes sets tampered and stops reading.
    """
    replies = Replies()
    try:
        _Reader(plan, replies, memo).read(raw, killed)
    except Tampered as error:
        replies.tampered = clean(str(error), 200)
    return replies


class _Reader:
    def __init__(self, plan: Plan, replies: Replies, memo: bool):
        self.plan, self.replies = plan, replies
        self.state = "import"
        self.after_import = "memo" if memo else "steps"
        self.line = 0

    def read(self, raw: bytes, killed: bool) -> None:
        lines = raw.split(b"\n")
        if lines[-1] and not killed:
            raise Tampered("the last line has no end, though the program was not stopped")
        for self.line, text in enumerate(lines[:-1], start=1):  # the last item is b"" or a line cut short
            if len(text) > MAX_LINE:
                raise Tampered(f"line {self.line} is longer than {MAX_LINE} bytes")
            message = self.load(text)
            getattr(self, "on_" + self.state)(message)
        if not self.replies.values.keys() <= self.plan.step_ids:  # ints only, so a bool or 1.0 cannot pass for 1
            raise Tampered("a call id that is not in the job")

    def fail(self, why: str):
        raise Tampered(f"line {self.line}: {why}")

    def load(self, text: bytes) -> dict:
        try:
            message = json.loads(text.decode("ascii"), object_pairs_hook=_object, parse_constant=_constant)
        except UnicodeDecodeError:
            self.fail("not ASCII, which the grader's child always writes")
        except (ValueError, RecursionError):
            self.fail("not valid JSON")
        except Tampered as error:
            self.fail(str(error))
        if type(message) is not dict:
            self.fail("not a JSON object")
        return message

    # One method per state: what may come next.

    def on_import(self, message: dict) -> None:
        if message == {"import": "ok"}:
            self.replies.imported, self.state = message, self.after_import
        elif message.get("import") == "error":
            self.replies.imported, self.state = self.failure(message, "import"), "end"
        else:
            self.fail("the first line is not the import line")

    def on_steps(self, message: dict) -> None:
        if message.keys() == {"ids", "values", "details"}:
            self.batch(message["ids"], message["values"], message["details"])
        elif message == {"done": True} and type(message["done"]) is bool:
            answered = len(self.replies.values) + len(self.replies.details)
            if answered != len(self.plan.steps):
                self.fail(f"done after {answered} of {len(self.plan.steps)} calls were answered")
            self.replies.done, self.state = True, "end"
        else:
            self.fail("neither a batch of replies nor done")

    def on_memo(self, message: dict) -> None:
        if message.get("memo") is not True:
            self.fail("not the memo experiment's report")
        if message.get("ok") is True:
            self.expect(message, {"memo", "ok", "value", "calls", "size", "boards", "values"})
            self.value(message["value"])
            calls, size, boards, values = message["calls"], message["size"], message["boards"], message["values"]
            if type(calls) is not int or not 0 <= calls < 10**15 or type(size) is not int or not 0 <= size < 10**12:
                self.fail("calls or size is not a count")
            if type(boards) is not list or type(values) is not list or len(boards) != len(values):
                self.fail("boards and values are not two lists of one length")
            if len(boards) != min(size, MEMO_ENTRIES):
                self.fail("the number of memo entries sent does not match memo's size")
            if not set(map(type, values)) <= {int, type(None)}:
                self.fail("a memo entry of the wrong type")
            try:
                unknown = set(boards) - self.plan.memo_scores.keys()  # reachable boards need no further look
            except TypeError:
                self.fail("a memo entry of the wrong type")
            if any(
                board is not None and (type(board) is not str or len(board) != 9 or board.strip("XO "))
                for board in unknown
            ):
                self.fail("a memo key that is not a board")
            if not set(values) <= {-1, 0, 1, None}:
                self.fail("a memo value that is not a score")
            self.replies.memo, self.state = message, "again"
        elif message.get("ok") is False:
            self.replies.memo, self.state = self.failure(message, "memo"), "done"
        else:
            self.fail("the memo report has no ok")

    def on_again(self, message: dict) -> None:
        self.expect(message, {"again", "complete"})
        answers, complete = message["again"], message["complete"]
        if type(answers) is not list or type(complete) is not bool:
            self.fail("the scoring again is not a list and a flag")
        expected = len(self.plan.memo_again)
        if len(answers) > expected or (complete and len(answers) != expected):
            self.fail("the scoring again has the wrong number of answers")
        if not set(map(type, answers)) <= {int, type(None)} or not set(answers) <= {-1, 0, 1, None}:
            self.fail("an answer of the scoring again that is not a score")
        self.replies.again, self.state = message, "done"

    def on_done(self, message: dict) -> None:
        if message != {"done": True} or type(message["done"]) is not bool:
            self.fail("expected done")
        self.replies.done, self.state = True, "end"

    def on_end(self, message: dict) -> None:
        self.fail("a line after the last one the child writes")

    # The parts of a line

    def expect(self, message: dict, keys: set[str]) -> None:
        if message.keys() != keys:
            self.fail(f"unexpected fields {sorted(message.keys() ^ keys)!r}"[:120])

    def failure(self, message: dict, kind: str) -> dict:
        """An error reply ({kind, ok?, error, message, where?}), its text capped and cleaned."""
        required = {kind, "error", "message"} | ({"ok"} if kind != "import" else set())
        if kind == "id":
            required = {"id", "ok", "error", "message"}
        if not required <= message.keys() <= required | {"where"}:
            self.fail("an error reply with the wrong fields")
        texts = {name: message[name] for name in ("error", "message", "where") if name in message}
        if any(type(text) is not str for text in texts.values()):
            self.fail("an error reply whose text is not a string")
        caps = {"error": ERROR_CAP, "message": MESSAGE_CAP, "where": WHERE_CAP}
        return {**message, **{name: clean(text, caps[name]) for name, text in texts.items()}}

    def value(self, encoded) -> None:
        if type(encoded) is str and encoded in self.plan.forms:
            return  # a right answer: one of our own encodings
        try:
            decode(encoded)
        except Tampered as error:
            self.fail(str(error))

    def batch(self, ids, values, details) -> None:
        plan = self.plan
        if type(ids) is not list or type(values) is not list or type(details) is not list or len(ids) != len(values):
            self.fail("a batch that is not three lists, ids and values of one length")
        if not ids and not details:
            self.fail("an empty batch")
        if ids:
            if set(map(type, ids)) != {int}:
                self.fail("a call id that is not an int")
            try:
                unknown = set(values) - plan.forms  # the right answers are known to be well-formed
            except TypeError:  # a list or an object: not hashable, so certainly not an encoding
                self.fail("a value that is not an encoding")
            for encoded in unknown:
                self.value(encoded)
            known = self.replies.values
            before = len(known)
            known.update(zip(ids, values, strict=True))
            if len(known) != before + len(ids):  # an id given twice, in this batch or an earlier one
                self.fail("a call answered twice")
        for detail in details:
            if type(detail) is not dict:
                self.fail("a reply that is not an object")
            step_id = detail.get("id")
            if type(step_id) is not int or not 0 <= step_id < len(plan.steps):
                self.fail("a call id that is not in the job")
            if step_id in self.replies.values or step_id in self.replies.details:
                self.fail("a call answered twice")
            if detail.get("ok") is True:
                self.expect(detail, {"id", "ok", "value", "changed"})
                self.value(detail["value"])
                self.value(detail["changed"])
            elif detail.get("ok") is False:
                detail = self.failure(detail, "id")
            else:
                self.fail("a reply without ok")
            self.replies.details[step_id] = detail


def _object(pairs: list) -> dict:
    message = dict(pairs)
    if len(message) != len(pairs):
        raise Tampered("a field given twice")
    return message


def _constant(name: str):
    raise Tampered(f"{name} is not JSON the child writes")


_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")


def decode(encoded, depth: int = 0):
    """The Python value of the child's exact-type encoding (see child.encode), or Tampered when it is not one.

    Values of types the contract never allows come back as an Other that only describes them.
    """
    if type(encoded) is not str or not encoded or len(encoded) > VALUE_CAP:
        raise Tampered("a value that is not an encoding the child writes")
    tag, body = encoded[0], encoded[1:]
    if tag == "n" and not body:
        return None
    if tag == "b" and body in ("0", "1"):
        return body == "1"
    if tag == "i" and _INT.fullmatch(body) and body != "-0":
        return int(body)
    if tag == "s" and len(body) <= STR_CAP:
        return body
    if tag == "S" and len(body) == STR_CAP:
        return Other(f"a str of more than {STR_CAP} characters, starting {clean(repr(body[:20]), 30)}")
    if tag == "f" and len(body) <= 32:
        try:
            if repr(float(body)) == body:
                return Other(f"the float {body}")
        except ValueError:
            pass
    if tag in ("l", "t") and depth < 2:
        try:
            items = json.loads(body, parse_constant=_constant)
        except (ValueError, RecursionError):
            items = None
        more = type(items) is list and len(items) == MAX_ITEMS + 1 and items[-1] == "..."  # the child's mark
        if type(items) is list and (len(items) <= MAX_ITEMS or more):
            values = [decode(item, depth + 1) for item in items[: MAX_ITEMS if more else None]]
            values += [Other("more items")] * more
            return values if tag == "l" else tuple(values)
    if tag == "o" and ":" in body:
        name, text = body.split(":", 1)
        if len(name) <= NAME_CAP and len(text) <= TEXT_CAP:
            return Other(f"an object of type {clean(name, NAME_CAP)}")
    raise Tampered(f"a value that is not an encoding the child writes ({clean(encoded, 30)!r})")


@dataclass(frozen=True)
class Other:
    """A returned value of a type the contract never allows; only its (clean, short) description travels."""

    description: str

    def __repr__(self):
        return f"<{self.description}>"


def shown(value) -> str:
    if isinstance(value, Other):
        return value.description
    if type(value) is bool:
        return f"{value!r} (a bool, not a number)"
    return _short(repr(value), 200)  # repr escapes control characters and lone surrogates


# ---------------------------------------------------------------------------------------------------------------
# Judging


def type_problem(function: str, value, board) -> str | None:
    """Why value cannot be an answer of function at all (wrong type, off the board, taken square), or None."""
    if function in ("winner", "to_move"):
        allowed = ("X", "O", None) if function == "winner" else ("X", "O")
        if not (value is None or type(value) is str) or value not in allowed:
            return f"returned {shown(value)}, but {function} must return " + " or ".join(map(repr, allowed))
        return None
    if function == "count_results":
        if type(value) not in (list, tuple) or len(value) != 3 or any(type(v) is not int for v in value):
            return (
                f"returned {shown(value)}, but count_results must return a list of three ints [x_wins, o_wins, draws]"
            )
        return None
    if type(value) is not int:
        return f"returned {shown(value)}, but {function} must return an int"
    if function in ("choose_move", "quickest_move", "winning_square"):
        if function == "winning_square" and value == -1:
            return None
        if not 0 <= value <= 8:
            return f"returned {value}, which is not a square (squares are 0 to 8)"
        if board[value] != " ":
            return f"returned {value}, but square {value} is already taken"
    return None


def call_text(function: str, args: tuple) -> str:
    extra = "".join(f", {arg!r}" for arg in args[1:])
    return f"{function}(board{extra})"


def judge_calls(check: Check, plan: Plan, replies: Replies, fate: tuple[str, str]) -> TestResult:
    """Compare every case of a call check; the first problems found make the feedback."""
    values = replies.values
    step_ids, forms, several = plan.quick[check.id]
    if [values.get(step_id) for step_id in step_ids] == forms and all(
        values.get(step_id) in right for step_id, right in several
    ):
        return _result(check, "passed", 0, [])  # the common case, decided without decoding anything
    wrong, problems, outcome = 0, [], "passed"
    for step_id, right, one in plan.expected[check.id]:
        value = values.get(step_id)
        if value in right:
            continue  # the common case, decided without decoding anything
        reply = replies.reply(step_id)
        board = one.args[0]
        if reply is None:
            outcome, wrong = _worse(outcome, fate[0]), wrong + 1
            problems.append((board, one, f"was never answered: {fate[1]}"))
            continue
        if not reply["ok"]:
            outcome, wrong = _worse(outcome, "missing" if reply["error"] == "missing" else "error"), wrong + 1
            problems.append((board, one, _error_text(check.function, reply)))
            continue
        value = decode(reply["value"])
        why = type_problem(check.function, value, board)
        if why is None and _hashable(value) in one.accept:
            continue
        outcome, wrong = _worse(outcome, "failed"), wrong + 1
        problems.append((board, one, why or f"returned {shown(value)}", value))
    return _result(check, outcome, wrong, problems)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def _worse(a: str, b: str) -> str:
    return max(a, b, key=OUTCOME_ORDER.index)


def fate_of(run: sandbox.RunResult, limits: sandbox.Limits, seconds: float, what: str = "the stage") -> tuple[str, str]:
    """(outcome, what happened) for the calls a child never answered, from how its run ended."""
    # The sandbox ends a run at its CPU limit itself; SIGXCPU is the per-process limit kept as a backstop.
    if run.status == "timeout" or (run.status == "killed" and run.returncode == -signal.SIGXCPU):
        return "timeout", f"{what} ran out of its CPU time limit of {seconds:g} s"
    if run.status == "waiting":
        return "timeout", f"the program was waiting (sleeping or blocked), not computing, for {limits.wall_seconds:g} s"
    if run.status == "output-limit":
        return "output-limit", "the program wrote too much and was stopped"
    if run.status == "killed":
        return "crashed", f"the program was stopped: {clean(run.detail, 200)}"
    if run.status == "sandbox-error":
        return "crashed", f"the grader could not run the program ({clean(run.detail, 200)})"
    return "crashed", "the program stopped before this call"


def _error_text(function: str, reply: dict) -> str:
    error, message = reply["error"], reply["message"]
    if error == "NotImplementedError":
        return f"{function} is not written yet (it raises NotImplementedError)"
    if error == "missing":
        return message
    if error == "slow":
        return f"{function} {message}"
    where = f" at {reply['where']}" if "where" in reply else ""
    return f"{function} raised {error}{where}: {message}" if message else f"{function} raised {error}{where}"


def _result(check: Check, outcome: str, wrong: int, problems: list) -> TestResult:
    passed = outcome == "passed"
    texts = {problem[2] for problem in problems}
    if (
        len(texts) == 1
        and wrong == len(check.cases)
        and outcome in ("error", "missing")
        and "raised" not in next(iter(texts))
    ):
        # Not written yet, or not there at all: one line says it all, no board needed.
        problems = []
        lines = [next(iter(texts)) + "."]
    else:
        lines = [] if passed else [_summary(check, wrong)]
    if not passed:
        for problem in problems[: SHOWN_FAILURES if check.visible else 1]:
            board, one, text = problem[0], problem[1], problem[2]
            drawing = draw_with_key(board)
            lines.append(f"On this board ({call_text(check.function, one.args)}):\n\n```\n{drawing}\n```\n")
            lines.append(f"your function {text}" if text.startswith("returned") else text)
            if check.visible and len(problem) > 3:
                answers = sorted(one.accept, key=repr)
                lines.append(f"expected {answers[0]!r}" if len(answers) == 1 else f"expected one of {answers!r}")
            lines.append("")
        if check.hint:
            lines.append(f"Try this: {check.hint}")
    return _test(check, outcome, "\n".join(lines).strip())


def _summary(check: Check, wrong: int) -> str:
    total = len(check.cases)
    if total == 1:
        return f"{check.function} did not give the right answer here."
    return f"{check.function} was not right on {wrong} of {total} boards."


def judge_memo(
    check: Check, plan: Plan, replies: Replies | None, run, fate: tuple[str, str], filename: str
) -> TestResult:
    """The memo experiment, from its own child: memo's contents, the call count, the answers and the CPU time."""
    imported = replies.imported if replies else None
    reply = replies.memo if replies else None
    problems, outcome = [], "passed"
    if imported is not None and imported["import"] != "ok":
        outcome = "error"
        problems.append(f"In the memo experiment, {_import_text(filename, imported)}.")
    elif reply is None:
        outcome = fate[0]
        problems.append(f"The memo experiment was never answered: {fate[1]}.")
    elif not reply["ok"]:
        outcome = "missing" if reply["error"] in ("missing", "memo") else "error"
        problems.append(_error_text(check.function, reply) + ".")
    else:
        value = decode(reply["value"])
        if type(value) is not int or value not in check.cases[0].accept:
            problems.append(f"score of the empty board returned {shown(value)}, which is not its score.")
        elif check.kind == "memo-size":
            problems += _memo_size_problems(plan, reply, replies.again)
        else:
            problems += _memo_speed_problems(plan, reply, replies.again, run, fate)
        outcome = "failed" if problems else "passed"
    passed = outcome == "passed"
    text = "\n".join(problems + ([f"Try this: {check.hint}"] if not passed and check.hint else []))
    return _test(check, outcome, text)


def _again_problem(plan: Plan, again: dict | None, fate: tuple[str, str] | None = None) -> str:
    """Why the scoring again (the empty board a few times, then every reachable board) was not right, or ""."""
    if again is not None and again["complete"] and tuple(again["again"]) == plan.memo_again:
        return ""
    if again is None:
        return f"the program stopped first ({fate[1]})" if fate else "the program stopped first"
    wrong = sum(answer != right for answer, right in zip(again["again"], plan.memo_again, strict=False))
    if wrong:
        return f"{wrong:,} of its answers were not the boards' scores"
    return f"it did not answer them all within {AGAIN_SECONDS:g} CPU seconds (or it raised an error)"


def _memo_size_problems(plan: Plan, reply: dict, again: dict | None) -> list[str]:
    size, boards, values = reply["size"], reply["boards"], reply["values"]
    if size != MEMO_POSITIONS:
        return [
            f"After memo.clear() and score of the empty board, memo held {size:,} boards; "
            f"every reachable position ({MEMO_POSITIONS:,}) should be in it, each once."
        ]
    scores = plan.memo_scores
    if len(set(boards)) == MEMO_POSITIONS and dict(zip(boards, values, strict=True)) == scores:
        return []  # keyed by the boards themselves, each with its score
    if Counter(values) != plan.memo_counts:
        return [
            f"After memo.clear() and score of the empty board, memo held {MEMO_POSITIONS:,} entries, but their values "
            f"are not the scores of the {MEMO_POSITIONS:,} reachable boards: each value should be its board's score "
            "(1, 0 or -1, an int)."
        ]
    why = _again_problem(plan, again)
    if not why:
        return []  # keyed some other way, and the memo answers every board right
    if all(board is not None for board in boards):
        wrong = sum(scores.get(board) != value for board, value in zip(boards, values, strict=True))
        return [f"memo held {MEMO_POSITIONS:,} boards, but {wrong:,} of them were not stored with their own score."]
    return [
        f"memo held {MEMO_POSITIONS:,} entries, but its keys are not the boards themselves (''.join(board) or "
        "tuple(board)), so the grader scored every reachable board again to check them, and " + why + "."
    ]


def _memo_speed_problems(plan: Plan, reply: dict, again: dict | None, run, fate) -> list[str]:
    calls = reply["calls"]
    if calls > MEMO_CALLS_LIMIT:
        return [
            f"Scoring the empty board from an empty memo called score {calls:,} times; plain minimax makes "
            f"549,946 calls, and with the memo it should need under {MEMO_CALLS_LIMIT:,}."
        ]
    why = _again_problem(plan, again, fate)
    if why:
        return [
            "After the empty board was scored, score was asked about it again and then about every reachable "
            f"board, which a memo answers at once; {why}."
        ]
    if run is not None and run.cpu_seconds >= MEMO_CPU_THRESHOLD:
        return [
            f"The memo experiment used {run.cpu_seconds:.2f} CPU seconds; with a memo it needs a small fraction "
            f"of a second (the limit is {MEMO_CPU_THRESHOLD:g} s)."
        ]
    return []


def judge_unchanged(check: Check, plan: Plan, replies: Replies, answered: bool) -> TestResult:
    """Passes only when some other check of the stage passed and no call changed its board.

    Requiring a passed check keeps this point out of reach of code that returns without doing anything.
    """
    changed = [
        (plan.step_by_id[step_id], reply) for step_id, reply in sorted(replies.details.items()) if "changed" in reply
    ]
    outcome, text = "passed", ""
    if changed:
        step, reply = changed[0]
        outcome = "failed"
        text = (
            f"{len(changed)} calls changed the board they were given. {step['call']} was given:\n\n```\n"
            f"{draw_with_key(step['args'][0])}\n```\n\nand left it as:\n\n```\n"
            f"{draw_with_key(decode(reply['changed']))}\n```"
        )
    elif not answered:
        outcome = "not-run"
        text = "No function of this stage gave right answers yet, so this is not counted yet."
    if outcome != "passed" and check.hint:
        text += f"\n\nTry this: {check.hint}"
    return _test(check, outcome, text)


def _test(check: Check, outcome: str, output: str) -> TestResult:
    """A check's result: all its points when it passed, none otherwise. Its text is bounded and clean."""
    score = check.points if outcome == "passed" else 0
    output = clean(_short(output, OUTPUT_CAP), OUTPUT_CAP, lines=True)
    return TestResult("", check.id, check.function, check.title, check.points, score, outcome, check.visible, output)


def fail_all(stage: Stage, outcome: str, message: str) -> StageResult:
    """Every check of the stage failed for one reason (not submitted, unreadable, did not import, tampered)."""
    message = clean(_short(message, MESSAGE_CAP_STAGE), MESSAGE_CAP_STAGE)
    tests = [_test(check, outcome, message) for check in stage_checks(stage.id)]
    for test in tests:
        test.stage = stage.id
    return StageResult(stage.id, 0, stage.points, outcome, message, tests)


def _import_text(filename: str, imported: dict) -> str:
    if imported["error"] == "slow":
        return f"{filename} could not be imported: {imported['message']}"
    where = f" at {imported['where']}" if "where" in imported else ""
    return f"{filename} could not be imported: {imported['error']}{where}: {imported['message']}"


def _killed(run: sandbox.RunResult) -> bool:
    return run.status != "exited"


def judge_stage(
    stage: Stage,
    run: sandbox.RunResult,
    limits: sandbox.Limits,
    memo_run: sandbox.RunResult | None = None,
    memo_limits: sandbox.Limits | None = None,
    seconds: float = DEFAULT_SECONDS,
) -> StageResult:
    """Judge what the stage's child (and the memo child, for the stage that has one) reported."""
    if run.status == "cancelled" or (memo_run is not None and memo_run.status == "cancelled"):
        raise Cancelled(stage.id)
    checks = stage_checks(stage.id)
    plan = stage_plan(stage.id)
    elapsed = run.wall_seconds + (memo_run.wall_seconds if memo_run is not None else 0.0)
    cpu = run.cpu_seconds + (memo_run.cpu_seconds if memo_run is not None else 0.0)
    replies = parse_replies(run.reply, plan, _killed(run))
    memo_replies = parse_replies(memo_run.reply, plan, _killed(memo_run), memo=True) if memo_run else None
    tampered = replies.tampered
    if memo_replies is not None and memo_replies.tampered:
        tampered = tampered or f"in the memo experiment's child, {memo_replies.tampered}"
    if tampered:
        result = fail_all(stage, "tampered", f"{TAMPERED}: {tampered}")
        result.seconds, result.cpu_seconds = elapsed, cpu
        return result
    imported = replies.imported
    fate = fate_of(run, limits, seconds)
    if imported is None or imported["import"] != "ok":
        if imported is not None:
            message = _import_text(stage.filename, imported)
        elif run.status == "exited":
            message = f"{stage.filename} ended the program (exit code {run.returncode}) while it was imported"
        else:
            message = f"{stage.filename} stopped before it could be tested: {fate[1]}"
        result = fail_all(stage, "error" if imported is not None else fate[0], message)
        result.seconds, result.cpu_seconds = elapsed, cpu
        return result
    memo_fate = fate
    if memo_run is not None:
        memo_fate = fate_of(memo_run, memo_limits, memo_limits.cpu_seconds, "the memo experiment")
    tests = []
    for check in checks:
        if check.kind in ("memo-size", "memo-speed"):
            tests.append(judge_memo(check, plan, memo_replies, memo_run, memo_fate, stage.filename))
        elif check.kind == "calls":
            tests.append(judge_calls(check, plan, replies, fate))
    answered = any(test.outcome == "passed" for test in tests)
    for check in checks:
        if check.kind == "unchanged":
            tests.append(judge_unchanged(check, plan, replies, answered))
    order = {check.id: index for index, check in enumerate(checks)}
    tests.sort(key=lambda test: order[test.check])
    for test in tests:
        test.stage = stage.id
    score = sum(t.score for t in tests)
    outcome = max((t.outcome for t in tests), key=OUTCOME_ORDER.index)
    message = ""
    if not replies.done:
        message = fate[1] if run.status != "exited" else "the program ended before every call was made"
    return StageResult(stage.id, score, stage.points, outcome, message, tests, elapsed, cpu)


def _source_bytes(source: str) -> bytes:
    """The module's bytes: undecodable bytes kept as they were read, any other lone surrogate written as is."""
    try:
        return source.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return source.encode("utf-8", "surrogatepass")  # not valid UTF-8: the child reports a SyntaxError


def grade_stage(
    stage: Stage, source: str, isolation: "sandbox.Isolation | None" = None, seconds: float = DEFAULT_SECONDS
) -> StageResult:
    """Run the student's module for one stage in a sandboxed child (two for the memo stage) and judge every check.

    Raises Cancelled when the sandbox was stopped from outside: such a stage has no result.
    """
    plan = stage_plan(stage.id)
    files = {"child.py": child_source(), stage.filename: _source_bytes(source)}
    memo_run = memo_limit = None
    if plan.memo_job is not None:
        # First, within the stage's time: the memo experiment, in a child whose CPU time only the sandbox measures.
        memo_limit = memo_limits(seconds)
        memo_run = sandbox.run(files, "child.py", plan.memo_job, memo_limit, isolation)
        if memo_run.status == "cancelled":
            raise Cancelled(stage.id)
    limits = stage_limits(max(seconds - (memo_run.cpu_seconds if memo_run else 0.0), 0.01))
    run = sandbox.run(files, "child.py", plan.job, limits, isolation)
    return judge_stage(stage, run, limits, memo_run, memo_limit, seconds)
