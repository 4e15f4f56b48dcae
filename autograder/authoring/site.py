"""`autograde site OUT`: the course as a static web site that runs offline, built from the student release.

Every stage gets a page: its instructions (its README), an editor holding the starter, "Run the tests" (the
stage's visible tests, run by pytest inside Pyodide in a Web Worker, with the messages a terminal shows), the hint
ladder, and, for a stage whose function plays, a board and the 100-game match. Work is kept in the browser's
storage and downloads as a submission zip that `autograde grade` reads.

What the site holds, and nothing more:

- course/: the release's assignments/ (fresh starters, visible tests, READMEs, hints), its pyproject.toml and
  play.py (the perfect player as a table). The release's leak check runs over the whole site before it is done.
- vendor/: Pyodide's runtime and the Ace editor, copied from tools/site/node_modules (pinned by its
  package-lock.json, installed by `make site`), and wheels/: pytest and its dependencies from PyPI, pinned by hash
  in tools/site/requirements.txt. Nothing is fetched from another origin when the site runs.
- the pages, course.js (the page and its window.course API), worker.js and runner.py (the worker's two halves).
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
from pathlib import Path

from markdown_it import MarkdownIt

from autograder.authoring.release import leaks, released_files
from autograder.course.stages import ROOT, STAGES
from autograder.outputs.command_line import fail
from autograder.practice.hint import ladder
from autograder.practice.players import STUDENT_FUNCTIONS, forced_wins_only

PROG = "autograde site"
SITE_FILES = Path(__file__).parent / "site_files"
TOOLS = ROOT / "tools" / "site"
NODE_MODULES = TOOLS / "node_modules"
WHEELS = TOOLS / "wheels"
# The runtime's files the page loads (the rest of the npm package is its sources, typings and Node's console).
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
# Ace's editor, its Python mode and the light theme it loads by name; prebuilt, so no bundler is needed.
ACE_FILES = ("ace.js", "mode-python.js", "theme-textmate.js")
ACE_FOLDER = "src-min-noconflict"
# The release's files the worker writes into its Python: the stages and the helpers their tests import.
COURSE_PREFIXES = ("assignments/",)
COURSE_NAMES = ("pyproject.toml", "play.py")
# How long one run of the tests, a match or a move may take in the page before the worker is ended: the slowest
# visible tests of a reference take about 1.5 s there (03_minimax), a 100-game match of plain minimax about 2 s.
RUN_SECONDS = 15
SETUP_HINT = "run `make site` (it installs tools/site's npm packages and downloads the wheels)"


def readme_html(text: str) -> str:
    """A stage's README as HTML: CommonMark with tables, the course's own text, raw HTML left as text."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def stage_entries(course: Path) -> list[dict]:
    """What the pages need to know of each stage, from the manifest and the release written to course/."""
    entries = []
    for stage in STAGES:
        folder = course / "assignments" / stage.id
        player = next((f.name for f in stage.contract if f.plays), None) if stage.module in STUDENT_FUNCTIONS else None
        entries.append(
            {
                "id": stage.id,
                "title": stage.title,
                "module": stage.module,
                "stars": stage.stars,
                "bonus": stage.bonus,
                "functions": list(stage.functions),
                "player": player,  # the function the board plays against, or None
                "forcedWinsOnly": bool(player) and forced_wins_only(stage.module),
                "starter": (folder / stage.filename).read_text(encoding="utf-8"),
                "hints": ladder(folder),
            }
        )
    return entries


def missing_tools() -> str | None:
    """Why the site cannot be built here (its npm packages or wheels are not installed), or None."""
    for package in ("pyodide", "ace-builds"):
        if not (NODE_MODULES / package / "package.json").is_file():
            return f"{NODE_MODULES / package} is missing: {SETUP_HINT}"
    if not list(WHEELS.glob("pytest-*.whl")):
        return f"no pytest wheel in {WHEELS}: {SETUP_HINT}"
    return None


def page(title: str, body: str, stage: str = "") -> str:
    data = f' data-stage="{html.escape(stage)}"' if stage else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        '<link rel="icon" href="data:,">\n'  # no favicon to fetch
        '<link rel="stylesheet" href="style.css">\n'
        '<script src="vendor/ace/ace.js"></script>\n'
        '<script src="course.js" defer></script>\n'
        f"</head>\n<body{data}>\n{body}\n</body>\n</html>\n"
    )


def index_page(entries: list[dict]) -> str:
    rows = []
    for entry in entries:
        stars = f' <span aria-label="{entry["stars"]} stars">{"★" * entry["stars"]}</span>' if entry["stars"] else ""
        bonus = " (bonus)" if entry["bonus"] else ""
        rows.append(
            f'<li><a href="{entry["id"]}.html">{html.escape(entry["id"])}: {html.escape(entry["title"])}</a>'
            f'{stars}{bonus} <span class="progress" data-progress="{entry["id"]}"></span></li>'
        )
    body = (
        "<main>\n<h1>Tic-tac-toe, minimax and memoization</h1>\n"
        "<p>Each stage is one small Python module you complete here, in the page: read the instructions, write "
        "the code in the editor, and run the stage's tests. Python runs inside this page; nothing is installed "
        "and nothing leaves your computer. Your work is kept in this browser; download it as a zip to hand in.</p>\n"
        '<p id="status" role="status">Python is loading…</p>\n'
        f'<ol class="stages">\n{"".join(rows)}\n</ol>\n'
        '<p><button type="button" id="download">Download my work (zip)</button></p>\n</main>'
    )
    return page("Tic-tac-toe, minimax and memoization", body)


