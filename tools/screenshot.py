"""Open the course's pages in headless Chromium: screenshots of a report or feedback page, and the browser tests.

    python tools/screenshot.py OUT/report.html shot.png [--size 1366x768] [--full-page]

renders a page as a laptop's window shows it, to look at it without a desktop. It needs Debian's chromium and
chromium-driver and the dev extra's selenium; tests/test_browser.py drives the same set-up.
"""

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
INSTALL_HINT = "apt-get install chromium chromium-driver"


def browser_missing() -> str | None:
    """Why pages cannot be opened in headless Chromium here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is not installed ({INSTALL_HINT})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


@contextmanager
def chromium(profile: Path, width: int = 1366, height: int = 768, flags: tuple[str, ...] = ()) -> Iterator:
    """A selenium driver for a fresh headless Chromium with a throwaway profile (and any more flags); quits on
    exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",  # Chromium's own sandbox cannot start as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        *flags,
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_window_size(width, height)
        yield driver
    finally:
        driver.quit()


def screenshot(page_path: Path, png: Path, width: int = 1366, height: int = 768, full_page: bool = False) -> Path:
    """A PNG of page_path as a width x height window shows it (or the whole page, as tall as it is)."""
    with (
        tempfile.TemporaryDirectory(prefix="autograder-chromium-") as profile,
        chromium(Path(profile), width, height) as driver,
    ):
        driver.get(page_path.resolve().as_uri())
        if full_page:
            tall = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(width, max(height, int(tall) + 140))  # the window's chrome takes some height
        png.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(png))
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/screenshot.py", description="Render a report or feedback page to a PNG."
    )
    parser.add_argument("page", type=Path, help="an HTML page, such as OUT/report.html")
    parser.add_argument("png", type=Path, help="where to write the screenshot")
    parser.add_argument("--size", default="1366x768", help="window size, WIDTHxHEIGHT (default: a laptop, 1366x768)")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not only the first screen")
    args = parser.parse_args(argv)
    page_path, png = args.page, args.png
    if not page_path.is_file():
        print(f"screenshot: {page_path} does not exist (run `autograde grade` first)", file=sys.stderr)
        return 2
    problem = browser_missing()
    if problem:
        print(f"screenshot: cannot take a screenshot: {problem}", file=sys.stderr)
        return 2
    try:
        width, height = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        print(f"screenshot: --size must look like 1366x768, not {args.size!r}", file=sys.stderr)
        return 2
    screenshot(page_path, png, width, height, args.full_page)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
