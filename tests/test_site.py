"""Does the course site work offline in a real browser: the visible tests in Pyodide, the time limit, the match, the
zip `autograde grade` reads, nothing leaked and nothing fetched from another host?

Headless Chromium (Debian's chromium and chromium-driver) with every host but 127.0.0.1 unresolvable, the site
served by a local static server, driven through the page's window.course API. Python loads once for the file
(the module's page fixture): that costs seconds.
"""

import csv
import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autograder.authoring import site
from autograder.authoring.release import leaks
from autograder.course.stages import ROOT, STAGE_BY_ID, STAGES
from autograder.practice.hint import ladder
from tools.screenshot import browser_missing, chromium

MISSING = browser_missing() or site.missing_tools()
if MISSING:
    pytest.skip(f"site tests skipped: {MISSING}", allow_module_level=True)

pytestmark = pytest.mark.slow  # a real browser and Python in WebAssembly, end to end

RULES, MINIMAX = STAGE_BY_ID["01_rules"], STAGE_BY_ID["03_minimax"]
AXE = site.NODE_MODULES / "axe-core" / "axe.min.js"
# Every name resolves to nothing but the local server's address: a request for another origin fails.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
# Resolves once the game's status line says the student's function has answered.
ANSWERED = (
    "new Promise((done) => { const wait = () => /played|wins|draw|stops/.test("
    "document.getElementById('game').textContent) ? done(true) : setTimeout(wait, 100); wait(); })"
)
ENDLESS = "def winner(board):\n    while True:\n        pass\n\n\ndef to_move(board):\n    return 'X'\n"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the requests are checked in the browser, not printed
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert site.write_site(out) == []
    return out


@pytest.fixture(scope="module")
def server(built):
    handler = functools.partial(QuietHandler, directory=str(built))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def page(server, tmp_path_factory):
    """Stage 3's page with Python loaded (course.ready resolved)."""
    with chromium(tmp_path_factory.mktemp("profile"), flags=(OFFLINE,)) as driver:
        driver.set_script_timeout(120)
        driver.get(f"{server}/{MINIMAX.id}.html")
        assert driver.execute_async_script("arguments[0](await window.course.ready)") is True
        yield driver


def api(driver, expression: str, *args):
    """The value of an awaited expression of the page (window.course's calls), its arguments as args[0], ..."""
    script = (
        "const done = arguments[arguments.length - 1]; const args = arguments; "
        f"({expression}).then(done, (error) => done({{thrown: String(error)}}))"
    )
    return driver.execute_async_script(script, *args)


def run_tests(driver, stage, code: str) -> dict:
    assert api(driver, "window.course.setCode(args[0], args[1]).then(() => true)", stage.id, code) is True
    return api(driver, "window.course.runTests(args[0])", stage.id)


def terminal(stage, code: str, tmp: Path) -> tuple[subprocess.CompletedProcess, float]:
    """The same tests from a terminal in the student release: its output, and how long it took."""
    import time

    copy = tmp / "release"
    if not copy.exists():
        command = [sys.executable, "-m", "autograder", "release", str(copy)]
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    (copy / "assignments" / stage.id / stage.filename).write_text(code)
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", f"assignments/{stage.id}", "-q", "--color=no"]
    # As a student's terminal runs it: options given to the suite's own pytest (PYTEST_ADDOPTS) are not theirs.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True, env=env)
    return done, time.monotonic() - started


def starter(built: Path, stage) -> str:
    return (built / "course" / "assignments" / stage.id / stage.filename).read_text()


def untimed(text: str) -> str:
    return re.sub(r" in [0-9.]+s\b", " in Ns", text)


def test_stage_1_starter_passes_nothing_and_the_reference_everything_as_a_terminal_says(page, built, tmp_path):
    given = run_tests(page, RULES, starter(built, RULES))
    assert given["passed"] == 0 and given["failed"] > 0, given
    assert "winner is not written yet" in given["output"]
    reference = run_tests(page, RULES, RULES.solution_path.read_text())
    assert reference["failed"] == reference["errors"] == 0 and reference["passed"] == given["failed"], reference
    # The page's messages are the terminal's, line for line, but for the time pytest took.
    for result, code in ((given, starter(built, RULES)), (reference, RULES.solution_path.read_text())):
        shown, _ = terminal(RULES, code, tmp_path)
        assert untimed(result["output"]) == untimed(shown.stdout)


def test_an_endless_loop_is_stopped_within_a_minute_and_the_next_run_works(page):
    import time

    started = time.monotonic()
    stopped = run_tests(page, RULES, ENDLESS)
    took = time.monotonic() - started
    assert stopped["timedOut"] and took < 60, (stopped, took)
    assert f"more than {site.RUN_SECONDS} s" in stopped["output"] and "loop that never ends" in stopped["output"]
    after = run_tests(page, RULES, RULES.solution_path.read_text())
    assert after["passed"] > 0 and after["failed"] == after["errors"] == 0, after


