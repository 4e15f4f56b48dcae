"""Is the child's reply channel read strictly, and can nothing on it raise a grade, stop a batch or bloat a result?

Canned reply bytes judged in this process (judge.judge_stage on a sandbox.RunResult made here), and the
protocol's decoder, the type rules and the texts a student reads: no sandbox, no subprocess.
tests/test_protocol.py fuzzes the same channel and runs real submissions through the sandbox.
"""

import json
import signal
import time

import pytest

from autograder.course.board import draw_with_key
from autograder.course.checks import stage_checks
from autograder.grading import child, feedback, judge
from autograder.grading.feedback import Problem
from autograder.grading.judging import MEMO_CPU_THRESHOLD, MEMO_POSITIONS, fail_all, type_problem, unanswered
from autograder.grading.plan import stage_plan, wire_calls, wire_step
from autograder.grading.protocol import MAX_LINE, Other, Tampered, decode, parse_replies
from autograder.record import Outcome
from tests.replies import (
    MEMO,
    RULES,
    UNSAFE,
    assert_bounded,
    assert_tampered,
    encoded,
    judged,
    ran,
    right_bytes,
    right_lines,
    right_memo_bytes,
    right_memo_lines,
)


@pytest.mark.parametrize("stage", [RULES, MEMO], ids=lambda stage: stage.id)
def test_right_replies_earn_every_point(stage):
    """Do the canned replies of a perfect submission earn the whole stage (so the tests below mean something)?"""
    result = judged(stage, encoded(right_lines(stage.id, batches=3)))
    assert result.score == stage.points, [(t.check, t.outcome, t.output) for t in result.tests if t.score == 0]


def _batch(lines):
    return next(index for index, line in enumerate(lines) if "ids" in line)


def with_line(index: int, line) -> callable:
    def change(lines):
        lines.insert(index if index >= 0 else len(lines) + 1 + index, line)
        return encoded(lines)

    return change


def with_batch_field(name: str, value) -> callable:
    def change(lines):
        lines[_batch(lines)][name] = value
        return encoded(lines)

    return change


def with_value(value) -> callable:
    def change(lines):
        lines[_batch(lines)]["values"][0] = value
        return encoded(lines)

    return change


def with_detail(**detail) -> callable:
    """The first call answered in the details instead, with these fields."""

    def change(lines):
        batch = lines[_batch(lines)]
        step_id, batch["ids"], batch["values"] = batch["ids"][0], batch["ids"][1:], batch["values"][1:]
        batch["details"].append({"id": step_id, **detail})
        return encoded(lines)

    return change


def raw_change(function) -> callable:
    return lambda lines: function(encoded(lines))


