"""Do the class report and the feedback pages show what the grader found, escaped, with hidden details held back?

The main class is graded by the real grader: a perfect student (copies of solutions/), a starter student
(the untouched assignments/ starters), a mixed one (one bug, one endless loop, one crash at import, one
exception whose message is HTML) and a student whose name is HTML. Class sizes 0, 1 and 300 are built from
submission_result with hand-made stage results, which is quicker than grading 300 submissions. Last, hostile text
(script, image with an event handler, template syntax, a javascript: link) goes into every string of a class's
results, and the pages must hold no element or attribute that the same pages without it do not.
"""

import dataclasses
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markupsafe import escape  # the pages' own escaping (Jinja2's)

from autograder.admin.final_grade import final_grade
from autograder.admin.overrides import NO_OVERRIDES
from autograder.admin.settings import CORE_IDS, CourseSettings
from autograder.course.stages import CORE_STAGES, STAGES, TOTAL_POINTS
from autograder.grading import judge, sandbox
from autograder.grading.judging import fail_all
from autograder.grading.ungraded import ungraded_result
from autograder.outputs.folders import output_folders
from autograder.outputs.gradesheet import points
from autograder.outputs.report import (
    HIDDEN_NOTE,
    feedback_href,
    feedback_html,
    markdown,
    pass_rates,
    report_html,
    row_html,
    write_pages,
)
from autograder.outputs.report.pages import section_html, stage_cell
from autograder.outputs.results import from_json, submission_result
from autograder.outputs.stats import number
from autograder.record import Change, Outcome, Regrade, StageResult, SubmissionResult, TestResult
from autograder.verbs import grade
from tests import pages

HTML_NAME = "eve <script>alert(1)"
HTML_MESSAGE = "<script>alert(1)</script> & <b>"


def copy_class(root: Path) -> None:
    """root/<student>/<stage>/<module>.py for a perfect, a starter and a mixed student."""
    for stage in STAGES:
        for student, source in (("perfect", stage.solution_path), ("starter", stage.starter_path)):
            target = root / student / stage.id / stage.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    shutil.copytree(root / "starter", root / HTML_NAME)
    shutil.copytree(root / "perfect", root / "mixed")
    mixed = root / "mixed"
    rules = mixed / "01_rules" / "rules.py"
    rules.write_text(rules.read_text().replace("(0, 4, 8), (2, 4, 6),", "(0, 4, 8),"))  # a diagonal forgotten
    loop = mixed / "02_count_games" / "count_games.py"
    loop.write_text(loop.read_text() + "\nwhile True:\n    pass\n")
    crash = mixed / "03_minimax" / "minimax.py"
    crash.write_text("import os\nos._exit(3)\n" + crash.read_text())
    memo = mixed / "04_memoization" / "memoization.py"
    memo.write_text(
        memo.read_text().replace(
            "def score(board):\n", f"def score(board):\n    raise ValueError({HTML_MESSAGE!r})\n", 1
        )
    )


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> tuple[Path, dict[str, SubmissionResult]]:
    """(OUT, results by student) of the small class, graded for real with short limits (the loop ends sooner)."""
    root = tmp_path_factory.mktemp("class")
    copy_class(root / "submissions")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            judge, "stage_limits", lambda stage, wall_left=None: sandbox.Limits(cpu_seconds=4, wall_seconds=8)
        )
        assert grade.main([str(root / "submissions"), "--out", str(out), "--quiet"]) == 0
    results = [from_json(json.loads(path.read_text())) for path in out.glob("*/results.json")]
    results = {result.student: result for result in results}
    write_pages(out, results)
    return out, results


def report_of(out: Path) -> str:
    return (out / "report.html").read_text(encoding="utf-8")


def section(page: str, anchor: str) -> str:
    start = page.index(f'id="{anchor}"')
    return page[start : page.index("</section>", start)]


