"""Does every figure a reader takes as the grade show the final grade (record.FinalGrade), never a raw total?

One class is graded for real with a course policy (on time, late, zeroed by lateness), a [grade] table (07 not
assigned, the bonus as extra credit capped at 5), overrides (an excuse, an adjustment, a regrade granted with a
new score and one denied) and a roster naming a student who handed nothing in. The same submissions are graded
again (reused from the gradebook) under the bonus rules "apart" and "off". Then the report, the feedback pages,
the terminal table, `autograde stats` and `autograde publish` are read as the instructor and the student read
them: the pages parsed, the terminal's text captured.

The class, on the 85 points of 01-06 (07 is not assigned):
- ada: every stage, bonus included, on time: 85, and 5 of her 30 bonus points as extra credit: 90;
- alan: 01-04 right (60 raw), ten days late: zeroed by the policy (0, never a green 60);
- grace: 01 with a diagonal forgotten, every other stage right, 08 right; her regrade request on 01 was granted
  (set to 10), the one on 05 denied: 85 + 5 extra = 90;
- kim: every stage but 03, which is excused: 65 of 65 counted, scaled to 85;
- linus: every stage right, two days late (20 % off each: 68), and 02 adjusted by -5: 63;
- sam: the untouched starters (not started); tom: 01 alone (10: far below the class);
- barbara: in the roster, nothing handed in.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console as RichConsole

from autograder.admin import publish
from autograder.course.stages import BONUS_STAGES, CORE_STAGES, ROOT, STAGE_BY_ID
from autograder.outputs.console import Console
from autograder.outputs.gradebook import Gradebook
from tests import pages
from tests.classes import grade, reference, starter, write_student

DUE = datetime.fromisoformat("2025-03-07T23:59:00+01:00")
ASSIGNED = ["01_rules", "02_count_games", "03_minimax", "04_memoization", "05_winning_square", "06_count_results"]
POSSIBLE = 85  # the six assigned stages' points

POLICY = """
time_zone = "Europe/Berlin"
grace_minutes = 15

[due]
{due}

[late]
per = "day"
percent = 10
cap = 50
zero_after = 7

[grade]
assigned = {assigned}
{bonus}
"""

OVERRIDES = """
[[overrides]]
student = "kim"
stage = "03_minimax"
excuse = true
reason = "medical note"
by = "J. Smith"
on = 2025-03-01

[[overrides]]
student = "linus"
stage = "02_count_games"
adjust = -5
reason = "helper copied from a classmate, discussed in office hours"
by = "J. Smith"
on = 2025-03-10

[[regrades]]
student = "grace"
stage = "01_rules"
request = "my winner checks both diagonals"
outcome = "granted"
set = 10
response = "the hidden check was too strict"
by = "A. Assistant"
on = 2025-03-11