def stage_page(entry: dict, readme: str) -> str:
    module = html.escape(entry["module"])
    board = ""
    if entry["player"]:
        player = html.escape(entry["player"])
        squares = "".join(
            f'<button type="button" class="square" data-square="{n}" aria-label="square {n}, empty"></button>'
            for n in range(9)
        )
        board = f"""
<section id="play" aria-labelledby="play-title">
<h2 id="play-title">Play against your {player}</h2>
<p>Your {player} from the editor plays one side. Squares are buttons: Tab to one and press Enter or Space.</p>
<p><button type="button" id="new-x">New game, I play X</button>
<button type="button" id="new-o">New game, I play O</button></p>
<div id="board" role="group" aria-label="board">{squares}</div>
<p id="game" role="status" aria-live="polite"></p>
<h3>The 100-game match</h3>
<p><label for="opponent">Opponent</label> <select id="opponent"><option value="random">random</option>
<option value="perfect">perfect</option></select>
<button type="button" id="match">Play 100 games</button></p>
<p id="match-result" role="status" aria-live="polite"></p>
</section>"""
    body = f"""<header><a href="index.html">All stages</a></header>
<main class="stage">
<article id="instructions" tabindex="0" aria-label="instructions">
<p class="note">Here, <strong>Run the tests</strong> runs this stage's visible tests and <strong>Show a hint</strong>
gives its hints one at a time; the commands below are for a copy of the course on your own computer.</p>
{readme}
</article>
<div class="side">
<section id="work" aria-labelledby="work-title">
<h2 id="work-title">Your code: {module}.py</h2>
<div id="editor" class="editor"></div>
<p><button type="button" id="run">Run the tests</button>
<button type="button" id="hint">Show a hint</button>
<button type="button" id="reset">Start again from the starter</button>
<button type="button" id="download">Download my work (zip)</button></p>
<p id="status" role="status" aria-live="polite">Python is loading…</p>
<pre id="output" tabindex="0" role="region" aria-label="test output"></pre>
<ol id="hints"></ol>
</section>{board}
</div>
</main>"""
    return page(f"{entry['id']}: {entry['title']}", body, entry["id"])


def write_site(out: Path) -> list[str]:
    """Write the site into out (new or emptied) and return the leaks the release's check finds in it."""
    release = released_files()
    course = out / "course"
    names = sorted(n for n in release if n.startswith(COURSE_PREFIXES) or n in COURSE_NAMES)
    for name in names:
        path = course / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(release[name])
    entries = stage_entries(course)
    for entry, stage in zip(entries, STAGES, strict=True):
        readme = readme_html(release[stage.readme_path.relative_to(ROOT).as_posix()].decode())
        (out / f"{stage.id}.html").write_text(stage_page(entry, readme), encoding="utf-8")
    (out / "index.html").write_text(index_page(entries), encoding="utf-8")
    wheels = sorted(path.name for path in WHEELS.glob("*.whl"))
    manifest = {"stages": entries, "files": names, "wheels": wheels, "runSeconds": RUN_SECONDS}
    (out / "course.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    for name in ("course.js", "worker.js", "runner.py", "style.css"):
        shutil.copyfile(SITE_FILES / name, out / name)
    vendor = out / "vendor"
    for folder, source, files in (
        ("pyodide", NODE_MODULES / "pyodide", PYODIDE_FILES),
        ("ace", NODE_MODULES / "ace-builds" / ACE_FOLDER, ACE_FILES),
        ("wheels", WHEELS, wheels),
    ):
        (vendor / folder).mkdir(parents=True, exist_ok=True)
        for name in files:
            shutil.copyfile(source / name, vendor / folder / name)
    return leaks(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write the site into (replaced when it holds a site)")
    args = parser.parse_args(argv)
    out: Path = args.out
    missing = missing_tools()
    if missing:
        return fail(PROG, missing)
    if out.exists() and any(out.iterdir()):
        if not (out / "course.json").is_file():
            return fail(PROG, f"{out} is not empty and holds no site: give a new or empty folder")
        shutil.rmtree(out)
    problems = write_site(out)
    for problem in problems:
        print(f"leak: {problem}", file=sys.stderr)
    if problems:
        print(f"{PROG}: {len(problems)} leak(s) in {out}; do not publish it", file=sys.stderr)
        return 1
    size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    print(f"Wrote the course site in {out} ({size / 1e6:.1f} MB); the leak check found nothing.")
    print(f"Serve it with: python -m http.server --directory {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