def test_every_student_is_linked_to_a_feedback_page_that_exists(graded):
    out, results = graded
    report = report_of(out)
    assert set(results) == {"perfect", "starter", "mixed", HTML_NAME}
    hrefs = set(re.findall(r'href="([^"#]+)"', report))
    for student in results:
        assert escape(feedback_href(student)) in hrefs
        page = (out / unquote(feedback_href(student))).read_text(encoding="utf-8")
        assert f"<title>Feedback for {escape(student)}</title>" in page
    # The link is percent-encoded, so a browser finds the folder whatever characters the name holds; `<` and `>`
    # are no file names on FAT or NTFS, so that folder has `_` for them and the name's hash (outputs/folders.py).
    assert re.fullmatch(r"eve%20_script_alert%281%29~[0-9a-f]{10}/feedback.html", feedback_href(HTML_NAME))


def test_pass_rates_count_only_working_modules_lowest_first(graded):
    """Is each test's pass rate taken over the modules of its stage that worked (not the starters, not the ones
    stopped), the lowest first, and does the chart show the same?"""
    out, results = graded
    rows = pass_rates(results)
    assert len(rows) == len(results["perfect"].tests)  # one row per test, two stages' "board-unchanged" apart
    assert [row.rate for row in rows] == sorted(row.rate for row in rows)
    first = next(row for row in rows if row.stage == "01_rules" and row.check == "winner/diagonals")
    assert (first.passed, first.working) == (1, 2)  # perfect and mixed worked; mixed forgot a diagonal
    minimax = next(row for row in rows if row.stage == "03_minimax")
    assert minimax.working == 1  # mixed's minimax crashed while it loaded, the starters are not counted
    shown = re.findall(r"\((\d+)/(\d+)\)</tspan>", section(report_of(out), "tests"))
    assert [(int(a), int(b)) for a, b in shown] == [(row.passed, row.working) for row in rows]


def test_what_could_not_be_graded_normally_needs_a_look_with_the_reason(graded):
    out, results = graded
    looks = section(report_of(out), "needs-look")
    assert "mixed" in looks and "perfect" not in looks and "starter" not in looks
    assert "02_count_games" in looks and "timed out" in looks
    assert "03_minimax" in looks and "crashed" in looks
    assert "04_memoization" not in looks  # an exception is a wrong answer, not a crash
    assert results["mixed"].stages["02_count_games"].status.reason in unescape(looks)
    assert "1 of 4 students" in looks


def test_the_table_shows_each_stage_kind_in_colour_and_words(graded):
    out, results = graded
    students = section(report_of(out), "students")
    grades = {name: row[1 + len(CORE_STAGES)] for name, row in pages.table(students).items()}
    # No course policy, bonus rule or change: each grade is the final grade, here the raw core total.
    assert {name: cell.text for name, cell in grades.items()} == {
        name: points(result.final.points) for name, result in results.items()
    }
    assert grades["perfect"].text == "100" and "full" in grades["perfect"].classes
    assert "zero" in grades["starter"].classes and "zero" in grades[HTML_NAME].classes
    assert students.count("<tr>") == 1 + 4  # the header row and one per student
    assert students.count("starter left as is</small>") == 2 * len(STAGES)  # the starter and the HTML name
    assert "◷ timed out</small>" in students and "crashed</small>" in students
    assert "bubblewrap" in report_of(out) or "Warning: submissions were not run in the full sandbox" in report_of(out)


def test_html_from_a_submission_is_shown_as_text(graded):
    out, _ = graded
    pages = [report_of(out)] + [path.read_text(encoding="utf-8") for path in out.glob("*/feedback.html")]
    for page in pages:
        assert "<script" not in page and HTML_MESSAGE not in page
    assert escape(HTML_NAME) in report_of(out)
    mixed = (out / "mixed" / "feedback.html").read_text(encoding="utf-8")
    assert escape(HTML_MESSAGE) in mixed  # the visible test shows the exception message, escaped


def test_hidden_details_wait_for_show_hidden(graded):
    out, results = graded
    mixed = results["mixed"]
    hidden = next(t for t in mixed.tests if not t.visible and t.check == "winner/diagonals")
    detail = escape(hidden.output.splitlines()[0])  # "winner was not right on 133 of 279 boards."
    before = (out / "mixed" / "feedback.html").read_text(encoding="utf-8")
    assert detail not in before and HIDDEN_NOTE in before
    assert escape(hidden.name) in before  # the name, status and score still show
    after = feedback_html(mixed, show_hidden=True)
    assert detail in after
    visible = next(t for t in mixed.tests if t.visible and t.outcome != Outcome.PASSED)
    assert escape(visible.output.splitlines()[0]) in before