ERROR = {"ok": False, "error": "ValueError", "message": "no"}
VIOLATIONS = {
    "the import line is not first": lambda lines: encoded([lines[1], lines[0], *lines[2:]]),
    "the import line twice": lambda lines: encoded([lines[0], *lines]),
    "done before every call was answered": lambda lines: encoded([lines[0], lines[-1]]),
    "a step id not in the plan": with_line(1, {"ids": [10**6], "values": ["n"], "details": []}),
    "a negative step id": with_line(1, {"ids": [-1], "values": ["n"], "details": []}),
    "a step id that is a bool": with_line(1, {"ids": [True], "values": ["n"], "details": []}),
    "a step id that is a float": with_line(1, {"ids": [0.0], "values": ["n"], "details": []}),
    "an answer given twice in two batches": with_line(1, {"ids": [0], "values": ["n"], "details": []}),
    "an answer given twice in one batch": with_line(1, {"ids": [0, 0], "values": ["n", "n"], "details": []}),
    "an answer given as a value and as a detail": with_line(
        1, {"ids": [], "values": [], "details": [{"id": 0, **ERROR}]}
    ),
    "an empty batch": with_line(1, {"ids": [], "values": [], "details": []}),
    "malformed JSON": raw_change(lambda raw: raw.replace(b'{"done": true}', b'{"done": tru')),
    "an empty line": raw_change(lambda raw: b"\n" + raw),
    "a JSON list, not an object": raw_change(lambda raw: b"[1, 2]\n" + raw),
    "a line over the size cap": with_detail(ok=False, error="E", message="m" * (MAX_LINE + 1)),
    "an unknown field in a batch": with_batch_field("extra", 1),
    "an unknown field in a detail": with_detail(ok=True, value="n", changed="n", extra=1),
    "a missing field in a detail": with_detail(ok=True, value="n"),
    "ok that is not a bool": with_detail(ok="yes", error="E", message="m"),
    "ok given as 1": with_detail(ok=1, error="E", message="m"),
    "an error name that is not a string": with_detail(ok=False, error=["E"], message="m"),
    "ids that are not a list": with_batch_field("ids", "0 1 2"),
    "values shorter than ids": with_batch_field("values", []),
    "a value that is a number": with_value(1),
    "a value that is null": with_value(None),
    "an unknown encoding tag": with_value("q1"),
    "an int with a leading zero": with_value("i01"),
    "an int of 19 digits": with_value("i" + "9" * 19),
    "minus zero": with_value("i-0"),
    "a str longer than the child sends": with_value("s" + "x" * (child.STR_CAP + 1)),
    "a long str cut at the wrong length": with_value("S" + "x" * 5),
    "a float not as repr writes it": with_value("f1.50"),
    "a list whose items are not encodings": with_value("l[1, 2]"),
    "a list that is not JSON": with_value("l[1, "),
    "a list too deep": with_value("l" + json.dumps(["l" + json.dumps(["l[]"])])),
    "a list too long": with_value("l" + json.dumps(["n"] * (child.MAX_ITEMS + 1))),
    "an object without its type": with_value("onothing"),
    "a type name longer than the child sends": with_value("o" + "N" * (child.NAME_CAP + 1) + ":x"),
    "a value longer than the child sends": with_value("l" + json.dumps(["s" + "x" * 100] * 16) + " " * 500),
    "a changed board that is not an encoding": with_detail(ok=True, value="n", changed="['X']"),
    "a field given twice": raw_change(
        lambda raw: raw.replace(b'{"import": "ok"}', b'{"import": "ok", "import": "ok"}')
    ),
    "JSON nested too deep": raw_change(lambda raw: raw.replace(b'{"done": true}', b"[" * 100_000 + b"]" * 100_000)),
    "NaN": raw_change(lambda raw: raw.replace(b'{"done": true}', b'{"done": NaN}')),
    "done that is 1": raw_change(lambda raw: raw.replace(b'{"done": true}', b'{"done": 1}')),
    "a byte that is not ASCII": raw_change(lambda raw: raw.replace(b'"ok"}', b'"\xc3\xa9"}', 1)),
    "UTF-16 JSON": raw_change(
        lambda raw: raw.replace(b'{"import": "ok"}\n', '{"import": "ok"}'.encode("utf-16") + b"\n")
    ),
    "a last line without its newline, though the child exited": raw_change(lambda raw: raw[:-1]),
}


@pytest.mark.parametrize("violation", VIOLATIONS, ids=lambda name: name.replace(" ", "-"))
def test_a_broken_protocol_is_tampering(violation):
    """Does each kind of departure from the protocol give the stage 0, marked tampered, with a short reason?"""
    result = judged(RULES, VIOLATIONS[violation](right_lines(RULES.id, batches=2)))
    assert_tampered(result)


MEMO_VIOLATIONS = {
    "the memo report twice": lambda lines: encoded([lines[0], lines[1], *lines[1:]]),
    "the scoring again before the memo report": lambda lines: encoded([lines[0], lines[2], lines[1], lines[3]]),
    "batches in the memo child": lambda lines: encoded([lines[0], {"ids": [0], "values": ["n"], "details": []}]),
    "a memo key that is not a board": lambda lines: encoded([lines[0], {**lines[1], "boards": ["XO"] * 5478}]),
    "a memo value that is a bool": lambda lines: encoded([lines[0], {**lines[1], "values": [True] * 5478}]),
    "a memo value that is not a score": lambda lines: encoded([lines[0], {**lines[1], "values": [2] * 5478}]),
    "fewer memo entries than its size": lambda lines: encoded([lines[0], {**lines[1], "size": 7000}]),
    "a count that is negative": lambda lines: encoded([lines[0], {**lines[1], "calls": -1}]),
    "an unknown field in the report": lambda lines: encoded([lines[0], {**lines[1], "seconds": 0.001}]),
    "complete with answers missing": lambda lines: encoded([*lines[:2], {"again": [0], "complete": True}]),
    "more answers than boards": lambda lines: encoded([*lines[:2], {"again": [0] * 6000, "complete": False}]),
    "an answer that is not a score": lambda lines: encoded([*lines[:2], {"again": ["i0"], "complete": False}]),
}


