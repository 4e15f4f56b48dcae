"""The child's reply channel under fuzzing, and real submissions through judge.grade_stage and the sandbox.

The canned, deterministic cases of the protocol are in tests/test_judging.py (in this process, fast).
"""

import functools
import json
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.course.board import draw_with_key
from autograder.course.stages import STAGE_BY_ID
from autograder.grading import child, judge, protocol
from autograder.grading.plan import stage_plan
from autograder.grading.protocol import decode, parse_replies
from autograder.record import Outcome, StageResult
from tests.classes import reference
from tests.replies import (
    MEMO,
    RULES,
    UNSAFE,
    assert_bounded,
    encoded,
    judged,
    ran,
    right_bytes,
    right_forms,
    right_lines,
    right_memo_bytes,
)

HOSTILE = Path(__file__).parent / "hostile"
ROOT = Path(__file__).resolve().parents[1]
PLAIN_MINIMAX_POINTS = 12  # what plain minimax (no memo) honestly earns on 04_memoization


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


@pytest.mark.slow  # hundreds of examples: seconds each
@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_whatever_a_function_returns_the_child_encodes_within_the_protocol(value):
    """Is the child's encoding of any value one the parent reads (never taken for tampering), and small?"""
    text = child.encode(value)
    assert len(text) <= child.VALUE_CAP
    decode(text)
    assert len(json.dumps({"ids": [0], "values": [text], "details": []})) < child.LINE_BUDGET


ENCODED = st.sampled_from(["sX", "sO", "n", "s", "s draw"]) | st.text(st.characters(blacklist_categories=()))


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(ENCODED))
def test_the_childs_batch_of_values_is_what_json_writes(texts):
    """Does the child's batch of encoded values (plain ones joined at once, the rest escaped one by one) read back
    as the same strs, byte for byte what json.dumps writes?"""
    written = child.quoted_all(texts)
    assert written == ", ".join(map(json.dumps, texts))
    assert json.loads(f"[{written}]") == texts


@pytest.mark.slow  # hundreds of examples: seconds each
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


def check_sane(stage, result: StageResult) -> None:
    assert 0 <= result.score <= stage.points
    assert result.outcome in list(Outcome)
    assert_bounded(result)


@pytest.mark.slow  # hundreds of examples: seconds each
@FUZZ
@given(data=st.binary(max_size=4000), prefix=st.integers(0, 3), status=STATUSES)
def test_arbitrary_bytes_never_stop_the_judge(data, prefix, status):
    """Do arbitrary bytes, alone or after a good start, always give a result with bounded, clean texts?"""
    for stage in (RULES, MEMO):
        result = judged(stage, right_bytes(stage.id, prefix) + data, status=status, returncode=None)
        check_sane(stage, result)
    memo = ran(right_memo_bytes(prefix) + data, status=status, returncode=None)
    check_sane(MEMO, judged(MEMO, right_bytes(MEMO.id), memo=memo))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow  # hundreds of examples: seconds each
@FUZZ
@given(lines=st.lists(JSON, max_size=6), status=STATUSES)
def test_arbitrary_json_lines_never_stop_the_judge(lines, status):
    """Do arbitrary JSON lines, after the import line, always give a sane result?"""
    raw = encoded([{"import": "ok"}, *lines])
    check_sane(RULES, judged(RULES, raw, status=status, returncode=None))
    check_sane(MEMO, judged(MEMO, right_bytes(MEMO.id), memo=ran(raw, status=status, returncode=None)))


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
    plan = stage_plan(stage_id)
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


@pytest.mark.slow  # hundreds of examples: seconds each
@FUZZ
@given(drawn=replies_for(RULES.id))
def test_a_check_passes_only_when_every_answer_is_right(drawn):
    """With any mix of right, wrong and failed calls, does a check pass exactly when all its answers are right?"""
    plan, values, lines = drawn
    result = judged(RULES, encoded([line for line in lines if line.get("ids") != [] or line.get("details")]))
    check_sane(RULES, result)
    values = {**right_forms(RULES.id, hidden=True), **values}  # the hidden run (judged's) answers right
    for test in result.tests:
        if plan.expected.get(test.check):  # a call check (board-unchanged has no cases of its own)
            right = all(values.get(step_id) in forms for step_id, forms in plan.expected[test.check])
            assert (test.outcome == "passed") == right, (test.check, test.outcome, test.output)


