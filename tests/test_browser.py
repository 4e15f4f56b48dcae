"""Do the report and the feedback pages work in a real browser: no console errors, plots drawn, links that resolve?

Headless Chromium from Debian (chromium, chromium-driver), driven by selenium. Without them every test here
is skipped with the reason, which `make test` prints in its summary (pytest -ra).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course.stages import STAGES
from autograder.outputs.report import write_pages
from tests.test_report import HTML_NAME, fake_result
from tools import screenshot
from tools.screenshot import browser_missing, chromium

MISSING = browser_missing()
if MISSING:
    pytest.skip(f"browser tests skipped: {MISSING}", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402 (only importable when the skip above did not happen)

WIDTH, HEIGHT = 1366, 768  # a laptop screen


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """A class of 12 students: one whose name is HTML, two whose stage 02 timed out or crashed."""
    out = tmp_path_factory.mktemp("pages")
    names = [f"student {n:02}" for n in range(9)] + [HTML_NAME, "late#1", "ümlaut"]
    outcomes = {"late#1": "timeout", "student 03": "crashed"}
    write_pages(out, {name: fake_result(name, n, outcome=outcomes.get(name)) for n, name in enumerate(names)})
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("profile"), WIDTH, HEIGHT) as driver:
        yield driver


def severe(driver) -> list[dict]:
    """Console entries at error level since the last call (get_log empties the buffer)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_report_loads_without_console_errors(browser, out):
    browser.get((out / "report.html").as_uri())
    assert browser.title == "Class report"
    assert severe(browser) == []
    # Readable on a laptop: nothing is wider than the window, so there is no sideways scrolling.
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def test_the_plots_are_drawn_with_a_size(browser, out):
    browser.get((out / "report.html").as_uri())
    plots = browser.find_elements(By.TAG_NAME, "svg")
    assert len(plots) == 1 + len(STAGES) + 1  # totals, one per stage, pass rates
    for plot in plots:
        assert plot.is_displayed()
        assert plot.size["width"] > 100 and plot.size["height"] > 40
        assert plot.find_elements(By.TAG_NAME, "rect")
    # The totals histogram is on the first screen, not below it.
    assert plots[0].location["y"] + plots[0].size["height"] <= HEIGHT


def test_every_student_link_opens_their_feedback_page(browser, out):
    browser.get((out / "report.html").as_uri())
    links = browser.find_elements(By.CSS_SELECTOR, "#students td:first-child a")
    targets = [(link.text, link.get_attribute("href")) for link in links]
    # One link per page written (a name's folder may differ from the name: outputs/folders.py).
    assert len(targets) == len(list(out.glob("*/feedback.html"))) and len({href for _, href in targets}) == len(targets)
    for name, href in targets:
        browser.get(href)
        assert browser.find_element(By.TAG_NAME, "h1").text == f"Feedback for {name}"
        assert browser.title == f"Feedback for {name}"
        assert severe(browser) == []


def test_html_in_a_name_or_message_is_text_on_the_page(browser, out):
    browser.get((out / "report.html").as_uri())
    assert HTML_NAME in browser.find_element(By.ID, "students").text
    links = browser.find_elements(By.CSS_SELECTOR, "#students td:first-child a")
    browser.get(next(link.get_attribute("href") for link in links if link.text == HTML_NAME))
    assert f"Try this: {HTML_NAME}" in browser.find_element(By.TAG_NAME, "main").text
    assert browser.execute_script("return document.scripts.length") == 0


def test_the_submissions_that_need_a_look_are_listed(browser, out):
    browser.get((out / "report.html").as_uri())
    looks = browser.find_element(By.ID, "needs-look").text
    assert "late#1" in looks and "timed out" in looks and "student 03" in looks and "crashed" in looks


# What a page must be at each width: nothing wider than the window (no sideways scrolling of the page), and
# every label of every chart at least MIN_TEXT_PX high as drawn.
MIN_TEXT_PX = 10
OVERFLOW = "return document.documentElement.scrollWidth <= window.innerWidth"
SMALLEST_TEXT = (
    "return Math.min(...Array.from(document.querySelectorAll('svg text'), t => t.getBoundingClientRect().height))"
)


@pytest.mark.parametrize("width", [1366, 400], ids=["laptop", "phone"])
def test_the_report_fits_the_window_with_readable_charts(out, tmp_path_factory, width):
    """At a laptop's 1366 px and a phone's 400 px: no sideways scrolling, chart labels >= 10 px; a screenshot
    of the whole page is kept (its path is printed: pytest -s shows it)."""
    with chromium(tmp_path_factory.mktemp("profile"), width, 800) as driver:
        driver.get((out / "report.html").as_uri())
        assert driver.execute_script("return window.innerWidth") == width
        assert driver.execute_script(OVERFLOW), driver.execute_script("return document.documentElement.scrollWidth")
        assert driver.execute_script(SMALLEST_TEXT) >= MIN_TEXT_PX
        # The flagged table keeps its columns readable: no cell narrower than a short word.
        cells = driver.find_elements(By.CSS_SELECTOR, "#needs-look td")
        assert cells and min(cell.size["width"] for cell in cells) >= 40
    png = screenshot.screenshot(out / "report.html", out / f"report-{width}.png", width, 800, full_page=True)
    print(f"screenshot at {width} px: {png}")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_the_report_prints_whole(browser, out):
    """In print, no table sits in a box that scrolls or clips: every student row is on paper."""
    browser.get((out / "report.html").as_uri())
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        clipped = browser.execute_script(
            "return Array.from(document.querySelectorAll('.scroll, .chart'))"
            ".filter(box => box.scrollHeight > box.clientHeight + 1 || getComputedStyle(box).overflowY == 'auto')"
            ".length"
        )
        assert clipped == 0
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def test_the_screenshot_tool_writes_a_png(out, tmp_path):
    """`python tools/screenshot.py PAGE PNG`, as the README says, run as the script it is."""
    png = tmp_path / "shot.png"
    tool = Path(screenshot.__file__)
    ran = subprocess.run([sys.executable, str(tool), str(out / "report.html"), str(png), "--full-page"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"wrote {png}"
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


def test_the_screenshot_tool_says_what_is_wrong(tmp_path, capsys):
    assert screenshot.main([str(tmp_path / "nowhere.html"), str(tmp_path / "shot.png")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_markdown_in_the_results_is_drawn_as_boards_and_code(browser, out):
    """A failed test's board is monospaced with its spaces kept, the student's name in the hint inline code."""
    browser.get((out / "student 01" / "feedback.html").as_uri())
    board = browser.find_element(By.CSS_SELECTOR, ".test.failed .out pre")
    assert board.text == " X | O | 2" and "monospace" in board.value_of_css_property("font-family").lower()
    assert browser.find_element(By.CSS_SELECTOR, ".test.failed .out p code").text == "student 01"