[[regrades]]
student = "grace"
stage = "05_winning_square"
request = "a blocked square should count"
outcome = "denied"
response = "winning_square asks for a square that wins, not one that blocks"
by = "J. Smith"
on = 2025-03-12
"""

ROSTER = "folder,id,name,email,section\n" + "".join(
    f"{name},S{number},{name.title()},{name}@example.edu,A\n"
    for number, name in enumerate(["ada", "alan", "barbara", "grace", "kim", "linus", "sam", "tom"], start=1)
)


def policy_text(bonus: str) -> str:
    due = "\n".join(f"{stage.id} = {DUE.strftime('%Y-%m-%dT%H:%M:%S')}" for stage in CORE_STAGES)
    return POLICY.format(due=due, assigned=json.dumps(ASSIGNED), bonus=bonus)


def _set_times(folder: Path, when: datetime) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when.timestamp(), when.timestamp()))


def write_class(submissions: Path) -> None:
    core = [stage.id for stage in CORE_STAGES]
    every = {stage_id: reference(stage_id) for stage_id in [*core, *(stage.id for stage in BONUS_STAGES)]}
    wrong_rules = reference("01_rules").replace("(0, 4, 8), (2, 4, 6),", "(0, 4, 8),")
    students = {
        "ada": every,
        "alan": {stage_id: reference(stage_id) for stage_id in core[:4]},
        "grace": {**{stage_id: reference(stage_id) for stage_id in core}, "01_rules": wrong_rules,
                  BONUS_STAGES[0].id: reference(BONUS_STAGES[0].id)},
        "kim": {stage_id: reference(stage_id) for stage_id in core if stage_id != "03_minimax"},
        "linus": {stage_id: reference(stage_id) for stage_id in core},
        "sam": {stage_id: starter(stage_id) for stage_id in core},
        "tom": {"01_rules": reference("01_rules")},
    }  # fmt: skip
    late = {"alan": timedelta(days=10), "linus": timedelta(days=2)}
    for name, sources in students.items():
        write_student(submissions / name, sources)
        _set_times(submissions / name, DUE + late.get(name, timedelta(days=-1)))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict[str, Path]:
    """OUT of each bonus rule ("extra" with a cap of 5, "apart", "off"), graded from the same submissions."""
    base = tmp_path_factory.mktemp("final")
    submissions = base / "submissions"
    write_class(submissions)
    (base / "overrides.toml").write_text(OVERRIDES)
    (base / "roster.csv").write_text(ROSTER)
    outs = {}
    rules = {"extra": 'bonus = "extra"\nbonus_cap = 5', "apart": 'bonus = "apart"', "off": 'bonus = "off"'}
    for rule, bonus in rules.items():
        (base / f"policy-{rule}.toml").write_text(policy_text(bonus))
        out = outs[rule] = base / f"out-{rule}"
        if rule != "extra":  # the same files and grader: every result is reused, and this run's course applied
            out.mkdir()
            shutil.copy(outs["extra"] / "gradebook.db", out / "gradebook.db")
        done = grade(
            submissions, out, "--policy", str(base / f"policy-{rule}.toml"), "--roster", str(base / "roster.csv"),
            "--overrides", str(base / "overrides.toml"), "--time-limit", "10",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    return outs


# ---------------------------------------------------------------------------------------------------------------
# What the instructor and each student read

GRADED = ["ada", "alan", "grace", "kim", "linus", "sam", "tom"]
FINALS = {"ada": 90, "alan": 0, "grace": 90, "kim": 85, "linus": 63, "sam": 0, "tom": 10}  # worked out above
GRADE_COLUMN = 1 + len(CORE_STAGES)  # the student's name, the core stages, then the grade


def report(out: Path) -> str:
    return (out / "report.html").read_text(encoding="utf-8")


def feedback(out: Path, student: str) -> str:
    return (out / student / "feedback.html").read_text(encoding="utf-8")


def results_json(out: Path, student: str) -> dict:
    return json.loads((out / student / "results.json").read_text())


def kpis(page: str) -> dict[str, str]:
    return {label: value for value, label in re.findall(r'<div class="kpi"><b>([^<]*)</b><span>([^<]*)</span>', page)}


def test_every_output_of_a_student_carries_the_same_final_grade(course):
    """results.json's score, grades.csv's final column and the final the report, the feedback page and the
    gradebook read: one number per student, and the one worked out by hand."""
    out = course["extra"]
    grades_csv = (out / "grades.csv").read_text().splitlines()
    csv_final = {line.split(",")[0]: float(line.split(",")[-1]) for line in grades_csv[1:]}
    book = Gradebook(out / "gradebook.db")
    stored = book.run_results(book.last_run_id())
    book.close()
    for student, points in FINALS.items():
        data = results_json(out, student)
        assert data["score"] == data["extra_data"]["final"]["points"] == points, student
        assert csv_final[student] == stored[student].final.points == points, student


def test_the_headline_figures_and_the_histogram_are_the_final_grades(course):
    """Median, mean, full marks and the histogram read the final grades out of the 85 assigned points, of the
    seven students graded (barbara, with no submission, is counted among the students, not in the figures)."""
    page = report(course["extra"])
    assert kpis(page) == {
        "students": "8",
        "median grade": "63 / 85",  # 0, 0, 10, 63, 85, 90, 90 (raw: 0, 10, 60, 80, 98, 100, 100: median 80)
        "mean grade": "48.3",  # 338 / 7
        "full marks": "3",  # ada and grace (90, with extra credit) and kim (85, an excused stage scaled)
        "need a look": "0",
        "need help": "4",
        "no submission": "1",
    }
    distributions = pages.section(page, "distributions")
    bins = [
        (title, int(count)) for title, count in re.findall(r"<title>([^<]*): (\d+) students</title>", distributions)
    ]
    assert sum(count for _, count in bins[:10]) == 7
    assert bins[0] == ("0–7", 2) and bins[1] == ("8–16", 1) and bins[7][1] == 1 and bins[9][1] == 3
    assert ">median 63<" in distributions and ">final grade (out of 85)<" in distributions  # the plot's labels
    assert "The final grades of the 7 students graded; 1 without a grade" in pages.text(distributions)


def test_the_students_table_shows_the_final_grade_with_the_raw_points_and_why(course):
    """The grade cell is the final grade; the raw points of the assigned stages stand beside it when they
    differ, with what made the difference; the tooltip has every step."""
    out = course["extra"]
    rows = pages.table(pages.section(report(out), "students"))
    assert list(rows) == ["ada", "alan", "barbara", "grace", "kim", "linus", "sam", "tom"]
    assert {name: row[GRADE_COLUMN].text for name, row in rows.items()} == {
        "ada": "90 raw 85 bonus +5",
        "alan": "0 raw 60 late −60",
        "barbara": "– not submitted",
        "grace": "90 raw 83 01 set to 10 after a regrade request; bonus +5",
        "kim": "85 raw 65 03 excused",
        "linus": "63 raw 85 late −17; 02 adjusted by -5",
        "sam": "0",
        "tom": "10",
    }
    for name in GRADED:
        final = results_json(out, name)["extra_data"]["final"]
        assert rows[name][GRADE_COLUMN].title == " ".join(final["steps"]), name
    header = pages.rows(pages.section(report(out), "students"))[0]
    assert header[GRADE_COLUMN].text == "grade / 85"
    assert 'href="barbara/feedback.html"' not in report(out)  # no page to open: nothing was handed in


def test_a_student_zeroed_for_lateness_shows_zero_not_a_green_60(course):
    """alan's 60 raw points, ten days late: 0 in the report's grade cell (red, not green), in the terminal's
    grade column and in the heading of his page; 60 only where it says it is raw."""
    out = course["extra"]
    grade = pages.table(pages.section(report(out), "students"))["alan"][GRADE_COLUMN]
    assert grade.text.split()[0] == "0" and "zero" in grade.classes and not {"full", "part"} & grade.classes
    assert "hsl(0," in re.search(r'<td class="num grade zero" style="([^"]+)"', report(out)).group(1)
    page = feedback(out, "alan")
    assert "Your grade: 0 of 85" in pages.text(page)
    # The strip under the heading says what each stage counts: 01-04 are 0 (late), not four green chips.
    chips = re.findall(r'<a class="(\w+)" href="#stage-(\w+)">\w+<b>([^<]*)</b>(?:<small>([^<]*)</small>)?', page)
    assert chips[:4] == [("zero", stage_id, f"0 / {STAGE_BY_ID[stage_id].points}", "late") for stage_id in ASSIGNED[:4]]
    assert chips[6] == ("neutral", "07_quickest_move", "0 / 15", "not counted")
    assert terminal(out)["alan"][-1] == "0"


def test_stages_outside_the_grade_are_shown_as_not_counted_never_as_failures(course):
    """07 is not assigned: in every student's row and page it reads "not counted", in grey, with no hint and
    no failed test for a student who never touched it; kim's excused 03 reads "excused" the same way."""
    out = course["extra"]
    rows = pages.table(pages.section(report(out), "students"))
    quickest = CORE_STAGES.index(STAGE_BY_ID["07_quickest_move"]) + 1
    for name, row in rows.items():
        cell = row[quickest]
        assert cell.text.endswith("not counted") and "neutral" in cell.classes, name
        assert not {"zero", "part", "full", "broken"} & cell.classes, name
    minimax = rows["kim"][CORE_STAGES.index(STAGE_BY_ID["03_minimax"]) + 1]
    assert minimax.text == "0 excused" and "neutral" in minimax.classes and "excused (medical note)" in minimax.title
    for name in GRADED:
        stage = pages.section(feedback(out, name), "stage-07_quickest_move")
        assert 'class="card uncounted"' in stage and '<span class="tag neutral">not counted</span>' in stage, name
        assert "This stage is not assigned in this course: it is not counted in your grade." in pages.text(stage)
        assert "Hints for this stage" not in stage
    assert 'class="test' not in pages.section(feedback(out, "sam"), "stage-07_quickest_move")  # the starter
    excused = pages.section(feedback(out, "kim"), "stage-03_minimax")
    assert '<span class="tag neutral">excused</span>' in excused and "Hints" not in excused