def read_cold_and_warm(lines: list[dict], ids: frozenset[int]):
    """The lines read with nothing remembered, and as a later child's, once they were all remembered."""
    raw, plan = encoded(lines), stage_plan(RULES.id)
    protocol._known_lines.clear()
    with mock.patch.object(protocol, "_remember", lambda *_: None):
        cold = parse_replies(raw, plan, killed=False, ids=ids)
    parse_replies(raw, plan, killed=False, ids=ids)  # remembered as read
    return cold, parse_replies(raw, plan, killed=False, ids=ids)


# Lines a perfect submission's children write, visible and hidden, in several batchings; wrong ones of right forms;
# values no call returns
RIGHT_POOL = [
    line
    for batches, hidden in ((1, False), (2, False), (3, True), (4, True))
    for line in right_lines(RULES.id, batches, hidden)[1:-1]
]
RIGHT_POOL.append({**RIGHT_POOL[0], "values": ["sO" if value == "sX" else "sX" for value in RIGHT_POOL[0]["values"]]})
RIGHT_POOL.append({**RIGHT_POOL[0], "values": ["i7"] * len(RIGHT_POOL[0]["ids"])})  # no call returns an int


@FUZZ
@given(picks=st.lists(st.integers(0, len(RIGHT_POOL) - 1), max_size=6), hidden=st.booleans())
def test_a_line_of_right_answers_read_again_reads_the_same(picks, hidden):
    """Is a line the reader remembers from an earlier child (lines of right answers are not read again in full)
    read exactly as the first time, whatever comes before it: the same answers, and the same tampering when it
    answers a call twice, has more answers than the job or answers another job's calls?"""
    plan = stage_plan(RULES.id)
    lines = [{"import": "ok"}, *(RIGHT_POOL[pick] for pick in picks), {"done": True}]
    cold, warm = read_cold_and_warm(lines, plan.hidden_ids if hidden else plan.visible_ids)
    assert warm == cold


def test_a_call_answered_with_an_error_and_then_a_value_is_tampering():
    """Counted, the answers add up to the job's calls, but one call is answered twice and another never."""
    plan, batch = stage_plan(RULES.id), RIGHT_POOL[0]
    error = {"id": batch["ids"][0], "ok": False, "error": "ValueError", "message": "no"}
    cut = {"ids": batch["ids"][:-1], "values": batch["values"][:-1], "details": []}
    lines = [{"import": "ok"}, {"ids": [], "values": [], "details": [error]}, cut, {"done": True}]
    for replies in read_cold_and_warm(lines, plan.visible_ids):
        assert replies.tampered == "line 3: a call answered twice"


def test_only_lines_of_the_plans_own_encodings_are_remembered_and_within_their_memory(monkeypatch):
    plan = stage_plan(RULES.id)
    protocol._known_lines.clear()
    parse_replies(encoded([{"import": "ok"}, RIGHT_POOL[-1]]), plan, killed=True, ids=plan.visible_ids)
    assert not protocol._known_lines  # values no call returns are decoded each time
    monkeypatch.setattr(protocol, "KNOWN_LINES_MEMORY", 6000)
    for batches in range(1, 9):
        parse_replies(encoded(right_lines(RULES.id, batches)), plan, killed=False, ids=plan.visible_ids)
        assert protocol._known_lines
        kept = protocol._known_lines.items()
        assert sum(protocol.known_line_memory(text, answers) for (_, text), answers in kept) <= 6000


# Through the real sandbox


def grade_hostile(stage, path: Path, seconds: float = 10) -> StageResult:
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


