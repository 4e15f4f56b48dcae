"""Reading the child's replies: a strict protocol, bounded sizes, clean text.

Student code shares the child's process, so the child's lines are read as what any code could have written:
the import line, then batches of replies (or, from the memo experiment's child, its report and the scoring
again), then {"done": true}, and nothing else. Any departure from what child.py writes is Tampered. Every
string is capped and cleaned as it is read, and values come back from the child's exact-type encoding.

The channel is read as it arrives (ReplyReader, fed by the sandbox's supervisor): one line at most is held,
and reading stops (tampered) at the first line longer than the child ever writes, id not in the plan, id
answered twice or more answers than the plan has calls, so what the grader holds is bounded by the plan,
not by what the child sends. The run ends as soon as the last line the child writes has arrived.

A line of replies read in full once is remembered by its bytes (_known_lines), so the same line from a later child,
as every right submission of a class writes, is not read again: only what depends on the lines before it is.
"""

import json
import re
import threading
from dataclasses import dataclass, field

from autograder.grading.child import (
    ERROR_CAP,
    LINE_BUDGET,
    MAX_ITEMS,
    MEMO_ENTRIES,
    MESSAGE_CAP,
    NAME_CAP,
    STR_CAP,
    TEXT_CAP,
    VALUE_CAP,
    WHERE_CAP,
)
from autograder.grading.plan import Plan
from autograder.grading.sandbox.outbox import Outbox

# The largest reply the child writes for one call: an error (its three texts) or a changed board (two values),
# every character at most 12 bytes in JSON (a surrogate pair), plus the field names.
_ONE_REPLY = 12 * max(ERROR_CAP + MESSAGE_CAP + WHERE_CAP, 2 * VALUE_CAP) + 200
# Bytes of one reply line: the child sends a batch before it grows past LINE_BUDGET, so no line it writes is
# longer than that plus one reply (the memo report, at most MEMO_ENTRIES short entries, is far smaller).
MAX_LINE = LINE_BUDGET + 2 * _ONE_REPLY


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


def parse_replies(
    raw: bytes, plan: Plan, killed: bool, memo: bool = False, ids: frozenset[int] | None = None
) -> Replies:
    """The child's lines in order: the import line, then its replies, then {"done": true}, and nothing else.

    killed: the run was stopped (time, memory, output), so a last line cut short is expected and ignored.
    ids: the steps of the child's job (plan.visible_ids or plan.hidden_ids; all of the plan's by default): a
    reply to any other step is tampering. Any other departure from what child.py writes sets tampered and stops
    reading. What follows the last line the child writes is not read (the sandbox stops the run there).
    """
    reader = ReplyReader(plan, memo, ids)
    reader.feed(raw)
    return reader.finish(killed)


class ReplyReader:
    """The reply channel read as it arrives: feed() each chunk, finish() once the run is over.

    At most one line is held (MAX_LINE), and what is kept grows only with answers to calls of the plan.
    """

    def __init__(self, plan: Plan, memo: bool = False, ids: frozenset[int] | None = None, imported: bool = False):
        """imported: the child imported the module before this job (a stage's hidden job): no import line comes."""
        self.replies = Replies()
        self.reader = _Reader(plan, self.replies, memo, plan.step_ids if ids is None else ids)
        if imported:
            self.reader.state = "steps"
        self.pending = bytearray()  # the start of a line whose end has not arrived yet
        self.over = False  # the last line arrived, or the protocol was broken: nothing more is read
        self.rest = b""  # what came after the last line in its chunk (a stage's child: its next job's replies)

    def feed(self, data: bytes) -> bool:
        """Read a chunk; True once nothing more is read (the child wrote its last line, or broke the protocol)."""
        if self.over:
            return True
        try:
            start = 0
            while (end := data.find(b"\n", start)) >= 0:
                self._room(end - start)
                text, start = bytes(self.pending) + data[start:end], end + 1
                self.pending.clear()
                self.reader.take(text)
                if self.reader.state == "end":
                    self.over, self.rest = True, data[start:]  # not this job's: anything after its last line
                    return True
            self._room(len(data) - start)
            self.pending += data[start:]
        except Tampered as error:
            self.replies.tampered, self.over = clean(str(error), 200), True
        return self.over

    def _room(self, more: int) -> None:
        if len(self.pending) + more > MAX_LINE:
            self.pending.clear()
            raise Tampered(f"line {self.reader.line + 1} is longer than {MAX_LINE} bytes")

    def finish(self, killed: bool) -> Replies:
        """What was read. killed: the run was stopped, so a last line cut short is expected and ignored."""
        if not self.over and self.pending and not killed:
            self.replies.tampered = "the last line has no end, though the program was not stopped"
        self.over, self.pending = True, bytearray()
        return self.replies