def test_who_needs_help_counts_every_student_to_act_on_with_the_reason(course):
    """Not started, no submission, zeroed by lateness, far below the class: each listed with why, and the
    heading counts students out of the whole roster (barbara included)."""
    helped = pages.section(report(course["extra"]), "needs-help")
    assert "Who needs help — 4 of 8 students" in pages.text(helped)
    listed = [pages.text(item) for item in re.findall(r"<li>(.*?)</li>", helped)]
    assert listed == [
        "alan: late: −60 of 60 raw points (zeroed); far below the class: 0 of 85 (class median 63)",
        "barbara: in the roster, no submission",
        "sam: not started: every assigned stage is the starter or not submitted",
        "tom: far below the class: 10 of 85 (class median 63)",
    ]
    assert 'href="alan/feedback.html"' in helped and 'href="barbara/' not in helped
    # linus lost 17 of his 85 raw points to lateness (a fifth: under the quarter that counts as a cut), and his
    # 63 is well above half the class median: he is not listed.
    assert "linus" not in helped


def test_the_instructors_changes_and_the_regrade_requests_are_listed(course):
    changes = pages.section(report(course["extra"]), "changes")
    tables = [pages.table(html) for html in changes.split("<table")[1:]]
    assert [[cell.text for cell in row] for row in tables[0].values()] == [
        ["grace", "01_rules", "set to 10 after a regrade request", "the hidden check was too strict", "A. Assistant",
         "2025-03-11"],
        ["kim", "03_minimax", "excused", "medical note", "J. Smith", "2025-03-01"],
        ["linus", "02_count_games", "adjusted by -5", "helper copied from a classmate, discussed in office hours",
         "J. Smith", "2025-03-10"],
    ]  # fmt: skip
    regrades = [[cell.text for cell in row] for row in pages.rows(changes.split("<table")[2]) if not row[0].header]
    assert regrades == [
        ["grace", "01_rules", "my winner checks both diagonals", "granted", "the hidden check was too strict",
         "A. Assistant", "2025-03-11"],
        ["grace", "05_winning_square", "a blocked square should count", "denied",
         "winning_square asks for a square that wins, not one that blocks", "J. Smith", "2025-03-12"],
    ]  # fmt: skip


