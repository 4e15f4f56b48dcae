"""Canned bytes of the child's reply channel, and judging them in this process (no sandbox, no subprocess)."""

import dataclasses
import functools
import json

from autograder.course.stages import STAGE_BY_ID
from autograder.grading import child, feedback, judge, sandbox
from autograder.grading.judging import COUNTEREXAMPLE_CAP, MEMO_POSITIONS
from autograder.grading.plan import stage_plan
from autograder.grading.protocol import parse_stage_replies
from autograder.record import Outcome, StageResult

RULES, MEMO = STAGE_BY_ID["01_rules"], STAGE_BY_ID["04_memoization"]
UNSAFE = "\udc80\ud800\x00\x1b[31m\u202e\r\n\t\x7f\u2028"


@functools.cache
def right_forms(stage_id: str, hidden: bool | None = False) -> dict[int, str]:
    """step id -> one right answer's encoding, for every step of the stage's visible run (hidden: of its hidden
    run; None: of both)."""
    plan = stage_plan(stage_id)
    ids = plan.step_ids if hidden is None else plan.hidden_ids if hidden else plan.visible_ids
    forms = {}
    for cases in plan.expected.values():
        for step_id, right in cases:
            if step_id in ids:
                forms.setdefault(step_id, min(right))
    return forms


def right_lines(stage_id: str, batches: int = 1, hidden: bool = False) -> list[dict]:
    """What a child of a perfect submission writes: the import line, batches of replies, done (the visible run's
    by default, hidden: the hidden run's).

    At least batches of them, and more when the child would split them (at most Replies.BATCH replies a line).
    """
    forms = right_forms(stage_id, hidden)
    ids = sorted(forms)
    size = min(-(-len(ids) // batches), child.Replies.BATCH)
    chunks = [ids[start : start + size] for start in range(0, len(ids), size)]
    return [
        {"import": "ok"},
        *({"ids": chunk, "values": [forms[i] for i in chunk], "details": []} for chunk in chunks),
        {"done": True},
    ]


def right_memo_lines(calls: int = 16168) -> list[dict]:
    plan = stage_plan(MEMO.id)
    report = {"experiment": True, "ok": True, "value": "i0", "calls": calls, "size": MEMO_POSITIONS}
    report.update(boards=list(plan.memo_scores), values=list(plan.memo_scores.values()))
    return [{"import": "ok"}, report, {"again": list(plan.memo_again), "complete": True}, {"done": True}]


def encoded(lines: list[dict]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@functools.cache
def right_bytes(stage_id: str, count: int | None = None, batches: int = 3, hidden: bool = False) -> bytes:
    return encoded(right_lines(stage_id, batches, hidden)[:count])


@functools.cache
def right_memo_bytes(count: int | None = None) -> bytes:
    return encoded(right_memo_lines()[:count])


def ran(reply: bytes, status: str = "exited", returncode: int | None = 0, cpu: float = 0.05) -> sandbox.RunResult:
    """A run of the child as the sandbox reports it, made here."""
    return sandbox.RunResult(status, returncode, reply, b"", 0.1, cpu, "")


IMPORTED = b'{"import": "ok"}\n'


def judged(
    stage, reply: bytes, memo: sandbox.RunResult | None = None, hidden: sandbox.RunResult | None = None, **run
) -> StageResult:
    """The stage judged on reply as its child's replies to the visible job (with run's status...), beside a perfect
    memo child and a perfect hidden job unless memo or hidden is given.

    hidden: the hidden job's replies (an import line first is dropped) and how the child ended after it, when reply
    ends the visible job well (the child is then handed the hidden job); otherwise the hidden job's own child."""
    if stage is MEMO and memo is None:
        memo = ran(right_memo_bytes())
    hidden = ran(right_bytes(stage.id, hidden=True)) if hidden is None else hidden
    limits, memo_limits = judge.stage_limits(60), judge.memo_limits(60)
    visible = ran(reply, **run)
    replies, _ = parse_stage_replies(reply, stage_plan(stage.id), visible.status not in ("exited", "done"))
    if replies.done and not replies.tampered and visible.status == "exited":
        rest = hidden.reply.removeprefix(IMPORTED)
        one = dataclasses.replace(hidden, reply=reply + rest, cpu_seconds=visible.cpu_seconds + hidden.cpu_seconds)
        return judge.judge_stage(stage, one, limits, memo, memo_limits if memo else None, 60)
    memo_limits = memo_limits if memo else None
    return judge.judge_stage(stage, visible, limits, memo, memo_limits, 60, hidden_run=hidden, hidden_limits=limits)


def assert_bounded(result: StageResult) -> None:
    """Every text of the result is short and can be written anywhere (UTF-8, JSON, SQLite)."""
    assert len(result.message) <= feedback.MESSAGE_CAP_STAGE
    result.message.encode("utf-8")
    for test in result.tests:
        assert len(test.output) <= feedback.OUTPUT_CAP
        test.output.encode("utf-8")
        json.dumps(test.output, ensure_ascii=False).encode("utf-8")
        assert not any(ord(c) < 32 and c != "\n" for c in test.output), test.output
        for text in dataclasses.astuple(test.counterexample) if test.counterexample else ():
            assert len(text) <= COUNTEREXAMPLE_CAP and not any(ord(c) < 32 for c in text), text
            text.encode("utf-8")


def assert_tampered(result: StageResult) -> None:
    assert result.score == 0 and result.outcome == Outcome.TAMPERED, (result.score, result.outcome, result.message)
    assert result.message.startswith(feedback.TAMPERED + ": ")
    assert {test.outcome for test in result.tests} == {Outcome.TAMPERED}
    assert_bounded(result)