SLOW_MISTAKES = {"odd values and changed boards", "errors with odd messages"}  # huge values: 5 to 10 s each


@pytest.mark.parametrize(
    "mistake",
    [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_MISTAKES else name for name in HONEST_MISTAKES],
    ids=lambda name: name.replace(" ", "-"),
)
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


FORGE_EXIT = '    forge(JOB["experiment"])\n    os._exit(0)\n'  # the end of forge_report.py


@pytest.mark.parametrize("attack", ["forge_then_exit", "forge_then_real"])
def test_a_forged_memo_report_earns_nothing(attack, tmp_path):
    """Does plain minimax that forges the memo experiment's report earn at most what plain minimax earns?"""
    source = (HOSTILE / "memoization" / "forge_report.py").read_text()
    assert source.endswith(FORGE_EXIT)
    if attack == "forge_then_real":  # the forged report, then the child carries on and writes its real one
        source = source.removesuffix(FORGE_EXIT) + '    forge(JOB["experiment"])\n'  # (not read: it follows done)
    (tmp_path / "memoization.py").write_text(source)
    result = grade_hostile(MEMO, tmp_path / "memoization.py", seconds=2)  # the memo child needs <1 s
    assert result.score <= PLAIN_MINIMAX_POINTS
    memo = [test for test in result.tests if test.check in ("memo/size", "memo/speed")]
    assert all(test.score == 0 for test in memo), [(t.check, t.output) for t in memo]


@functools.cache
def honest_memo_result() -> StageResult:
    return judge.grade_stage(MEMO, reference(MEMO.id), seconds=10)


# Attacks on the child's own word in the memo experiment: what each steals before the parent decides by itself.
TIMER_ATTACKS = (
    "ignore_sigprof",  # a slow alpha-beta, no memo: it used to pass memo/speed (4 points)
    "dummy_memo",  # plain minimax with 5,478 made-up entries of the right counts: it used to pass memo/size (4)
)


@pytest.mark.parametrize("attack", TIMER_ATTACKS)
def test_switching_off_the_childs_timer_earns_no_memo_points(attack):
    """Does a module that ignores SIGPROF (so the child's own timer never stops its search) lose both memo
    points, judged by the CPU time the sandbox measured, while the honest memo beside it keeps full marks?"""
    result = grade_hostile(MEMO, HOSTILE / "memoization" / f"{attack}.py", seconds=20)
    memo = {test.check: test for test in result.tests if test.check in ("memo/size", "memo/speed")}
    assert all(test.score == 0 for test in memo.values()), {c: t.output for c, t in memo.items()}
    assert "CPU seconds" in memo["memo/speed"].output
    assert result.score == MEMO.points - 8  # every other check passes: the answers are right
    honest = honest_memo_result()
    assert honest.score == MEMO.points, [(t.check, t.output) for t in honest.tests if t.score < t.points]


def test_switching_off_the_childs_timer_does_not_make_minimax_prune():
    """Does plain minimax that ignores SIGPROF in the prune experiment still fail score/prunes on the CPU time
    the sandbox measured, while the reference alpha-beta passes it?"""
    stage = STAGE_BY_ID["08_alpha_beta"]
    result = grade_hostile(stage, HOSTILE / "memoization" / "prune_ignore_sigprof.py", seconds=20)
    prunes = next(test for test in result.tests if test.check == "score/prunes")
    assert prunes.score == 0 and "CPU seconds" in prunes.output, prunes.output
    honest = judge.grade_stage(stage, reference(stage.id), seconds=10)
    assert honest.score == stage.points


def test_a_board_rewritten_to_join_the_same_is_told_but_costs_nothing():
    """Does a winner that leaves ['XO', '', ...] behind fail the board-unchanged check, which says so and that it is
    advisory (no points: only the child sees the board), while every other check passes with full marks?"""
    result = grade_hostile(RULES, HOSTILE / "rewrite_board.py")
    failed = {test.check: test.output for test in result.tests if test.outcome != "passed"}
    assert set(failed) == {"board-unchanged"}, failed
    assert "square 0 holds" in failed["board-unchanged"] and "advisory" in failed["board-unchanged"]
    assert result.score == RULES.points and result.outcome == "passed"


