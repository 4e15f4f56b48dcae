"""Is the child's reply channel read strictly, and can nothing on it raise a grade, stop a batch or bloat a result?

Most tests judge canned bytes in this process (judge.judge_stage on a sandbox.RunResult made here); the last
ones run real submissions through judge.grade_stage and the sandbox.
"""

import functools
import json
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.course.board import draw_with_key
from autograder.course.stages import STAGE_BY_ID
from autograder.grading import child, judge, sandbox

HOSTILE = Path(__file__).parent / "hostile"
RULES, MEMO = STAGE_BY_ID["01_rules"], STAGE_BY_ID["04_memoization"]
PLAIN_MINIMAX_POINTS = 12  # what plain minimax (no memo) honestly earns on 04_memoization


@functools.cache
def right_forms(stage_id: str) -> dict[int, str]:
    """step id -> one right answer's encoding, for every step of the stage's job."""
    forms = {}
    for cases in judge.stage_plan(stage_id).expected.values():
        for step_id, right, _ in cases:
            forms.setdefault(step_id, min(right))
    return forms


def right_lines(stage_id: str, batches: int = 1) -> list[dict]:
    """What a child of a perfect submission writes: the import line, batches of replies, done."""
    forms = right_forms(stage_id)
    ids = sorted(forms)
    size = -(-len(ids) // batches)
    chunks = [ids[start : start + size] for start in range(0, len(ids), size)]
    return [
        {"import": "ok"},
        *({"ids": chunk, "values": [forms[i] for i in chunk], "details": []} for chunk in chunks),
        {"done": True},
    ]


def right_memo_lines(calls: int = 16168) -> list[dict]:
    plan = judge.stage_plan(MEMO.id)
    report = {"memo": True, "ok": True, "value": "i0", "calls": calls, "size": judge.MEMO_POSITIONS}
    report.update(boards=list(plan.memo_scores), values=list(plan.memo_scores.values()))
    return [{"import": "ok"}, report, {"again": list(plan.memo_again), "complete": True}, {"done": True}]


def encoded(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@functools.cache
def right_bytes(stage_id: str, count: int | None = None, batches: int = 3) -> bytes:
    return encoded(right_lines(stage_id, batches)[:count])


@functools.cache
def right_memo_bytes(count: int | None = None) -> bytes:
    return encoded(right_memo_lines()[:count])


def outcome(reply: bytes, status: str = "exited", returncode: int | None = 0, cpu: float = 0.05) -> sandbox.RunResult:
    return sandbox.RunResult(status, returncode, reply, b"", 0.1, cpu, "")


def judged(stage, reply: bytes, memo: sandbox.RunResult | None = None, **run) -> judge.StageResult:
    if stage is MEMO and memo is None:
        memo = outcome(right_memo_bytes())
    limits, memo_limits = judge.stage_limits(60), judge.memo_limits(60)
    return judge.judge_stage(stage, outcome(reply, **run), limits, memo, memo_limits if memo else None, 60)


def assert_bounded(result: judge.StageResult) -> None:
    """Every text of the result is short and can be written anywhere (UTF-8, JSON, SQLite)."""
    assert len(result.message) <= judge.MESSAGE_CAP_STAGE
    result.message.encode("utf-8")
    for test in result.tests:
        assert len(test.output) <= judge.OUTPUT_CAP
        test.output.encode("utf-8")
        json.dumps(test.output, ensure_ascii=False).encode("utf-8")
        assert not any(ord(c) < 32 and c != "\n" for c in test.output), test.output


def assert_tampered(result: judge.StageResult) -> None:
    assert result.score == 0 and result.outcome == "tampered", (result.score, result.outcome, result.message)
    assert result.message.startswith(judge.TAMPERED + ": ")
    assert {test.outcome for test in result.tests} == {"tampered"}
    assert_bounded(result)


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
    "a line after done": with_line(-1, {"done": True}),
    "a batch after done": with_line(-1, {"ids": [], "values": [], "details": [{"id": 0, **ERROR}]}),
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
    "a line over the size cap": with_detail(ok=False, error="E", message="m" * (judge.MAX_LINE + 1)),
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
    "a line after done": lambda lines: encoded([*lines, {"done": True}]),
}


@pytest.mark.parametrize("violation", MEMO_VIOLATIONS, ids=lambda name: name.replace(" ", "-"))
def test_a_broken_memo_report_is_tampering(violation):
    """Does the memo experiment's child break the stage the same way when its lines break the protocol?"""
    memo = outcome(MEMO_VIOLATIONS[violation](right_memo_lines()))
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
        judged(MEMO, encoded(right_lines(MEMO.id)), memo=outcome(b"", status="cancelled", returncode=None))


UNSAFE = "\udc80\ud800\x00\x1b[31m\u202e\r\n\t\x7f\u2028"


def test_student_strings_are_capped_and_cleaned():
    """Are huge names and messages holding lone surrogates and control characters cut and cleaned as they are read?"""
    detail = {"ok": False, "error": "E" * 100_000 + UNSAFE, "message": UNSAFE * 10_000, "where": UNSAFE * 1000}
    result = judged(RULES, with_detail(**detail)(right_lines(RULES.id)))
    assert result.outcome == "error"
    assert_bounded(result)
    shown = next(t.output for t in result.tests if "raised" in t.output)
    assert "\ufffd" in shown and "\x1b" not in shown and "\u202e" not in shown
    imported = {"import": "error", "error": UNSAFE * 5000, "message": UNSAFE * 10_000}
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
    report[1]["boards"] = [None] * judge.MEMO_POSITIONS
    assert judged(MEMO, encoded(lines), memo=outcome(encoded(report))).score == MEMO.points
    report[2]["again"][-1] = 1 - report[2]["again"][-1]
    result = judged(MEMO, encoded(lines), memo=outcome(encoded(report)))
    failed = {t.check for t in result.tests if t.score == 0}
    assert failed == {"memo/size", "memo/speed"}, failed


def test_memo_speed_needs_answers_and_little_cpu():
    """Does memo/speed fail on a forged call count: answers missing, or the child's CPU time over the threshold?"""
    lines = encoded(right_lines(MEMO.id))
    unfinished = right_memo_lines()
    unfinished[2] = {"again": unfinished[2]["again"][:100], "complete": False}
    slow = outcome(encoded(right_memo_lines()), cpu=judge.MEMO_CPU_THRESHOLD + 0.5)
    for memo in (outcome(encoded(unfinished)), slow):
        result = judged(MEMO, lines, memo=memo)
        assert {t.check for t in result.tests if t.score == 0} == {"memo/speed"}
    many = judged(MEMO, lines, memo=outcome(encoded(right_memo_lines(calls=549_946))))
    assert {t.check for t in many.tests if t.score == 0} == {"memo/speed"}


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

    reply = child.run_step(Module, "rules.py", {"id": 3, "call": "winner", "args": ["XO  X    "]})
    assert reply["ok"] is True and reply["value"] == "n"
    after = judge.decode(reply["changed"])
    assert after[4] is None
    assert "square 4 holds None" in draw_with_key(after)


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


class Named(type):
    @property
    def __name__(cls):
        raise RuntimeError("a metaclass that hides the name")


class Odd(metaclass=Named):
    pass


def odd() -> Odd:
    return Odd()


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(st.characters(blacklist_categories=()), max_size=300)
    | st.builds(odd)
    | st.builds(type("Mark", (str,), {}), st.text(max_size=3)),
    lambda inner: st.lists(inner, max_size=20) | st.lists(inner, max_size=20).map(tuple),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_whatever_a_function_returns_the_child_encodes_within_the_protocol(value):
    """Is the child's encoding of any value one the parent reads (never taken for tampering), and small?"""
    text = child.encode(value)
    assert len(text) <= child.VALUE_CAP
    judge.decode(text)
    assert len(json.dumps({"ids": [0], "values": [text], "details": []})) < child.LINE_BUDGET


@settings(max_examples=200, deadline=None)
@given(board=st.one_of(VALUES, st.lists(VALUES, max_size=12), st.text(st.characters(blacklist_categories=()))))
def test_any_board_can_be_drawn(board):
    """Does drawing a board accept anything a student's code may leave behind, and stay short and printable?"""
    drawing = draw_with_key(board)
    assert len(drawing) < 1200
    drawing.encode("utf-8")
    assert not any(ord(c) < 32 and c != "\n" for c in drawing)


# Fuzzing: whatever arrives on the channel, judging ends normally with bounded, encodable texts.

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATUSES = st.sampled_from(["exited", "killed", "timeout", "waiting", "output-limit", "sandbox-error"])


def check_sane(stage, result: judge.StageResult) -> None:
    assert 0 <= result.score <= stage.points
    assert result.outcome in judge.OUTCOME_ORDER
    assert_bounded(result)


@FUZZ
@given(data=st.binary(max_size=4000), prefix=st.integers(0, 3), status=STATUSES)
def test_arbitrary_bytes_never_stop_the_judge(data, prefix, status):
    """Do arbitrary bytes, alone or after a good start, always give a result with bounded, clean texts?"""
    for stage in (RULES, MEMO):
        result = judged(stage, right_bytes(stage.id, prefix) + data, status=status, returncode=None)
        check_sane(stage, result)
    memo = outcome(right_memo_bytes(prefix) + data, status=status, returncode=None)
    check_sane(MEMO, judged(MEMO, right_bytes(MEMO.id), memo=memo))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@FUZZ
@given(lines=st.lists(JSON, max_size=6), status=STATUSES)
def test_arbitrary_json_lines_never_stop_the_judge(lines, status):
    """Do arbitrary JSON lines, after the import line, always give a sane result?"""
    raw = encoded([{"import": "ok"}, *lines])
    check_sane(RULES, judged(RULES, raw, status=status, returncode=None))
    check_sane(MEMO, judged(MEMO, right_bytes(MEMO.id), memo=outcome(raw, status=status, returncode=None)))


ENCODINGS = st.one_of(
    st.sampled_from(["n", "b0", "b1", "sX", "sO", "s ", "ohuge int:", "f0.5", "l[]", 't["sX"]']),
    st.integers(-(10**17), 10**17).map(lambda number: f"i{number}"),
    st.text(max_size=child.STR_CAP).map(lambda text: "s" + text),
    st.lists(st.integers(-5, 10**6).map(lambda number: f"i{number}"), max_size=4).map(
        lambda items: "l" + json.dumps(items)
    ),
)


@st.composite
def replies_for(draw, stage_id: str):
    """Well-formed batches for the stage's job, each call answered once with an arbitrary value or error."""
    plan = judge.stage_plan(stage_id)
    forms = right_forms(stage_id)
    ids = sorted(forms)
    values, details = {}, {}
    wrong = draw(st.sets(st.sampled_from(ids), max_size=20))
    for step_id in ids:
        if step_id not in wrong:
            values[step_id] = forms[step_id]
        elif draw(st.booleans()):
            values[step_id] = draw(ENCODINGS)
        else:
            name = draw(st.sampled_from(["ValueError", "missing", "slow", "NotImplementedError", UNSAFE]))
            details[step_id] = {"id": step_id, "ok": False, "error": name, "message": draw(st.text(max_size=50))}
    batches = draw(st.integers(1, 5))
    lines = [{"import": "ok"}]
    for part in range(batches):
        chunk = [i for i in ids if i % batches == part]
        lines.append(
            {
                "ids": [i for i in chunk if i in values],
                "values": [values[i] for i in chunk if i in values],
                "details": [details[i] for i in chunk if i in details],
            }
        )
    lines.append({"done": True})
    return plan, values, lines


@FUZZ
@given(drawn=replies_for(RULES.id))
def test_a_check_passes_only_when_every_answer_is_right(drawn):
    """With any mix of right, wrong and failed calls, does a check pass exactly when all its answers are right?"""
    plan, values, lines = drawn
    result = judged(RULES, encoded([line for line in lines if line.get("ids") != [] or line.get("details")]))
    check_sane(RULES, result)
    for test in result.tests:
        if test.check in plan.expected:
            right = all(values.get(step_id) in forms for step_id, forms, _ in plan.expected[test.check])
            assert (test.outcome == "passed") == right, (test.check, test.outcome, test.output)


# Through the real sandbox


def grade_hostile(stage, path: Path, seconds: float = 10) -> judge.StageResult:
    result = judge.grade_stage(stage, path.read_text(), seconds=seconds)
    assert_bounded(result)
    return result


HONEST_MISTAKES = {
    "a syntax error": "def winner(board)\n    return None\n",
    "an error at import": "raise ValueError('not today')\n",
    "SystemExit at import": "import sys\nsys.exit(3)\n",
    "a lone surrogate in an import error": "raise ValueError('\\udc80')\n",
    "no functions at all": "X = 1\n",
    "functions not written yet": "def winner(board):\n    raise NotImplementedError\n\n"
    "def to_move(board):\n    raise NotImplementedError\n",
    "odd values and changed boards": "def winner(board):\n    board.append(board[:])\n    return [board] * 30\n\n"
    "def to_move(board):\n    board[0] = 10**30\n    return float('nan')\n",
    "errors with odd messages": "class Weird(Exception):\n    def __str__(self):\n        raise TypeError\n\n"
    "def winner(board):\n    raise Weird()\n\ndef to_move(board):\n    raise KeyError('\\ud800' * 10**6)\n",
}


@pytest.mark.parametrize("mistake", HONEST_MISTAKES, ids=lambda name: name.replace(" ", "-"))
def test_the_childs_own_replies_are_never_taken_for_tampering(mistake):
    """Does every way an honest module can fail still reach the parent as an ordinary, bounded result?"""
    result = judge.grade_stage(RULES, HONEST_MISTAKES[mistake], seconds=5)
    assert result.outcome not in ("tampered", "crashed"), result.message
    assert result.score == 0
    assert_bounded(result)


MEMO_MISTAKES = {
    "the starter": MEMO.starter_path.read_text(),
    "no memo": "def score(board):\n    return 0\n\ndef choose_move(board):\n    return 0\n",
    "memo that is a list": "memo = []\n\ndef score(board):\n    return 0\n",
    "memo replaced while scoring": "memo = {}\n\ndef score(board):\n    global memo\n    memo = None\n    return 0\n",
    "a score that raises": "memo = {}\n\ndef score(board):\n    raise ValueError('\\udc80')\n",
    "odd keys and values": "memo = {}\n\ndef score(board):\n    memo[len(memo)] = [board]\n"
    "    memo[tuple(board)] = True\n    memo[str(board)] = 0\n    return 0\n",
}


@pytest.mark.parametrize("mistake", MEMO_MISTAKES, ids=lambda name: name.replace(" ", "-"))
def test_the_memo_childs_own_replies_are_never_taken_for_tampering(mistake):
    """Does the memo experiment of an honest but wrong module fail its checks without being called tampering?"""
    result = judge.grade_stage(MEMO, MEMO_MISTAKES[mistake], seconds=5)
    assert result.outcome not in ("tampered", "crashed"), result.message
    memo = [test for test in result.tests if test.check in ("memo/size", "memo/speed")]
    assert all(test.score == 0 and "tampered" not in test.output for test in memo), [t.output for t in memo]
    assert_bounded(result)


@pytest.mark.parametrize("attack", ["forge_then_exit", "forge_then_real"])
def test_a_forged_memo_report_earns_nothing(attack):
    """Does plain minimax that forges the memo experiment's report earn at most what plain minimax earns?"""
    result = grade_hostile(MEMO, HOSTILE / "memoization" / f"{attack}.py", seconds=2)  # the memo child needs <1 s
    assert result.score <= PLAIN_MINIMAX_POINTS
    memo = [test for test in result.tests if test.check in ("memo/size", "memo/speed")]
    assert all(test.score == 0 for test in memo), [(t.check, t.output) for t in memo]
    if attack == "forge_then_real":
        assert result.outcome == "tampered"


def test_a_board_rewritten_to_join_the_same_loses_its_point():
    """Does a winner that leaves ['XO', '', ...] behind lose the board-unchanged point, and only that?"""
    result = grade_hostile(RULES, HOSTILE / "rewrite_board.py")
    lost = {test.check: test.output for test in result.tests if test.score == 0}
    assert set(lost) == {"board-unchanged"}, lost
    assert "square 0 holds" in lost["board-unchanged"]


def test_none_left_on_the_board_is_an_ordinary_mistake():
    """Does a winner that leaves None on the board get normal feedback, its board drawn, instead of stopping?"""
    result = grade_hostile(RULES, HOSTILE / "none_on_board.py")
    unchanged = next(test for test in result.tests if test.check == "board-unchanged")
    assert unchanged.outcome == "failed" and "holds None" in unchanged.output
    assert result.outcome == "failed" and 0 < result.score < RULES.points


def test_a_huge_exception_name_stays_small():
    """Is an exception class name of 30 million characters, with unencodable text, cut to size in the result?"""
    result = grade_hostile(RULES, HOSTILE / "huge_error.py")
    assert result.score == 0 and result.outcome == "error"
    assert sum(len(test.output) for test in result.tests) < 20_000
