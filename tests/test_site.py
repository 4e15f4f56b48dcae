"""Does the course site work offline in a real browser: the visible tests in Pyodide, the time limit, the match, the
zip `autograde grade` reads, nothing leaked and nothing fetched from another host?

Headless Chromium (Debian's chromium and chromium-driver) with every host but 127.0.0.1 unresolvable, the site
served by a local static server, driven through the page's window.course API. Python loads once for the file
(the module's page fixture): that costs seconds.
"""

import functools
import http.server
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autograder.authoring import site
from autograder.course.stages import ROOT, STAGE_BY_ID
from tools.screenshot import browser_missing, chromium

MISSING = browser_missing() or site.missing_tools()
if MISSING:
    pytest.skip(f"site tests skipped: {MISSING}", allow_module_level=True)

RULES, MINIMAX = STAGE_BY_ID["01_rules"], STAGE_BY_ID["03_minimax"]
AXE = site.NODE_MODULES / "axe-core" / "axe.min.js"
# Every name resolves to nothing but the local server's address: a request for another origin fails.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
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
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True)
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