def test_a_module_that_patches_the_childs_changed_board_reply_earns_nothing_by_it():
    """Does a module that replaces the child's reply for a changed board at import and changes every board earn
    exactly what the same answers earn honestly (the advisory check is worth nothing), beside an honest module that
    keeps full marks? And does the same module without the patch fail the advisory check, so the patch is what hid
    its changes?"""
    source = (HOSTILE / "patch_changed_reply.py").read_text()
    patched = judge.grade_stage(RULES, source, seconds=5)
    unpatched = judge.grade_stage(RULES, source.replace("    grader.changed =", "    _ ="), seconds=5)
    honest = judge.grade_stage(RULES, reference(RULES.id), seconds=5)
    assert patched.score == unpatched.score == honest.score == RULES.points
    unchanged = [next(t for t in r.tests if t.check == "board-unchanged") for r in (patched, unpatched)]
    assert [t.outcome for t in unchanged] == ["passed", "failed"]  # the child's word, forged by the patch
    assert all(t.points == t.score == 0 for t in unchanged)


def test_none_left_on_the_board_is_an_ordinary_mistake():
    """Does a winner that leaves None on the board get normal feedback, its board drawn, instead of stopping?"""
    result = grade_hostile(RULES, HOSTILE / "none_on_board.py")
    unchanged = next(test for test in result.tests if test.check == "board-unchanged")
    assert unchanged.outcome == "failed" and "holds None" in unchanged.output
    assert result.outcome == "failed" and 0 < result.score < RULES.points


def test_the_child_runs_compiled_when_its_interpreter_reads_our_bytecode_and_from_source_when_not(monkeypatch):
    """Is the child handed over compiled (child.pyc) when the children's interpreter has the grader's magic number,
    as child.py when it has another, and does a submission get the same result, mistakes and all, either way?"""
    wrong = (ROOT / "tests" / "variants" / "01_rules" / "wrong_missing_diagonal.py").read_text()
    judge.child_program.cache_clear()
    try:
        assert judge.child_program()[0] == "child.pyc"  # the interpreters here share one bytecode
        compiled = [judge.grade_stage(RULES, code, seconds=5) for code in (reference(RULES.id), wrong)]
        judge.child_program.cache_clear()
        monkeypatch.setattr(judge.sandbox, "child_magic", lambda: b"\x00\x00\r\n")  # another Python's bytecode
        assert judge.child_program() == ("child.py", judge.child_source())
        source = [judge.grade_stage(RULES, code, seconds=5) for code in (reference(RULES.id), wrong)]
    finally:
        judge.child_program.cache_clear()
    for one, other in zip(compiled, source, strict=True):
        assert [(t.check, t.score, t.output) for t in one.tests] == [(t.check, t.score, t.output) for t in other.tests]
    assert compiled[0].score == RULES.points > compiled[1].score


def test_a_huge_exception_name_stays_small():
    """Is an exception class name of 30 million characters, with unencodable text, cut to size in the result?"""
    result = grade_hostile(RULES, HOSTILE / "huge_error.py")
    assert result.score == 0 and result.outcome == "error"
    assert sum(len(test.output) for test in result.tests) < 20_000


# ---------------------------------------------------------------------------------------------------------------
# The grader's own memory: bounded by the plan, whatever the child sends