@pytest.mark.parametrize(
    "after", [{"done": True}, {"ids": [], "values": [], "details": [{"id": 0, **ERROR}]}, "garbage"]
)
def test_what_follows_done_is_not_read(after):
    """The run ends when the child has written its last done (the sandbox kills the rest): is anything after it
    ignored, the same every time, in the stage's child and in the memo child? What follows the visible job's done
    is the hidden job's: there it breaks the protocol."""
    tail = b"garbage\n" if after == "garbage" else encoded([after])
    hidden = right_bytes(RULES.id, hidden=True)
    assert judged(RULES, right_bytes(RULES.id), hidden=ran(hidden + tail)).score == RULES.points
    assert judged(RULES, right_bytes(RULES.id) + tail, hidden=ran(hidden)).outcome == Outcome.TAMPERED
    memo = ran(right_memo_bytes() + tail)
    assert judged(MEMO, encoded(right_lines(MEMO.id)), memo=memo).score == MEMO.points


@pytest.mark.parametrize("violation", MEMO_VIOLATIONS, ids=lambda name: name.replace(" ", "-"))
def test_a_broken_memo_report_is_tampering(violation):
    """Does the memo experiment's child break the stage the same way when its lines break the protocol?"""
    memo = ran(MEMO_VIOLATIONS[violation](right_memo_lines()))
    assert_tampered(judged(MEMO, encoded(right_lines(MEMO.id)), memo=memo))


@pytest.mark.parametrize(
    "status, returncode, cpu, expected",
    [
        ("killed", -signal.SIGKILL, 0.1, "crashed"),
        ("timeout", None, 60, "timeout"),
        ("output-limit", None, 1, "output-limit"),
    ],
)
def test_a_last_line_cut_short_by_a_kill_is_not_tampering(status, returncode, cpu, expected):
    """When the run was stopped mid-write, is the cut line ignored and the finished batches judged as usual?"""
    lines = right_lines(RULES.id, batches=4)
    raw = encoded(lines[:-2]) + encoded(lines[-2:-1])[:-40]  # the last batch is cut, done never came
    result = judged(RULES, raw, status=status, returncode=returncode, cpu=cpu)
    assert result.outcome == expected, result.message
    assert 0 < result.score < RULES.points
    never = [t for t in result.tests if t.score == 0 and "was never answered" in t.output]
    assert never and all(t.outcome == expected for t in never)
    assert_bounded(result)
    assert_tampered(judged(RULES, raw))  # the same bytes from a child that exited by itself are not its own


def test_time_limits_say_cpu_and_waiting():
    """Do a CPU timeout and a wall-clock wait both give "timeout", each with its own message?"""
    lines = right_lines(RULES.id, batches=4)
    cut = encoded(lines[:2])
    cpu = judged(RULES, cut, status="timeout", returncode=None, cpu=60)
    waited = judged(RULES, cut, status="waiting", returncode=None, cpu=0.1)
    assert cpu.outcome == waited.outcome == "timeout"
    assert "ran out of its CPU time limit of 60 s" in cpu.message
    assert "was waiting (sleeping or blocked), not computing, for 180 s" in waited.message
    memory = judged(RULES, cut, status="killed", returncode=-signal.SIGKILL, cpu=0.2)
    assert memory.outcome == "crashed"


def test_a_cancelled_run_is_never_judged():
    """Does a run stopped from outside raise Cancelled instead of giving a result that could be stored?"""
    with pytest.raises(judge.Cancelled):
        judged(RULES, b"", status="cancelled", returncode=None)
    with pytest.raises(judge.Cancelled):
        judged(MEMO, encoded(right_lines(MEMO.id)), memo=ran(b"", status="cancelled", returncode=None))


def test_student_strings_are_capped_and_cleaned():
    """Are huge names and messages holding lone surrogates and control characters cut and cleaned as they are read?"""
    # Far over the caps, though within one line of the largest size the child writes (protocol.MAX_LINE).
    detail = {"ok": False, "error": "E" * 100_000 + UNSAFE, "message": UNSAFE * 2000, "where": UNSAFE * 1000}
    result = judged(RULES, with_detail(**detail)(right_lines(RULES.id)))
    assert result.outcome == "error"
    assert_bounded(result)
    shown = next(t.output for t in result.tests if "raised" in t.output)
    assert "\ufffd" in shown and "\x1b" not in shown and "\u202e" not in shown
    imported = {"import": "error", "error": UNSAFE * 1000, "message": UNSAFE * 3000}
    result = judged(RULES, encoded([imported]))
    assert result.outcome == "error" and "could not be imported" in result.message
    assert_bounded(result)