def test_the_feedback_page_heads_with_the_final_grade_and_says_how_it_was_made(course):
    out = course["extra"]
    for name in GRADED:
        page = feedback(out, name)
        final = results_json(out, name)["extra_data"]["final"]
        assert f"Your grade: {FINALS[name]} of 85" in pages.text(page), name
        steps = re.findall(r"<li>(.*?)</li>", pages.section(page, "grade").split("</ol>")[0])
        assert [pages.text(step) for step in steps] == final["steps"], name
        assert pages.has_section(page, "deadlines"), name  # the policy's verdict per stage stays
    alan = pages.text(feedback(out, "alan"))
    assert "As graded, before the course's rules and changes: 60 of 85." in alan
    assert "Late penalty: −60 (01_rules −10; 02_count_games −10; 03_minimax −20; 04_memoization −20)." in alan
    assert "Deadlines — late penalty in your grade: −60 points" in alan
    grace = feedback(out, "grace")
    made = pages.section(grace, "grade").split("<table")
    assert [[cell.text for cell in row] for row in pages.table(made[1]).values()] == [
        ["01_rules", "set to 10 after a regrade request", "the hidden check was too strict", "A. Assistant",
         "2025-03-11"],
    ]  # fmt: skip
    requests = pages.table(made[2])
    assert [row[2].text for row in requests.values()] == ["granted", "denied"]
    assert "It counts 10 of 10 in your grade (set to 10 after a regrade request)." in pages.text(grace)
    assert "It includes 5 points of extra credit from the bonus stages." in pages.text(grace)
    linus = pages.text(feedback(out, "linus"))
    assert "It counts 3 of 10 in your grade (late −2; adjusted by -5)." in linus
    assert "Changes by the course staff" in linus and "Your regrade requests" not in linus
    assert "Changes by the course staff" not in pages.text(feedback(out, "tom"))