def test_stage_3_reference_passes_and_loses_no_game_of_20_against_random(page, built):
    reference = MINIMAX.solution_path.read_text()
    result = run_tests(page, MINIMAX, reference)
    assert result["passed"] > 0 and result["failed"] == result["errors"] == 0, result
    tally = api(page, "window.course.match(args[0], {opponent: 'random', games: 20, seed: 7})", MINIMAX.id)
    assert tally["losses"] == 0 and tally["wins"] + tally["draws"] == 20, tally
    # The starter cannot play: the match says so instead of a tally.
    assert run_tests(page, MINIMAX, starter(built, MINIMAX))["passed"] == 0
    stopped = api(page, "window.course.match(args[0], {opponent: 'perfect', games: 20, seed: 7})", MINIMAX.id)
    assert "not written yet" in stopped["error"], stopped
    run_tests(page, MINIMAX, reference)
    against_perfect = api(page, "window.course.match(args[0], {opponent: 'perfect', games: 20, seed: 7})", MINIMAX.id)
    assert against_perfect == {"wins": 0, "draws": 20, "losses": 0}


def test_the_downloaded_zip_graded_by_autograde_grade_gets_the_references_points(page, tmp_path):
    # The page holds the references of stages 1 and 3 (the tests above), every other stage its starter.
    data = bytes(api(page, "window.course.submission().then((bytes) => Array.from(bytes))"))
    classroom = tmp_path / "submissions"
    (classroom / "direct").mkdir(parents=True)
    (classroom / "site.zip").write_bytes(data)
    for stage in (RULES, MINIMAX):  # the same modules handed in as files
        (classroom / "direct" / stage.filename).write_text(stage.solution_path.read_text())
    command = [sys.executable, "-m", "autograder", "grade", str(classroom), "--out", str(tmp_path / "out")]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=300)
    with open(tmp_path / "out" / "grades.csv", newline="") as grades:
        rows = {row["student"]: row for row in csv.DictReader(grades)}
    assert float(rows["site"][RULES.id]) == RULES.points and float(rows["site"][MINIMAX.id]) == MINIMAX.points
    assert rows["site"] == {**rows["direct"], "student": "site"}


def test_the_site_leaks_nothing_and_fetched_only_from_its_own_server(page, built, server):
    assert leaks(built) == []
    fetched = page.execute_script("return performance.getEntriesByType('resource').map((entry) => entry.name)")
    assert fetched and all(url.startswith(server + "/") for url in fetched), fetched
    assert [entry for entry in page.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_the_board_is_playable_by_keyboard_and_has_no_accessibility_violations(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page.execute_script(AXE.read_text())
    found = api(page, "axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})")
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found["violations"]] == []
    squares = page.find_elements(By.CSS_SELECTOR, "#board button")
    assert [square.get_attribute("aria-label") for square in squares] == [f"square {n}, empty" for n in range(9)]
    page.find_element(By.ID, "new-x").click()
    squares[4].send_keys(Keys.ENTER)  # a keyboard press on the centre square
    api(page, ANSWERED)
    labels = [square.get_attribute("aria-label") for square in squares]
    assert labels[4] == "square 4, X" and sum(label.endswith(", O") for label in labels) == 1, labels


def test_the_hints_come_one_at_a_time_and_the_index_shows_each_stages_last_run(page, server, built):
    from selenium.webdriver.common.by import By

    rungs = ladder(built / "course" / "assignments" / MINIMAX.id)
    button = page.find_element(By.ID, "hint")
    for number in range(1, len(rungs) + 2):  # one press more than there are hints: nothing more comes
        button.click()
        shown = [item.text for item in page.find_elements(By.CSS_SELECTOR, "#hints li")]
        assert len(shown) == min(number, len(rungs))
    assert shown[:-1] == [" ".join(rung.split()) for rung in rungs[:-1]]
    assert shown[-1].startswith("The answer: ") and button.text == "No more hints"
    page.get(f"{server}/index.html")
    links = page.find_elements(By.CSS_SELECTOR, ".stages a")
    assert [link.get_attribute("href") for link in links] == [f"{server}/{stage.id}.html" for stage in STAGES]
    progress = {
        item.get_attribute("data-progress"): item.text
        for item in page.find_elements(By.CSS_SELECTOR, "[data-progress]")
    }
    assert progress[MINIMAX.id].startswith("(last run: all ") and progress[STAGES[1].id] == ""