def test_returned_strings_are_shown_safely():
    """Is a returned str holding lone surrogates judged as a wrong answer and shown escaped?"""
    result = judged(RULES, with_value("s" + UNSAFE)(right_lines(RULES.id)))
    assert result.score < RULES.points and result.outcome == "failed"
    assert_bounded(result)
    assert any("\\udc80" in test.output for test in result.tests)


def test_memo_keyed_otherwise_is_checked_by_its_answers():
    """With keys that are not boards, does memo/size pass only when the scoring again answers every board right?"""
    lines = right_lines(MEMO.id)
    report = right_memo_lines()
    report[1]["boards"] = [None] * MEMO_POSITIONS
    assert judged(MEMO, encoded(lines), memo=ran(encoded(report))).score == MEMO.points
    report[2]["again"][-1] = 1 - report[2]["again"][-1]
    result = judged(MEMO, encoded(lines), memo=ran(encoded(report)))
    failed = {t.check for t in result.tests if t.score < t.points}
    assert failed == {"memo/size", "memo/speed"}, failed


def test_memo_keyed_otherwise_needs_a_memos_cpu_time():
    """With keys that are not boards and every answer right, does memo/size fail when the parent measured the
    memo child's CPU time over the threshold (a search whose own timer was switched off), whatever it claims?"""
    lines = right_lines(MEMO.id)
    report = right_memo_lines()
    report[1]["boards"] = [None] * MEMO_POSITIONS
    result = judged(MEMO, encoded(lines), memo=ran(encoded(report), cpu=MEMO_CPU_THRESHOLD + 0.5))
    failed = {t.check: t.output for t in result.tests if t.score < t.points}
    assert set(failed) == {"memo/size", "memo/speed"}, failed
    assert "CPU seconds in all" in failed["memo/size"]


def test_memo_keyed_by_boards_is_judged_key_by_key():
    """With keys that are boards, does memo/size fail when the scores are shuffled among them (the right counts of
    1, 0 and -1, the scoring again right), and name how many entries are wrong?"""
    report = right_memo_lines()
    values = report[1]["values"]
    report[1]["values"] = values[1:] + values[:1]
    wrong = sum(a != b for a, b in zip(values, report[1]["values"], strict=True))
    result = judged(MEMO, encoded(right_lines(MEMO.id)), memo=ran(encoded(report)))
    failed = {t.check: t.output for t in result.tests if t.score < t.points}
    assert set(failed) == {"memo/size"}, failed
    assert f"{wrong:,} of them were not stored with their own score" in failed["memo/size"]


def test_memo_speed_needs_answers_and_little_cpu():
    """Does memo/speed fail on a forged call count: answers missing, or the child's CPU time over the threshold?"""
    lines = encoded(right_lines(MEMO.id))
    unfinished = right_memo_lines()
    unfinished[2] = {"again": unfinished[2]["again"][:100], "complete": False}
    slow = ran(encoded(right_memo_lines()), cpu=MEMO_CPU_THRESHOLD + 0.5)
    for memo in (ran(encoded(unfinished)), slow):
        result = judged(MEMO, lines, memo=memo)
        assert {t.check for t in result.tests if t.score < t.points} == {"memo/speed"}
    many = judged(MEMO, lines, memo=ran(encoded(right_memo_lines(calls=549_946))))
    assert {t.check for t in many.tests if t.score < t.points} == {"memo/speed"}


def test_the_board_unchanged_means_the_same_nine_strings():
    """Does the child call a board changed when its squares join the same but differ in number, type or content?"""

    class Mark(str):
        pass

    given = list("XO  X    ")
    assert child.same_board(list(given), given)
    for board in (["XO", "", *given[2:]], given + [""], given[:8], [Mark("X"), *given[1:]], [None, *given[1:]]):
        assert not child.same_board(board, given), board


def test_the_child_reports_a_changed_board_in_a_drawable_form():
    """Does a call that leaves None on the board reply with the board, and can the parent draw it?"""

    class Module:
        @staticmethod
        def winner(board):
            board[4] = None

    reply = child.run_step(Module, "rules.py", (3, "winner", ("XO  X    ",), 0))
    assert reply["ok"] is True and reply["value"] == "n"
    after = decode(reply["changed"])
    assert after[4] is None
    assert "square 4 holds None" in draw_with_key(after)


class _Written(child.Replies):
    """The child's replies as the lines it would write, and only when asked (no batch is sent for its age)."""

    FLUSH_SECONDS = float("inf")

    def __init__(self):
        super().__init__(-1)
        self.lines = []

    def _write(self, text):
        self.lines.append(text)