@pytest.mark.parametrize(
    "rule, ada, note",
    [
        ("extra", 90, "A bonus stage: its points are extra credit (at most 5 count); your bonus stages add 5 in all."),
        ("apart", 85, "A bonus stage: reported apart, not in your grade."),
        ("off", 85, "This course does not count the bonus stages: this stage is not counted in your grade."),
    ],
)
def test_each_bonus_rule_says_how_the_bonus_counts(course, rule, ada, note):
    """ada handed in all three bonus stages: 5 of their 30 points count under "extra" (the cap), none under
    "apart" (reported beside the grade) or "off" (not counted, in grey)."""
    out = course[rule]
    page = feedback(out, "ada")
    assert f"Your grade: {ada} of 85" in pages.text(page)
    stage = pages.section(page, f"stage-{BONUS_STAGES[0].id}")
    assert note in pages.text(stage)
    assert ('<span class="tag neutral">not counted</span>' in stage) == (rule == "off")
    row = pages.table(pages.section(report(out), "students"))["ada"]
    assert row[GRADE_COLUMN].text.split()[0] == str(ada)
    bonus = row[GRADE_COLUMN + 1 : GRADE_COLUMN + 1 + len(BONUS_STAGES)]
    assert all(("neutral" in cell.classes) == (rule == "off") for cell in bonus)
    assert results_json(out, "ada")["score"] == ada
    assert terminal(out)["ada"][-1] == str(ada)


# ---------------------------------------------------------------------------------------------------------------
# The terminal, `autograde stats` and `autograde publish`


def terminal(out: Path) -> dict[str, list[str]]:
    """The summary table `autograde grade` prints, for the run that wrote OUT: each student's cells as text."""
    book = Gradebook(out / "gradebook.db")
    run = book.last_run_id()
    results, absent = book.run_results(run), book.run_absent(run)
    book.close()
    console = Console()
    console.rich = RichConsole(file=StringIO(), width=200, color_system=None, highlight=False)
    console.summary(results, absent)
    lines = console.rich.file.getvalue().splitlines()
    cells = [[cell.strip() for cell in line.strip("│ ").split("│")] for line in lines if line.startswith("│")]
    return {row[0]: row[1:] for row in cells if row[0] and row[0] != "student"}


def test_the_terminal_table_ends_with_the_final_grade(course):
    table = terminal(course["extra"])
    assert {name: row[-1] for name, row in table.items()} == {
        **{name: str(points) for name, points in FINALS.items()},
        "barbara": "not submitted",
    }
    raw = len(CORE_STAGES)  # the raw total, after the core stages, as grades.csv has it
    assert table["alan"][raw] == "60" and table["linus"][raw] == "100"
    assert table["kim"][2] == "0 e" and table["ada"][6] == "15 ·"  # excused; not assigned


def test_stats_lists_the_same_students_who_need_help_as_the_report(course):
    out = course["extra"]
    shown = subprocess.run([sys.executable, "-m", "autograder", "stats", str(out)], cwd=ROOT, capture_output=True,
                           text=True, timeout=120, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "8 students" in shown.stdout and "Who needs help: 4 of 8 students." in shown.stdout
    listed = [line.strip() for line in shown.stdout.splitlines() if line.startswith("  ")]
    assert listed[:4] == [
        "alan: late: −60 of 60 raw points (zeroed); far below the class: 0 of 85 (class median 63)",
        "barbara: in the roster, no submission",
        "sam: not started: every assigned stage is the starter or not submitted",
        "tom: far below the class: 10 of 85 (class median 63)",
    ]


@pytest.mark.parametrize("show_hidden", [False, True], ids=["held-back", "published"])
def test_publish_hands_each_student_their_final_grade(course, tmp_path, show_hidden):
    """What a student receives (their page and results.json) heads with the same final grade as OUT's, before
    and after the grades are published, with the changes and regrades that made it."""
    out, dest = course["extra"], tmp_path / "dest"
    assert publish.main([str(out), str(dest), *(["--show-hidden"] if show_hidden else [])]) == 0
    for name, points in FINALS.items():
        data = json.loads((dest / name / "results.json").read_text())
        assert data["score"] == points and data["extra_data"]["final"] == results_json(out, name)["extra_data"]["final"]
        page = (dest / name / "feedback.html").read_text()
        assert f"Your grade: {points} of 85" in pages.text(page), name
    grace = pages.text((dest / "grace" / "feedback.html").read_text())
    assert "set to 10 after a regrade request" in grace and "a blocked square should count" in grace
    assert "How your grade was made" in grace and "denied" in grace