class StageReader:
    """A stage's one child read as it answers: the replies to its visible job up to their last line, and only
    then the hidden job handed over (on the outbox, sandbox.MORE_FD) and its replies read.

    So the visible replies, whose texts the student is shown, were all written before the child could know a
    hidden board. A visible job that did not end well (an import that failed, a broken protocol) gets no hidden
    job: the run is over.
    """

    def __init__(self, plan: Plan):
        self.plan, self.outbox = plan, Outbox()
        self.visible = ReplyReader(plan, ids=plan.visible_ids)
        self.hidden: ReplyReader | None = None  # made as the hidden job is handed over

    def feed(self, data: bytes) -> bool:
        if self.hidden is None:
            if not self.visible.feed(data):
                return False
            replies = self.visible.replies
            if not (replies.done and not replies.tampered and self.plan.hidden_ids):
                return True
            self.hidden = ReplyReader(self.plan, ids=self.plan.hidden_ids, imported=True)
            self.outbox.send(self.plan.hidden_job)
            data = self.visible.rest
        return self.hidden.feed(data) if data else False

    def finish(self, killed: bool) -> "tuple[Replies, Replies | None]":
        """The visible job's replies, and the hidden job's (None when it was never handed over)."""
        return self.visible.finish(killed), self.hidden.finish(killed) if self.hidden is not None else None


def parse_stage_replies(raw: bytes, plan: Plan, killed: bool) -> "tuple[Replies, Replies | None]":
    """A stage's child's reply bytes read as StageReader reads them as they arrive."""
    reader = StageReader(plan)
    reader.feed(raw)
    return reader.finish(killed)


class _Reader:
    def __init__(self, plan: Plan, replies: Replies, memo: bool, ids: frozenset[int]):
        self.plan, self.replies, self.ids = plan, replies, ids
        self.state = "import"
        self.after_import = "experiment" if memo else "steps"
        self.line = 0
        self.text = b""  # the line being read

    def take(self, text: bytes) -> None:
        """One whole line (without its newline)."""
        self.line += 1
        if self.state == "steps" and (answers := _known_lines.get((self.ids, text))) is not None:
            self.answered(answers)  # these very bytes were read in full before (_known_lines)
            return
        self.text = text
        message = self.load(text)
        getattr(self, "on_" + self.state)(message)

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
            if answered != len(self.ids):
                self.fail(f"done after {answered} of {len(self.ids)} calls were answered")
            self.replies.done, self.state = True, "end"
        else:
            self.fail("neither a batch of replies nor done")

    def on_experiment(self, message: dict) -> None:
        if message.get("experiment") is not True:
            self.fail("not the memo experiment's report")
        if message.get("ok") is True:
            self.expect(message, {"experiment", "ok", "value", "calls", "size", "boards", "values"})
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
            self.replies.memo, self.state = self.failure(message, "experiment"), "done"
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
            if set(map(type, ids)) != {int}:  # ints only, so a bool or 1.0 cannot pass for 1
                self.fail("a call id that is not an int")
            if len(ids) + len(self.replies.values) + len(self.replies.details) > len(self.ids):
                self.fail("more answers than the job has calls")
            if not self.ids.issuperset(ids):
                self.fail("a call id that is not in the job")
            try:
                unknown = set(values) - plan.forms  # the right answers are known to be well-formed
            except TypeError:  # a list or an object: not hashable, so certainly not an encoding
                self.fail("a value that is not an encoding")
            for encoded in unknown:
                self.value(encoded)
            answers = dict(zip(ids, values, strict=True))
            if len(answers) != len(ids):
                self.fail("a call answered twice")
            self.answered(answers)
            if not unknown and not details:
                _remember(self.ids, self.text, answers)
        for detail in details:
            if type(detail) is not dict:
                self.fail("a reply that is not an object")
            step_id = detail.get("id")
            if type(step_id) is not int or step_id not in self.ids:
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

    def answered(self, answers: dict[int, str]) -> None:
        """A batch's answers (step id -> encoding), each already known to be well formed and a call of this job."""
        known, details = self.replies.values, self.replies.details
        before = len(known)
        if before + len(details) + len(answers) > len(self.ids):
            self.fail("more answers than the job has calls")
        known.update(answers)
        if len(known) != before + len(answers) or not details.keys().isdisjoint(answers):
            self.fail("a call answered twice")


# Lines of replies read in full before, each of whose values is one of the plan's own encodings (a right answer
# to some call) and which had no errors: (the job's step ids, the line's bytes) -> its answers. A class hands in
# mostly right code, whose children write the same lines byte for byte, and the same bytes always read the same:
# such a line needs only the checks that depend on what came before it in its own run (answered()). Bounded in
# memory (the right lines of the whole course take about 16 MB): when full, it starts over.
KNOWN_LINES_MEMORY = 32 << 20
_known_lines: dict[tuple[frozenset[int], bytes], dict[int, str]] = {}
_known_memory = 0
_known_lock = threading.Lock()  # the grading threads share it


def known_line_memory(text: bytes, answers: dict[int, str]) -> int:
    """About what keeping a line takes: its bytes, and some 100 bytes an answer (its dict entry, key and str)."""
    return len(text) + 100 * len(answers)


def _remember(ids: frozenset[int], text: bytes, answers: dict[int, str]) -> None:
    global _known_memory
    cost = known_line_memory(text, answers)
    with _known_lock:
        if _known_memory + cost > KNOWN_LINES_MEMORY:
            _known_lines.clear()
            _known_memory = 0
        _known_lines[ids, text] = answers
        _known_memory += cost


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