def lines_both_ways(module, steps: list[dict]) -> list[str]:
    """The lines run_steps writes for steps, once checked to be those of run_step's replies added one by one."""
    one_by_one, together = _Written(), _Written()
    for step in steps:
        one_by_one.add(child.run_step(module, "rules.py", wire_step(step)))
    child.run_steps(module, "rules.py", wire_calls(steps), together)
    one_by_one.flush()
    together.flush()
    assert together.lines == one_by_one.lines
    return together.lines


def test_a_job_of_steps_replies_as_its_steps_one_by_one():
    """Does run_steps, which makes the usual call itself, write what run_step writes step by step, whatever the
    call does: return a short str, a long one, None, another value, raise, change its board, not exist, or have a
    timer of its own?"""

    class Module:
        short = staticmethod(lambda board: "X")
        long = staticmethod(lambda board: "X" * (child.STR_CAP + 1))
        nothing = staticmethod(lambda board: None)
        number = staticmethod(lambda board, depth: depth)
        squares = staticmethod(lambda board: [0, 1])
        changes = staticmethod(lambda board: board.pop())
        timed = staticmethod(lambda board: "O" if "X" in board else 1 / 0)  # asked with a timer: run_step's call

        @staticmethod
        def raises(board):
            raise ValueError("no")

    names = ["short", "long", "nothing", "squares", "changes", "raises", "absent", "short", "number", "timed"]
    steps = [{"id": i, "call": name, "args": ["XO  X    "]} for i, name in enumerate(names)]
    steps[8]["args"].append(3)
    steps[9]["seconds"] = 5
    steps.append({"id": 10, "call": "timed", "args": [" " * 9], "seconds": 5})
    lines = lines_both_ways(Module, steps)
    replies = json.loads(lines[0])
    assert replies["ids"] == [0, 1, 2, 3, 7, 8, 9] and len(replies["details"]) == 4


def test_a_stretch_of_quick_calls_made_in_chunks_replies_as_its_calls_one_by_one():
    """Does run_steps, which makes a stretch of calls of one function in chunks, write what run_step writes call by
    call, whatever the function does on one board among many: raise, raise StopIteration (which ends map as if the
    boards had run out), leave a str subclass equal to the square it replaced, or return a value that is no str?"""

    class Mark(str):
        pass

    boards = ["".join("XO "[(i >> (2 * k)) % 3] for k in range(9)) for i in range(300)]
    odd = boards[150]

    def acts(action):
        def function(board):
            if "".join(board) == odd:
                return action(board)
            return board[4] if board[4] != " " else None

        return staticmethod(function)

    def mark(board):
        board[0] = Mark(board[0])

    class Module:
        raises = acts(lambda board: 1 / 0)
        stops = acts(lambda board: next(iter(())))
        marks = acts(mark)
        number = acts(lambda board: 3)

    steps = [
        {"id": len(boards) * n + i, "call": name, "args": [board]}
        for n, name in enumerate(("raises", "stops", "marks", "number"))
        for i, board in enumerate(boards)
    ]
    lines = lines_both_ways(Module, steps)
    details = [detail for line in lines for detail in json.loads(line)["details"]]
    assert [(d.get("error"), "changed" in d) for d in details] == [
        ("ZeroDivisionError", False),
        ("StopIteration", False),
        (None, True),
    ]


def test_a_job_of_long_answers_is_sent_in_lines_the_parent_accepts():
    """Does run_steps, which counts short replies without measuring them, still send jobs whose answers are as
    long as encodings get in JSON (a str of characters outside the BMP, twelve bytes each; a list of strs of
    backslashes, each written twice over) in lines no longer than the budget and one answer (so under the parent's
    limit), read back whole?"""
    emoji = "\U0001f600" * child.STR_CAP
    backslashes = ["\\" * 99] * 9
    assert 0.9 * child.VALUE_CAP < len(child.encode(backslashes)) <= child.VALUE_CAP

    class Module:
        short = staticmethod(lambda board: "X")
        long = staticmethod(lambda board: emoji)
        listed = staticmethod(lambda board: backslashes)

    for name, value in (("long", emoji), ("listed", backslashes)):
        calls = [{"id": i, "call": name if i % 8 else "short", "args": [" " * 9]} for i in range(3000)]
        written = _Written()
        child.run_steps(Module, "rules.py", wire_calls(calls), written)
        written.flush()
        one = len(json.dumps(child.encode(value))) + len(json.dumps(3 * child.Replies.BATCH)) + 2
        assert max(map(len, written.lines)) <= child.LINE_BUDGET + one < MAX_LINE, name
        assert sum(len(json.loads(line)["ids"]) for line in written.lines) == len(calls)


