"""Naming the mistake: a class made of the known mistakes, graded by the real grader, is diagnosed right.

Each student hands in one known-wrong variant of one stage (tests/variants/<stage>/wrong_*.py), two students make
two mistakes at once (in two stages, and in the two functions of one stage), and the right ones (the references
and the ok_ variants) must never be diagnosed. The diagnosis is read back from results.json, the gradebook, the
report and `autograde stats`.
"""

import ast
import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from markupsafe import escape

from autograder.course.board import draw_with_key
from autograder.course.checks import stage_checks
from autograder.course.stages import ROOT, STAGE_BY_ID, STAGES
from autograder.grading import child, diagnosis, judge
from autograder.grading.child import encode
from autograder.grading.diagnosis import (
    ONE_OF,
    VariantTooSlow,
    diagnose,
    known_mistakes,
    student_answers,
    variant_answers,
    variant_files,
)
from autograder.grading.plan import stage_plan
from autograder.grading.protocol import parse_replies
from autograder.outputs.report import HIDDEN_NOTE
from autograder.record import Outcome
from tests.classes import grade, perfect, write_student
from tests.replies import encoded, judged, ran, right_bytes, right_lines

VARIANTS = ROOT / "tests" / "variants"
RULES = "01_rules"
MINIMAX = "03_minimax"


def _variant(stage_id: str, name: str) -> str:
    return (VARIANTS / stage_id / f"{name}.py").read_text()


def _with_function(source: str, donor: str, function: str) -> str:
    """source with its function replaced by donor's function of that name: two mistakes in one module."""
    mine = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == function)
    theirs = next(n for n in ast.parse(donor).body if isinstance(n, ast.FunctionDef) and n.name == function)
    lines = source.splitlines(keepends=True)
    given = "".join(donor.splitlines(keepends=True)[theirs.lineno - 1 : theirs.end_lineno])
    return "".join(lines[: mine.lineno - 1]) + given + "".join(lines[mine.end_lineno :])


def _name(stage_id: str, variant: str) -> str:
    """A variant's student: short, as names are (the stage's number, w or ok, the variant's place among them)."""
    kind = "ok" if variant.startswith("ok_") else "w"
    same = sorted(path.stem for path in (VARIANTS / stage_id).glob(f"{'ok' if kind == 'ok' else 'wrong'}_*.py"))
    return f"{stage_id[:2]}{kind}{same.index(variant) + 1}"


def _students() -> dict[str, dict[str, str]]:
    """student -> {stage id: source}: the reference, one student per variant (_name), and two with two mistakes."""
    winner, mover = STAGE_BY_ID[RULES].functions
    students = {"reference": perfect()}
    for stage in STAGES:
        for path in sorted((VARIANTS / stage.id).glob("*.py")):
            students[_name(stage.id, path.stem)] = {stage.id: path.read_text()}
    students["two-stages"] = {
        RULES: _variant(RULES, "wrong_missing_diagonal"),
        MINIMAX: _variant(MINIMAX, "wrong_max_for_both"),
    }
    both = _with_function(_variant(RULES, "wrong_missing_diagonal"), _variant(RULES, "wrong_o_moves_first"), mover)
    assert winner in both and both != _variant(RULES, "wrong_missing_diagonal")
    students["two-in-one"] = {RULES: both}
    return students