def test_the_pages_need_nothing_from_the_network(graded):
    out, _ = graded
    for page in [report_of(out), (out / "mixed" / "feedback.html").read_text(encoding="utf-8")]:
        assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"] * page.count("<svg")
        assert "<script" not in page and "src=" not in page and "@import" not in page and "url(" not in page


# ---------------------------------------------------------------------------------------------------------------
# Hand-made classes: sizes, isolation, markdown


def fake_result(student: str, seed: int, level: str = "bubblewrap", outcome: str | None = None) -> SubmissionResult:
    """A record: each test passes or fails by seed; outcome (e.g. "timeout") hits stage 02."""
    stages = {}
    for index, stage in enumerate(STAGES):
        tests = [
            TestResult(
                stage.id,
                f"check/{n}",
                stage.functions[0],
                f"check number {n}",
                2,
                0,
                Outcome.FAILED,
                n < 2,
                f"wrong on this board:\n\n```\n X | O | 2\n```\n\nTry this: `{student}`",
            )  # fmt: skip
            for n in range(stage.points // 2)
        ]
        for n, test in enumerate(tests):
            if (seed * 7 + index * 3 + n * 5) % 11 < 7 - n % 3:
                test.score, test.outcome, test.output = 2, Outcome.PASSED, ""
        if outcome and stage.id == "02_count_games":
            for test in tests:
                test.score, test.outcome, test.output = 0, Outcome(outcome), "count_games.py stopped: took too long"
        score = sum(test.score for test in tests)
        worst = "passed" if score == stage.points else outcome if outcome and index == 1 else "failed"
        stages[stage.id] = StageResult(stage.id, score, stage.points, Outcome(worst), "", tests)
    return submission_result(student, stages, sandbox.Isolation(level, f"{level} for the test"), [], 1.0)


def test_a_stage_section_drawn_before_is_reused_only_for_the_same_section():
    """A stage's section of a feedback page is drawn once per distinct content: is every page exactly what it is
    drawn afresh, each student's own outputs in it, whether its sections repeat another's, partly or not at all,
    and with the hidden tests' outputs held back or shown?"""
    results = [fake_result(name, seed) for name, seed in (("ann", 3), ("bob", 3), ("ann", 3), ("ann", 4))]
    pages_of = [(result, hidden) for result in results for hidden in (False, True)]
    warm = [feedback_html(result, hidden) for result, hidden in pages_of]
    fresh = []
    for result, hidden in pages_of:
        section_html.cache_clear()
        fresh.append(feedback_html(result, hidden))
    assert warm == fresh
    assert "<code>bob</code>" in warm[2] and "<code>ann</code>" not in warm[2]
    assert warm[0] == warm[4] != warm[6] and warm[0] != warm[1]


def test_a_stage_cell_drawn_before_is_reused_only_for_the_same_cell():
    """Is every student's row of the class report, whose stage cells are drawn once per distinct cell, exactly the
    row drawn afresh, for students whose stages score alike and apart (and one whose stage two timed out)?"""
    results = {f"s{seed}": fake_result(f"s{seed}", seed) for seed in (1, 2, 1, 3)}
    results["late"] = fake_result("late", 1, outcome="timeout")
    folders = output_folders(results)
    warm = {name: row_html(name, result, folders).cells for name, result in results.items()}
    for name, result in results.items():
        stage_cell.cache_clear()
        assert row_html(name, result, folders).cells == warm[name], name
    assert dict(warm["s1"])["02_count_games"] != dict(warm["late"])["02_count_games"]


def test_no_students_still_makes_a_report(tmp_path):
    report = write_pages(tmp_path, {})
    page = report.read_text(encoding="utf-8")
    assert "No submissions were graded." in page and "no submissions graded yet" in page
    assert page.count("<svg") == 1 + len(STAGES) + 1


def test_one_student(tmp_path):
    result = fake_result("solo", 3)
    report = write_pages(tmp_path, {"solo": result})
    page = report.read_text(encoding="utf-8")
    assert 'href="solo/feedback.html"' in page
    assert f"{points(result.total)} / {TOTAL_POINTS}" in page  # the median of one student is their total
    assert (tmp_path / "solo" / "feedback.html").exists()


def test_three_hundred_students_are_quick_and_all_linked(tmp_path):
    results = {f"student{n:03}": fake_result(f"student{n:03}", n, outcome="timeout" if n % 50 == 0 else None)
               for n in range(300)}  # fmt: skip
    started = time.perf_counter()
    report = write_pages(tmp_path, results)
    assert time.perf_counter() - started < 10
    page = report.read_text(encoding="utf-8")
    assert all(f'href="{name}/feedback.html"' in page for name in results)
    assert "6 of 300 students" in section(page, "needs-look")
    median = statistics.median(result.total for result in results.values())
    assert f"median {number(median)}" in page
    assert len(list(tmp_path.glob("*/feedback.html"))) == 300


def test_weaker_isolation_is_a_visible_warning(tmp_path):
    results = {"a": fake_result("a", 1), "b": fake_result("b", 2, level="rlimits")}
    page = write_pages(tmp_path, results).read_text(encoding="utf-8")
    assert 'class="warn"' in page and "rlimits for the test" in page
    calm = write_pages(tmp_path, {"a": fake_result("a", 1)}).read_text(encoding="utf-8")
    assert 'class="warn"' not in calm and "bubblewrap for the test" in calm


def test_markdown_makes_code_blocks_and_paragraphs_and_escapes_both():
    shown = markdown("first <i>line</i>\n\n```\n X | <O> \n```\nTry **this**: `pytest`")
    assert shown == (
        "<p>first &lt;i&gt;line&lt;/i&gt;</p>\n<pre><code> X | &lt;O&gt; \n</code></pre>\n"
        "<p>Try <strong>this</strong>: <code>pytest</code></p>"
    )
    assert markdown("```\nunclosed") == "<pre><code>unclosed</code></pre>"  # an unclosed fence still shows its text
    assert markdown("- a row\n- a column") == "<ul>\n<li>a row</li>\n<li>a column</li>\n</ul>"


def test_markdown_shows_what_a_student_wrote_as_text():
    """Python names, links, images, entities and HTML in a message: shown as written, nothing fetched or run."""
    message = "name '__init__' is not defined: [x](javascript:alert(1)) ![t](https://example.invalid/t.png) &amp;"
    assert markdown(message) == f"<p>{message.replace('&', '&amp;')}</p>"
    assert (
        markdown("<https://example.invalid> <b onclick=x>")
        == "<p>&lt;https://example.invalid&gt; &lt;b onclick=x&gt;</p>"
    )


def test_a_submission_that_could_not_be_graded_is_listed_with_its_reason(tmp_path):
    """Is an ungraded submission shown apart, with the reason escaped, and its zeros marked "not graded"?"""
    reason = "the grader failed while grading 01_rules: KeyError: '<b>' (judge.py line 1)"
    results = {
        "ada": fake_result("ada", 1),
        HTML_NAME: ungraded_result(HTML_NAME, reason, sandbox.Isolation("bubblewrap", "for the test")),
    }
    notes = ["2 regraded: the time limit changed (60 s -> 10 s)", "skipped <notes.txt>: not a submission"]
    page = write_pages(tmp_path, results, notes=notes).read_text(encoding="utf-8")
    listed = section(page, "ungraded")
    assert escape(HTML_NAME) in listed and escape(reason) in listed and "ada" not in listed
    assert "could not be graded" in page  # a KPI next to the others
    assert section(page, "students").count("could not be graded</small>") == len(STAGES)
    about = section(page, "notes")
    assert all(escape(note) in about for note in notes)
    feedback = (tmp_path / unquote(feedback_href(HTML_NAME))).read_text(encoding="utf-8")
    assert "This submission could not be graded" in feedback
    assert reason in "".join(Parsed(feedback).text) and reason not in feedback  # shown, as text
    # Its zeros are no grade: not in the heading of its page, the table's grade cell or the headline figures.
    assert "Your grade: not given yet" in pages.text(feedback)
    grade = pages.table(section(page, "students"))[HTML_NAME][1 + len(CORE_STAGES)]
    assert grade.text == "– not graded" and "zero" not in grade.classes
    assert "The final grades of the 1 student graded; 1 without a grade" in pages.text(page)


def test_a_student_named_like_an_output_gets_a_folder_of_its_own(tmp_path):
    """Does a student called report.html get a feedback page that is linked, without replacing the class report?"""
    results = {"report.html": fake_result("report.html", 1), "ada": fake_result("ada", 2)}
    report = write_pages(tmp_path, results)
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<h1>Class report</h1>" in page
    href = feedback_href("report.html")
    assert href != "report.html/feedback.html" and f'href="{escape(href)}"' in page
    assert "Feedback for report.html" in (tmp_path / href).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------------
# Hostile text in every field


HOSTILE = (
    '<script>alert(1)</script> "><img src=x onerror=alert(2)> {{ 7*7 }} {% raw %}'
    " [click](javascript:alert(3)) ![t](https://example.invalid/t.png) <https://example.invalid>"
    "\n\n<img src=x onerror=alert(4)>\n```\n</code></pre><script>alert(5)</script>\n```\n"
)
# Fields whose words the pages branch on: kept as they are in one of the two runs, so that every branch that
# shows a text (a known stage, a visible test) is taken with hostile text in it. Outcomes are an enum: no text.
STRUCTURAL = {"stage", "check", "isolation_level", "status", "counted", "bonus_rule", "action", "outcome"}


def poisoned(value, keep_structure: bool, key: str = ""):
    """value with HOSTILE added to every string in it (and to the stages' keys unless keep_structure)."""
    if isinstance(value, Outcome):
        return value
    if isinstance(value, str):
        return value if keep_structure and key in STRUCTURAL else value + HOSTILE
    if isinstance(value, list | tuple):
        return type(value)(poisoned(item, keep_structure, key) for item in value)
    if isinstance(value, dict):
        rename = key == "stages" and not keep_structure
        return {(name + HOSTILE if rename else name): poisoned(item, keep_structure) for name, item in value.items()}
    if dataclasses.is_dataclass(value):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
        return type(value)(**{name: poisoned(item, keep_structure, name) for name, item in fields.items()})
    return value


class Parsed(HTMLParser):
    """The elements, attributes and text of a page, as a browser's parser would find them."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.hrefs: list[str] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            self.attributes.add(name)
            if name in ("href", "src", "xlink:href"):
                self.hrefs.append(value or "")

    def handle_data(self, data):
        self.text.append(data)


def small_class() -> dict[str, SubmissionResult]:
    """A timeout, a crash, weaker isolation, a stage that did not import, notes, and a submission not graded."""
    reason = "the grader failed while grading 01_rules: KeyError"
    results = {
        "ada": fake_result("ada", 1, level="rlimits", outcome="timeout"),
        "grace": fake_result("grace", 2, outcome="crashed"),
        "linus": ungraded_result("linus", reason, sandbox.Isolation("bubblewrap", "for the test")),
    }
    results["ada"].output += "\n\n**bold** notes, `code` and\n- a list"
    results["ada"].stages["01_rules"].message = "rules.py could not be imported"
    # Final grades with every text the instructor writes: a change's reason, a regrade's request and response.
    settings = CourseSettings(CORE_IDS[:-1], "extra", Fraction(5))
    excuse = Change("02_count_games", "excuse", None, "a medical note", "J. Smith", "2025-03-01")
    regraded = Change("01_rules", "set", 8.0, "the check was too strict", "A. Assistant", "2025-03-02", "look again")
    regrades = (
        Regrade("01_rules", "look again", "granted", "the check was too strict", "A. Assistant", "2025-03-02"),
        Regrade("03_minimax", "and this one", "denied", "it is right as graded", "J. Smith", "2025-03-03"),
    )
    results["ada"].final = final_grade(results["ada"], settings, {"02_count_games": excuse})
    results["grace"].final = final_grade(results["grace"], settings, {"01_rules": regraded}, regrades)
    results["linus"].final = final_grade(results["linus"], settings)
    return results


@pytest.mark.parametrize("keep_structure", [True, False], ids=["free-text", "every-string"])
def test_hostile_text_in_every_field_adds_no_element_or_attribute(keep_structure):
    """Script, image, event handler, javascript: link, template syntax in any string: never markup, only text."""
    clean_results = small_class()
    results = {name + HOSTILE: poisoned(result, keep_structure) for name, result in clean_results.items()}
    absent = {"barbara": final_grade(None, CourseSettings(), *NO_OVERRIDES.for_student("barbara"))}
    hostile_absent = {name + HOSTILE: poisoned(final, keep_structure) for name, final in absent.items()}
    pages = {
        "report": (
            report_html(results, ["2 regraded" + HOSTILE], absent=hostile_absent),
            report_html(clean_results, ["2 regraded"], absent=absent),
        )
    }
    for show_hidden in (False, True):
        for (name, result), clean in zip(results.items(), clean_results.values(), strict=True):
            pages[f"{name[:5]} {show_hidden}"] = (feedback_html(result, show_hidden), feedback_html(clean, show_hidden))
    for which, (page, _) in pages.items():
        found = Parsed(page)
        assert not {"script", "img", "iframe", "object", "embed", "form", "base"} & found.tags, which
        assert not any(name.startswith("on") for name in found.attributes), which
        assert all(href.startswith("#") or href.endswith("/feedback.html") or href == "data:," for href in found.hrefs)
        assert all(urlsplit(href).scheme == "" for href in found.hrefs if href != "data:,"), which  # relative only
        assert "{{ 7*7 }}" in "".join(found.text) and "<script>alert(1)</script>" in "".join(found.text), which
    # Nothing but what the same pages hold without the hostile text: the markup comes from the templates alone.
    for which, (page, clean) in pages.items():
        hostile, plain = Parsed(page), Parsed(clean)
        assert hostile.tags <= plain.tags | {"ul", "li", "pre", "code", "strong", "p"}, which
        assert hostile.attributes <= plain.attributes, which


def test_the_pages_need_no_browser_library():
    """The report package renders pages; the headless browser is the tests' and tools/screenshot.py's alone."""
    code = "import sys, autograder.outputs.report; print(sorted(m for m in sys.modules if m.startswith('selenium')))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


def test_stages_nobody_was_assigned_or_worked_on_have_no_column(tmp_path):
    """The bonus off and no bonus stage handed in: the students table has no bonus column, no header and no cell
    (none in the rows drawn as the students were graded either, before the class was known), nothing hidden by a
    style; with the bonus apart and handed in by one student, every bonus column is back."""
    results = {}
    for n, name in enumerate(("ada", "grace")):
        result = fake_result(name, n)
        for stage in STAGES:
            if stage.bonus:
                result.stages[stage.id] = fail_all(stage, Outcome.MISSING, "not submitted")
        result.final = final_grade(result, CourseSettings(CORE_IDS, "off"))
        results[name] = result
    bonus = [stage for stage in STAGES if stage.bonus]
    drawn = {name: row_html(name, result, output_folders(results)) for name, result in results.items()}
    for page in (report_html(results), report_html(results, rows=drawn)):
        table = pages.section(page, "students")
        headers = re.findall(r"<th[^>]*>(.*?)</th>", table, re.DOTALL)
        assert len(headers) == 1 + len(CORE_STAGES) + 1, headers  # student, the core stages, the grade
        assert not any(stage.module.split("_")[0] in header for stage in bonus for header in headers)
        rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.DOTALL)
        assert len(rows) == 2 and all(row.count("<td") == len(headers) for row in rows), rows
        assert not any(f"s-{stage.id}" in table for stage in bonus) and "bonus-total" not in table
        assert ".students .s-" not in page.split("</style>", 1)[0]  # no cell is hidden by a style
        assert all(f'class="num s-{stage.id} ' in table for stage in CORE_STAGES)  # the core cells stay
    kept = fake_result("linus", 3)
    kept.final = final_grade(kept, CourseSettings(CORE_IDS, "apart"))
    shown = pages.section(report_html({**results, "linus": kept}, rows=drawn), "students")
    assert "bonus<br>" in shown and all(shown.count(f'class="num s-{stage.id} ') == 3 for stage in bonus)
    assert shown.count("bonus-total") == 3