def test_a_child_whose_quick_calls_turn_slow_sends_its_answers_while_it_works():
    """Does the child, which makes quick calls in chunks, send each answer on its own once the calls have turned
    slow (a chunk grows only while it stays quick), so that a child stopped then loses little, and does it answer
    every call?"""
    sent = []

    class Clocked(child.Replies):
        FLUSH_SECONDS = 0.004  # a batch's age, short here so that the test's slow calls are quick

        def _write(self, text):
            sent.append(len(json.loads(text)["ids"]))

    calls = []

    class Module:
        @staticmethod
        def winner(board):
            calls.append(1)
            if len(calls) > 100:
                time.sleep(Clocked.FLUSH_SECONDS)  # from here on each call outlasts a batch's age
            return None

    steps = [{"id": i, "call": "winner", "args": [" " * 9]} for i in range(100 + child.CHUNK + 20)]
    replies = Clocked(-1)
    child.run_steps(Module, "rules.py", wire_calls(steps), replies)
    replies.flush()
    assert sum(sent) == len(steps) == len(calls)
    assert sent[-20:] == [1] * 20  # the slow calls after the chunk in which they turned slow: one a line


def test_per_call_limits_count_cpu_time():
    """Does a call's timer fire on computing, not on sleeping (so a busy machine cannot make a call slow)?"""
    signal.signal(signal.SIGPROF, child.on_timer)
    try:
        assert child.timed(0.1, time.sleep, 0.3) == ("value", None)

        def busy():
            while True:
                pass

        assert child.timed(0.1, busy) == ("slow", None)
    finally:
        signal.signal(signal.SIGPROF, signal.SIG_DFL)


# ---------------------------------------------------------------------------------------------------------------
# The parts on their own: outcomes, the decoder, the type rules, the texts


def test_outcomes_are_the_words_results_json_holds_and_rank_by_severity():
    """Are the outcomes exactly the words written to results.json, and does a stage take the worst of its tests?"""
    words = ["passed", "not-run", "failed", "error", "missing", "timeout", "output-limit", "crashed", "tampered"]
    assert [str(outcome) for outcome in Outcome][: len(words)] == words
    assert Outcome.UNGRADED == "ungraded" and json.dumps(Outcome.NOT_RUN) == '"not-run"'
    assert Outcome.worst(["passed", "failed", "timeout", "error"]) == Outcome.TIMEOUT
    assert Outcome.FAILED.worse(Outcome.PASSED) == Outcome.FAILED
    assert Outcome.worst([]) == Outcome.PASSED


def test_a_stage_outcome_is_its_worst_tests():
    """With calls never answered (a timeout of the hidden run) and others wrong, is the stage's outcome the timeout?"""
    lines = right_lines(RULES.id, batches=4)
    batch = lines[1]
    batch["values"][0] = "sQ"  # a wrong answer in the visible run
    cut = ran(encoded(right_lines(RULES.id, batches=4, hidden=True)[:2]), status="timeout", returncode=None, cpu=60)
    result = judged(RULES, encoded(lines), hidden=cut)
    assert {test.outcome for test in result.tests} >= {Outcome.TIMEOUT, Outcome.FAILED}
    assert result.outcome == Outcome.TIMEOUT
    assert result.message == feedback.out_of_cpu("the stage", 60)  # the grader's words, whichever run ran out


def replies_of(lines: list[dict], stage=RULES, killed: bool = False):
    return parse_replies(encoded(lines), stage_plan(stage.id), killed, ids=stage_plan(stage.id).visible_ids)


def test_the_decoder_gives_back_exact_types():
    """Does each encoding come back as the value of its own type, and a type the contract never allows as Other?"""
    assert decode("n") is None and decode("b1") is True and decode("i-12") == -12 and decode("sX") == "X"
    assert decode('l["i1", "i0"]') == [1, 0] and decode('t["i1"]') == (1,)
    assert type(decode("b0")) is bool and type(decode("i0")) is int
    assert isinstance(decode("f0.5"), Other) and decode("f0.5").description == "the float 0.5"
    assert decode("oSet:{1}") == Other("an object of type Set")
    for forged in ("i01", "i-0", "x", "", "f1.50", "l[1]"):
        with pytest.raises(Tampered):
            decode(forged)