# A memo keyed by id(board) answers from whichever list last had that address: its answers depend on the memory
# of the process, so they cannot be matched answer by answer. It must stay "not a known mistake", never another's.
UNMATCHABLE = {_name("04_memoization", "wrong_key_list_id")}
# The mistakes each student makes, stage by stage.
EXPECTED = {
    **{
        name: {stage.id: {path.stem}} if name not in UNMATCHABLE else {}
        for stage in STAGES
        for path in variant_files(stage)
        for name in [_name(stage.id, path.stem)]
    },
    "two-stages": {RULES: {"wrong_missing_diagonal"}, MINIMAX: {"wrong_max_for_both"}},
    "two-in-one": {RULES: {"wrong_missing_diagonal", "wrong_o_moves_first"}},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("variant-class")
    for name, sources in _students().items():
        write_student(folder / "class" / name, sources)
    out = folder / "out"
    run = grade(folder / "class", out)
    assert run.returncode == 0, run.stderr
    return out


def _diagnosed(out) -> dict[str, dict[str, list[dict]]]:
    found = {}
    for name in _students():
        data = json.loads((out / name / "results.json").read_text())
        found[name] = {
            stage_id: entry["diagnosis"]
            for stage_id, entry in data["extra_data"]["stages"].items()
            if "diagnosis" in entry
        }
    return found


def _named(diagnoses: list[dict], expected: set[str]) -> set[str]:
    """The expected mistakes the diagnoses name, each diagnosis naming one (it may say "A or B" when the student's
    answers cannot tell A from B); a diagnosis that names none of them stands for itself."""
    named = set()
    for entry in diagnoses:
        alternatives = set(entry["name"].split(ONE_OF))
        named |= (alternatives & expected) or {entry["name"]}
    return named


def test_each_student_of_the_variant_class_is_told_their_own_mistake(graded):
    found = _diagnosed(graded)
    table = {
        name: {stage_id: _named(found[name][stage_id], expected.get(stage_id, set())) for stage_id in found[name]}
        for name, expected in EXPECTED.items()
    }
    assert table == EXPECTED
    for name in EXPECTED:
        for entries in found[name].values():
            assert all(entry["explained"] <= entry["wrong"] for entry in entries)
            assert sum(entry["explained"] for entry in entries) >= 0.9 * entries[0]["wrong"]


def test_a_right_student_is_never_diagnosed(graded):
    found = _diagnosed(graded)
    right = [name for name in _students() if name == "reference" or name[2:4] == "ok"]
    assert right and all(found[name] == {} for name in right)


def test_the_gradebook_holds_each_diagnosis(graded):
    db = sqlite3.connect(graded / "gradebook.db")
    rows = db.execute(
        "SELECT r.student, d.stage, d.name FROM diagnoses d JOIN run_students r ON r.submission_id = d.submission_id"
    ).fetchall()
    db.close()
    stored = {}
    for student, stage_id, name in rows:
        stored.setdefault(student, {}).setdefault(stage_id, []).append({"name": name})
    found = _diagnosed(graded)
    assert {s: {k: [{"name": e["name"]} for e in v] for k, v in d.items()} for s, d in found.items() if d} == stored


def test_the_report_and_stats_group_the_class_by_mistake(graded):
    report = (graded / "report.html").read_text()
    stats = subprocess.run(
        [sys.executable, "-m", "autograder", "stats", str(graded)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    assert stats.returncode == 0, stats.stderr
    says = (VARIANTS / MINIMAX / "wrong_max_for_both.py").read_text().split("\n", 1)[0].strip('"').rstrip(".")
    # Two students take the largest score for both players: the variant and the student with two mistakes.
    assert f"<b>{says}</b>: 2 students" in report
    assert f"{MINIMAX} looks like: {says}: 2 students" in stats.stdout
    feedback = (graded / "two-stages" / "feedback.html").read_text()
    assert says in feedback and "def " not in feedback.split("What this looks like")[1].split("</p>")[0]


def _hidden_run(stage_id: str, change) -> bytes:
    """The hidden run of a perfect child, its first batch changed by change(batch)."""
    lines = right_lines(stage_id, hidden=True)
    change(lines[1])
    return encoded(lines)


def _split(stage_id: str, hidden: bytes):
    """The stage judged with hidden as its hidden run; its tests and the diagnosis's (wrong, right)."""
    stage, plan = STAGE_BY_ID[stage_id], stage_plan(stage_id)
    result = judged(stage, right_bytes(stage_id), hidden=ran(hidden))
    visible = parse_replies(right_bytes(stage_id), plan, False, ids=plan.visible_ids)
    both = judge._merged(stage, visible, parse_replies(hidden, plan, False, ids=plan.hidden_ids))
    return result, *student_answers(plan, both, result.tests)


def test_the_diagnosis_reads_judging_s_verdict_on_each_board():
    """Are a student's answers split into right and wrong by the verdict judging gave them (TestResult.wrong_steps,
    the one that decided the grade), a wrong value, a value of the wrong type and an error alike?"""

    def change(batch):
        batch["values"][0], batch["values"][1] = encode("Q"), encode(7)
        step_id, batch["ids"], batch["values"] = (
            batch["ids"][2],
            batch["ids"][:2] + batch["ids"][3:],
            batch["values"][:2] + batch["values"][3:],
        )
        batch["details"].append({"id": step_id, "ok": False, "error": "ValueError", "message": "no"})

    lines = right_lines(RULES, hidden=True)
    changed = set(lines[1]["ids"][:3])
    result, wrong, right = _split(RULES, _hidden_run(RULES, change))
    judged_wrong = set().union(*(test.wrong_steps for test in result.tests))
    assert set(wrong) == judged_wrong == changed
    assert set(right) == stage_plan(RULES).step_ids - changed
    assert result.score < STAGE_BY_ID[RULES].points and all(test.outcome != Outcome.TAMPERED for test in result.tests)


# Answers a hostile child may send that the protocol lets through: a huge int, floats that are not numbers, a str or a
# bool where an int is due, lists nested as deep as an encoding goes, an object of a type of its own.
ODD = [
    encode(10**40),
    encode(float("nan")),
    encode(float("inf")),
    encode("1"),
    encode("0"),
    encode(True),
    encode([[1, [2, 3]], [], [[[]]]]),
    encode((0, 1)),
    encode(list(range(1000))),
    encode("x" * 10_000),
    "oMistake:wrong_max_for_both",
]


def _answering(stage_id: str, answers: dict[int, str]) -> tuple[bytes, bytes]:
    """The visible and hidden runs of a child that gives these answers (signatures: "!" and an error's kind for
    one it raised) and the right one everywhere else."""
    runs = []
    for hidden in (False, True):
        lines = right_lines(stage_id, hidden=hidden)
        for batch in lines[1:-1]:
            kept = [(i, answers.get(i, value)) for i, value in zip(batch["ids"], batch["values"], strict=True)]
            batch["ids"] = [i for i, value in kept if not value.startswith("!")]
            batch["values"] = [value for _, value in kept if not value.startswith("!")]
            batch["details"] = [
                {"id": i, "ok": False, "error": value[1:], "message": "no"}
                for i, value in kept
                if value.startswith("!")
            ]
        runs.append(encoded(lines))
    return runs[0], runs[1]


def _graded_as(stage_id: str, answers: dict[int, str]):
    visible, hidden = _answering(stage_id, answers)
    return judged(STAGE_BY_ID[stage_id], visible, hidden=ran(hidden))


def test_answers_crafted_against_the_diagnosis_show_only_what_they_are_and_touch_no_one_else():
    """Can replies made to look like a known mistake, or odd-typed and nested ones, crash grading, be told a mistake
    their answers do not show, or change what anyone else is told? A copy of a mistake's answers is that mistake
    (that is all the diagnosis reads); spoilt by odd values on a third of its wrong answers it is no known mistake;
    odd values everywhere are wrong answers like any other; the catalogue and an honest student's diagnosis stay as
    they were."""
    stage, plan = STAGE_BY_ID[MINIMAX], stage_plan(MINIMAX)
    catalogue = known_mistakes(MINIMAX)
    kept = copy.deepcopy(catalogue)
    mimicked = next(known for known in catalogue if known.name == "wrong_max_for_both")
    honest = _graded_as(MINIMAX, mimicked.answers)
    told = honest.diagnosis
    assert told and "wrong_max_for_both" in told[0].name.split(ONE_OF) and told[0].explained == told[0].wrong

    wrong = sorted(mimicked.wrong)
    spoilt = dict(mimicked.answers) | {step: ODD[n % len(ODD)] for n, step in enumerate(wrong[::3])}
    everywhere = {step: ODD[n % len(ODD)] for n, step in enumerate(sorted(plan.step_ids))}
    for answers in (spoilt, everywhere):
        result = _graded_as(MINIMAX, answers)
        assert result.score < stage.points and result.outcome != Outcome.TAMPERED
        assert result.diagnosis == () and result.wrong_answers > 0
    deeper = _graded_as(MINIMAX, {wrong[0]: "l" + json.dumps(["l" + json.dumps(["l[]"])])})  # past the child's depth
    assert deeper.score == 0 and deeper.outcome == Outcome.TAMPERED and deeper.diagnosis == ()

    assert known_mistakes(MINIMAX) == kept
    visible, hidden = _answering(MINIMAX, mimicked.answers)
    replies = judge._merged(
        stage,
        parse_replies(visible, plan, False, ids=plan.visible_ids),
        parse_replies(hidden, plan, False, ids=plan.hidden_ids),
    )
    assert diagnose(stage, replies, honest.tests) == (told, honest.wrong_answers)


@pytest.fixture
def worker(monkeypatch):
    """This process set up as a worker that computes variants' answers (its safety stop's signal handler)."""
    monkeypatch.setattr(sys, "getrecursionlimit", sys.getrecursionlimit)  # restored after the test
    sys.setrecursionlimit(2 * diagnosis.RECURSION_LIMIT)
    before = signal.signal(signal.SIGALRM, diagnosis._on_alarm)
    yield
    signal.signal(signal.SIGALRM, before)


def test_a_variant_s_answers_are_cut_by_a_count_of_calls_the_same_on_a_slower_machine(worker, monkeypatch):
    """Are a known mistake's answers cut off by a number of calls of its functions, not by time, so that a machine
    ten times slower gives the very same answers?"""
    source = _variant(MINIMAX, "wrong_max_for_both")
    whole = variant_answers(MINIMAX, source)
    monkeypatch.setattr(diagnosis, "VARIANT_CALLS", 5_000)
    cut = variant_answers(MINIMAX, source)
    assert 0 < len(cut) < len(whole) and cut.items() <= whole.items()
    run_step = child.run_step

    def slow(*args):
        start = time.process_time()
        reply = run_step(*args)
        end = start + 10 * (time.process_time() - start) + 0.0005
        while time.process_time() < end:
            pass
        return reply

    monkeypatch.setattr(child, "run_step", slow)
    assert variant_answers(MINIMAX, source) == cut


def test_a_variant_still_computing_at_the_safety_stop_is_an_error_of_the_course(worker, tmp_path, monkeypatch):
    """Is a known mistake that never ends stopped by the wall clock and reported as the course's error, naming its
    file, rather than left out of the catalogue on this machine alone?"""
    looping = _variant(RULES, "wrong_missing_diagonal") + "\n\ndef winner(board):\n    while True:\n        pass\n"
    with pytest.raises(VariantTooSlow):
        variant_answers(RULES, looping, 0.5)
    folder = tmp_path / RULES
    folder.mkdir()
    (folder / "wrong_loops.py").write_text(looping)
    monkeypatch.setattr(diagnosis, "VARIANTS", tmp_path)
    monkeypatch.setattr(diagnosis, "VARIANT_WALL_SECONDS", 0.5)
    with pytest.raises(VariantTooSlow, match="wrong_loops.py was still computing after 0.5 s"):
        diagnosis._build(STAGE_BY_ID[RULES])


def test_the_report_draws_each_student_s_counterexample_that_their_page_holds_back(graded):
    """Does the class report draw, under a failed hidden test, the student's simplest board where it is wrong with
    what came back and what was right, while their feedback page (before publishing) shows none of it?"""
    report, page = (graded / "report.html").read_text(), (graded / "two-stages" / "feedback.html").read_text()
    tests = json.loads((graded / "two-stages" / "results.json").read_text())["tests"]
    found = [test for test in tests if "counterexample" in test["extra_data"]]
    assert found and all(test["visibility"] != "visible" and test["status"] == "failed" for test in found)
    shown = {
        tuple(case.args[0])
        for stage in STAGES
        for check in stage_checks(stage.id)
        if check.visible
        for case in check.cases
    }
    for test in found:
        example = test["extra_data"]["counterexample"]
        board = "".join(f"<i>{square}</i>" for square in example["board"])
        drawn = f'aria-label="board {example["board"]}">{board}</span><span><a href="two-stages/feedback.html">'
        assert drawn + f"two-stages</a>: <code>{escape(example['call'])}</code> {escape(example['returned'])}" in report
        assert escape(example["expected"]) in report and example["expected"].startswith("expected ")
        assert test["output"] not in page and HIDDEN_NOTE in page and 'class="counterexamples"' not in page
        if tuple(example["board"]) not in shown:
            assert draw_with_key(example["board"]) not in page


# The pages of the variant class, looked at in a real browser (headless Chromium, as tests/test_browser.py does): on
# a laptop, a tablet and a phone, and printed on A4 (794 CSS pixels across: 210 mm at 96 px an inch).
WIDTHS = (1366, 768, 400)
PRINT_WIDTH = 794
VIEWS = [*((width, "screen") for width in WIDTHS), (PRINT_WIDTH, "print")]
# Elements that cut off what overflows them (overflow hidden or clip) but hold more than they show.
CLIPPED = """
return Array.from(document.querySelectorAll('body *')).filter(e => {
  const style = getComputedStyle(e);
  const cuts = ['hidden', 'clip'].includes(style.overflowX) || style.textOverflow == 'ellipsis';
  return cuts && e.scrollWidth > e.clientWidth + 1;
}).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60)).concat(
  Array.from(document.querySelectorAll('svg text')).filter(t => {
    const box = t.getBoundingClientRect(), svg = t.ownerSVGElement.getBoundingClientRect();
    return box.right > svg.right + 1 || box.left < svg.left - 1;
  }).map(t => 'svg text: ' + t.textContent));
"""
# Words drawn on more than one line: each word of each text node, as the browser laid it out (a word's parts
# between hyphens count apart: a line may end after a hyphen, as in print).
BROKEN_WORDS = """
const broken = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.parentElement.offsetParent || node.parentElement.closest('pre, svg')) continue;
  const re = /[^\\s-]+-*/g;
  for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
    const range = document.createRange();
    range.setStart(node, m.index);
    range.setEnd(node, m.index + m[0].length);
    const tops = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
    if (tops.size > 1) broken.push(m[0]);
  }
}
return broken;
"""


@pytest.mark.parametrize("page", ["report.html", "two-stages/feedback.html"])
@pytest.mark.parametrize("width, media", VIEWS, ids=[f"{width}-{media}" for width, media in VIEWS])
def test_the_pages_fit_every_width_with_no_text_clipped_or_word_broken(graded, tmp_path, page, width, media):
    """On screens of three widths and in print, does each page fit across, with no text cut off or word broken?"""
    from tools.screenshot import browser_missing, chromium

    missing = browser_missing()
    if missing:
        pytest.skip(f"browser tests skipped: {missing}")
    with chromium(tmp_path / "profile", width, 800) as driver:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})
        driver.get((graded / page).as_uri())
        assert driver.execute_script(f"return matchMedia('{media}').matches")
        if media == "print":  # the report prints whole: its closed counterexamples too (report.css)
            held = "details.counterexamples > :not(summary)"
            shown = driver.execute_script(
                f"return Array.from(document.querySelectorAll('{held}'), e => e.checkVisibility())"
            )
            assert all(shown) and (shown or page != "report.html")
        else:  # on a screen, everything a details holds is looked at opened
            driver.execute_script("document.querySelectorAll('details').forEach(e => { e.open = true; })")
        assert driver.execute_script("return window.innerWidth") == width
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert driver.execute_script(CLIPPED) == []
        assert driver.execute_script(BROKEN_WORDS) == []
        if page == "report.html":  # the students table never scrolls sideways in its box either: on a phone,
            # one block per student with a labelled tile per stage
            script = "const box = document.querySelector('#students .scroll'); return box.scrollWidth - box.clientWidth"
            assert driver.execute_script(script) <= 0