MEMO_START = '{\\"memo\\": true, \\"ok\\": true, \\"boards\\": ['
FLOODS = {  # 64 MiB on the reply channel after the import line, each well-formed as far as it goes
    "5.6 million call ids": "batch(range(n * 20000, (n + 1) * 20000))",
    "ids not in the plan": "batch(range(10**6 + n * 100, 10**6 + (n + 1) * 100))",
    "one id again and again": "batch([0])",
    "one line that never ends": '\'"\' + \'x\' * 65536 if n else \'{"ids": [], "values": [], "details": [{"m": \'',
    "JSON nested 64 MiB deep": "'[' * 65536",
    "an int of 64 MiB digits": "('{\"ids\": [' if n == 0 else '') + '9' * 65536",
    "a memo of 10 million keys": f"('{MEMO_START}' if n == 0 else '') + '\"XO       \", ' * 5000",
}
RSS_SCRIPT = """
import json, resource, sys
from autograder.grading.plan import stage_plan
from autograder.grading.protocol import ReplyReader
plan = stage_plan(sys.argv[2])
def batch(ids):
    ids = list(ids)
    return json.dumps({{"ids": ids, "values": ["i0"] * len(ids), "details": []}}) + "\\n"
reader = ReplyReader(plan, memo=sys.argv[2] == "04_memoization")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sent, n, over = 0, 0, reader.feed(b'{{"import": "ok"}}\\n')
while sent < 64 << 20 and not over:
    chunk = ({flood}).encode()
    for start in range(0, len(chunk), 1 << 16):  # as the supervisor reads the pipe
        over = over or reader.feed(chunk[start : start + (1 << 16)])
    sent, n = sent + len(chunk), n + 1
replies = reader.finish(killed=True)
growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({{"growth_kib": growth, "sent": sent, "tampered": replies.tampered, "kept": len(replies.values)}}))
"""


@pytest.mark.parametrize("flood", FLOODS, ids=lambda name: name.replace(" ", "-"))
def test_a_flood_of_replies_is_stopped_with_little_memory(flood):
    """Is a reply channel that sends far more than the plan could need called tampering as soon as it does, the
    grader's peak memory growing by a few MiB at most (it was 577 MiB for 5.6 million call ids)?"""
    stage = "04_memoization" if "memo" in flood else RULES.id
    script = RSS_SCRIPT.format(flood=FLOODS[flood])
    done = subprocess.run([sys.executable, "-c", script, "", stage], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert found["tampered"], found
    assert found["growth_kib"] < 16 << 10, found  # a MiB or two measured; before, hundreds of MiB
    assert found["sent"] < 2 << 20 and found["kept"] <= len(stage_plan(stage).steps), found


GRADE_SCRIPT = """
import json, resource, sys
from autograder.course.stages import STAGE_BY_ID
from autograder.grading import judge
from tests.classes import reference
stage = STAGE_BY_ID["01_rules"]
honest = judge.grade_stage(stage, reference(stage.id), seconds=2)  # the grader's own memory, warmed up
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # ours only: the sandboxed child is not counted
hostile = judge.grade_stage(stage, sys.argv[1], seconds=2)
growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
again = judge.grade_stage(stage, reference(stage.id), seconds=2)
print(json.dumps({"growth_kib": growth, "hostile": [hostile.score, hostile.outcome, hostile.seconds],
                  "honest": [honest.score, again.score, again.outcome]}))
"""
FLOODING_MODULE = """
import json, os
line = (json.dumps({"ids": list(range(20000)), "values": ["i0"] * 20000, "details": []}) + "\\n").encode()
os.write(3, b'{"import": "ok"}\\n')
for _ in range((64 << 20) // len(line)):  # 5.6 million call ids in well-formed batches, then more
    os.write(3, line)
while True:
    os.write(3, line)
"""


def test_a_flooding_child_costs_the_grader_no_memory():
    """Graded for real (sandboxed child, reply pipe), does a module that writes 64 MiB of well-formed replies get
    tampered, at once, the grader's peak memory growing by a few MiB at most, and an honest module still full marks?"""
    script = GRADE_SCRIPT
    done = subprocess.run(
        [sys.executable, "-c", script, FLOODING_MODULE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    found = json.loads(done.stdout)
    assert found["hostile"][:2] == [0, "tampered"] and found["hostile"][2] < 10, found
    assert found["honest"] == [RULES.points, RULES.points, "passed"], found
    assert found["growth_kib"] < 16 << 10, found