def test_replies_are_read_into_values_and_details():
    """Are a batch's plain values and its detailed replies (errors) kept apart and found by step id?"""
    lines = right_lines(RULES.id)
    batch = lines[1]
    first, batch["ids"], batch["values"] = batch["ids"][0], batch["ids"][1:], batch["values"][1:]
    batch["details"] = [{"id": first, "ok": False, "error": "ValueError", "message": "no", "where": "rules.py line 3"}]
    replies = replies_of(lines)
    assert not replies.tampered and replies.done
    assert replies.reply(first) == batch["details"][0]
    assert replies.reply(batch["ids"][0]) == {"id": batch["ids"][0], "ok": True, "value": batch["values"][0]}
    assert replies_of(lines[:2], killed=True).done is False  # stopped before done: read, not tampering
    assert "done" in replies_of([lines[0], lines[-1]]).tampered


@pytest.mark.parametrize(
    "function, value, board, problem",
    [
        ("winner", "x", "         ", "returned 'x', but winner must return 'X' or 'O' or None"),
        ("to_move", None, "         ", "returned None, but to_move must return 'X' or 'O'"),
        ("count_games", True, "         ", "returned True (a bool, not a number), but count_games must return an int"),
        ("choose_move", 9, "         ", "returned 9, which is not a square (squares are 0 to 8)"),
        ("choose_move", 0, "X        ", "returned 0, but square 0 is already taken"),
        ("count_results", (1, 2), "         ", "returned (1, 2), but count_results must return a list of three ints"),
        ("winning_square", -1, "         ", None),
        ("score", 1, "         ", None),
    ],
)
def test_type_rules_say_why_a_value_cannot_be_an_answer(function, value, board, problem):
    """Is a value of the wrong kind, off the board or on a taken square explained, and a possible answer not?"""
    found = type_problem(function, value, board)
    assert found == problem if problem is None else found.startswith(problem), found


def test_a_wrong_answer_is_shown_on_its_board_with_the_expected_answer_when_visible():
    """Does the feedback of a wrong visible answer draw the board, show what came back and what was expected?"""
    check = next(check for check in stage_checks(RULES.id) if check.visible and check.kind == "calls")
    case = check.cases[0]
    text = feedback.call_check(check, False, False, 1, [Problem(case, feedback.returned("Q"), wrong_value=True)])
    assert text.startswith(feedback.summary(check, 1))
    assert f"On this board ({feedback.call_text(check.function, case.args)}):" in text
    assert "your function returned 'Q'" in text and "expected " in text


def test_a_hidden_check_shows_its_smallest_counterexample_with_the_right_answer():
    """Does a failed hidden check show one board only, the one with fewest marks (the first of them in the check's
    order), with what came back and what was right? (Its output is held back until the grades are published.)"""
    hidden = next(check for check in stage_checks(RULES.id) if not check.visible and check.kind == "calls")
    cases = sorted(hidden.cases[:40], key=lambda one: -feedback.marks(one.args[0]))  # the simplest last
    problems = [Problem(one, "returned 'Q'", wrong_value=True) for one in cases]
    shown = feedback.call_check(hidden, False, False, len(problems), problems)
    fewest = min(feedback.marks(one.args[0]) for one in cases)
    simplest = next(one for one in cases if feedback.marks(one.args[0]) == fewest)
    assert f"The simplest board where it is wrong ({feedback.call_text(hidden.function, simplest.args)}):" in shown
    assert feedback.draw_with_key(simplest.args[0]) in shown
    assert shown.count("```") == 2 and shown.count("returned 'Q'") == 1
    answers = sorted(simplest.accept, key=repr)
    assert f"expected {answers[0]!r}" in shown if len(answers) == 1 else f"expected one of {answers!r}" in shown


def test_a_failed_hidden_check_keeps_its_counterexample_bounded_for_the_report():
    """Does a failed hidden check keep its simplest board, call, what came back and what was right for the class
    report, each one clean short line however long and odd the message its code raised?"""
    lines = right_lines(RULES.id, hidden=True)
    batch = lines[1]
    step_id, batch["ids"], batch["values"] = batch["ids"][0], batch["ids"][1:], batch["values"][1:]
    batch["details"] = [{"id": step_id, "ok": False, "error": "ValueError", "message": UNSAFE * 50}]
    result = judged(RULES, right_bytes(RULES.id), hidden=ran(encoded(lines)))
    failed = [test for test in result.tests if not test.visible and test.outcome != Outcome.PASSED and test.points]
    assert failed and all(test.counterexample is not None for test in failed)
    assert all(test.counterexample is None for test in result.tests if test.visible or test.outcome == Outcome.PASSED)
    step = stage_plan(RULES.id).step_by_id[step_id]
    example = failed[0].counterexample
    assert example.board == step["args"][0] and example.call == f"{step['call']}(board)"
    assert example.returned.startswith("raised ValueError") and example.expected.startswith("expected ")
    assert_bounded(result)


def test_a_function_not_written_yet_is_one_line():
    """When every case raised NotImplementedError, is the feedback one sentence (and the hint), with no board?"""
    winner = {step["id"] for step in stage_plan(RULES.id).steps if step["call"] == "winner"}
    error = {"ok": False, "error": "NotImplementedError", "message": ""}
    runs = []
    for hidden in (False, True):  # both runs: the hidden checks ask the visible boards and many more
        lines = right_lines(RULES.id, hidden=hidden)
        for batch in lines[1:-1]:
            batch["details"] = [{"id": i, **error} for i in batch["ids"] if i in winner]
            batch["values"] = [v for i, v in zip(batch["ids"], batch["values"], strict=True) if i not in winner]
            batch["ids"] = [i for i in batch["ids"] if i not in winner]
        runs.append(encoded(lines))
    result = judged(RULES, runs[0], hidden=ran(runs[1]))
    calls = {check.id for check in stage_checks(RULES.id) if check.kind == "calls" and check.function == "winner"}
    tests = [test for test in result.tests if test.check in calls]
    assert tests and all(test.outcome == Outcome.ERROR for test in tests)
    for test in tests:
        assert test.output.splitlines()[0] == "winner is not written yet (it raises NotImplementedError)."
        assert "```" not in test.output


@pytest.mark.parametrize(
    "status, returncode, outcome, words",
    [
        ("timeout", None, Outcome.TIMEOUT, "ran out of its CPU time limit of 60 s"),
        ("killed", -signal.SIGXCPU, Outcome.TIMEOUT, "ran out of its CPU time limit"),
        ("waiting", None, Outcome.TIMEOUT, "was waiting (sleeping or blocked), not computing"),
        ("output-limit", None, Outcome.OUTPUT_LIMIT, "wrote too much"),
        ("killed", -signal.SIGKILL, Outcome.CRASHED, "the program was stopped"),
        ("sandbox-error", None, Outcome.CRASHED, "the grader could not run the program"),
        ("exited", 1, Outcome.CRASHED, "the program stopped before this call"),
    ],
)
def test_how_a_run_ended_decides_its_unanswered_calls(status, returncode, outcome, words):
    """Does each way a run can end give its calls never answered the right outcome and sentence?"""
    ended = unanswered(ran(b"", status, returncode), judge.stage_limits(60), 60)
    assert ended.outcome == outcome and words in ended.why


def test_every_check_failed_for_one_reason():
    """Does fail_all give every check of the stage its outcome and the one message, bounded, and 0 points?"""
    result = fail_all(RULES, Outcome.MISSING, "rules.py was not submitted" + "!" * 5000)
    assert result.score == 0 and result.outcome == Outcome.MISSING
    assert len(result.message) <= feedback.MESSAGE_CAP_STAGE
    assert {test.outcome for test in result.tests} == {Outcome.MISSING}
    assert [test.check for test in result.tests] == [check.id for check in stage_checks(RULES.id)]
    assert {test.stage for test in result.tests} == {RULES.id}


def test_a_diagnosis_that_fails_leaves_the_grade_as_judged(monkeypatch):
    """The diagnosis is advice: when it raises, the wrong stage keeps the points and tests it was judged with."""
    from autograder.course.stages import ROOT, STAGES
    from autograder.grading import sandbox

    stage = STAGES[0]
    source = (ROOT / "tests" / "variants" / stage.id / "wrong_missing_diagonal.py").read_text()
    isolation = sandbox.detect()
    judged = judge.grade_stage(stage, source, isolation, seconds=sandbox.DEFAULT_STAGE_SECONDS)

    def broken(*args):
        raise RuntimeError("the diagnosis failed")

    monkeypatch.setattr(judge, "diagnose", broken)
    advised = judge.grade_stage(stage, source, isolation, seconds=sandbox.DEFAULT_STAGE_SECONDS)
    assert 0 < advised.score == judged.score < stage.points and advised.diagnosis == ()

    def verdicts(result):
        return [(test.check, test.score, test.outcome) for test in result.tests]

    assert verdicts(advised) == verdicts(judged)
