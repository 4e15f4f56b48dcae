"""Does grading the bundled example class still write exactly what it wrote when the golden files were made?

The golden files in tests/golden/example_class/ are the example class's grades.csv, every results.json and
the text of every page, with what depends on the machine and the moment normalised away (times, the isolation's
wording, the suite's hash). Any other change to what an instructor or a student reads fails here, so a change
that was not meant to alter the outputs cannot do so unnoticed. After a change that is meant to, regenerate
them with `UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py` and review the diff like code.
"""

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.classes import ROOT, grade

GOLDEN = Path(__file__).parent / "golden" / "example_class"
EXAMPLES = ROOT / "examples" / "submissions"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
TIME_LIMIT = "10"  # the README's `make demo`


def normalised_results(result: dict) -> dict:
    """results.json without what differs between machines and runs: times, the isolation's wording, hashes."""
    result = json.loads(json.dumps(result))
    result["execution_time"] = 0
    extra = result["extra_data"]
    extra["isolation"] = {"level": "LEVEL", "detail": "DETAIL"}
    for stage in extra["stages"].values():
        stage["seconds"] = stage["cpu_seconds"] = 0
    grading = extra.get("grading", {})
    for key in ("suite", "grader_version", "isolation", "cgroups"):
        if key in grading:
            grading[key] = key.upper()
    result["output"] = re.sub(r"Your code ran under .*", "Your code ran under ISOLATION", result["output"], flags=re.S)
    return result


class _Text(HTMLParser):
    """The words of a page, one line per block, without its markup, styles or scripts."""

    BLOCKS = {"p", "div", "li", "tr", "h1", "h2", "h3", "h4", "br", "pre", "table", "section", "summary", "details"}
    BLOCKS |= {"ul", "ol", "header", "footer", "figure", "figcaption", "caption", "td", "th", "title", "svg"}

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self.skipping += 1
        else:  # an inline tag still separates words: markup may move without changing the text
            self.parts.append("\n" if tag in self.BLOCKS else " ")

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self.skipping -= 1
        else:
            self.parts.append("\n" if tag in self.BLOCKS else " ")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def page_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    lines = (re.sub(r"\s+", " ", line).strip() for line in "".join(parser.parts).split("\n"))
    text = "\n".join(line for line in lines if line)
    text = re.sub(r"\b\d+(\.\d+)? (s|ms|seconds?)\b", "T s", text)  # durations of the run
    text = re.sub(r"\d{4}-\d\d-\d\dT?[ \d:.]*(Z|[+-]\d\d:?\d\d)?", "DATE", text)
    text = re.sub(r"(?m)^(Isolation|isolation|Your code ran under)\b.*$", r"\1 ISOLATION", text)
    return text.replace(str(EXAMPLES), "SUBMISSIONS") + "\n"


@pytest.fixture(scope="module")
def example_outputs(tmp_path_factory) -> dict[str, str]:
    """The example class graded once, as `make demo` grades it: file name -> normalised text."""
    out = tmp_path_factory.mktemp("golden") / "out"
    result = grade(EXAMPLES, out, "--time-limit", TIME_LIMIT)
    assert result.returncode == 0, result.stderr
    files = {"grades.csv": (out / "grades.csv").read_text(), "report.txt": page_text((out / "report.html").read_text())}
    for folder in sorted(path for path in out.iterdir() if (path / "results.json").is_file()):
        results = normalised_results(json.loads((folder / "results.json").read_text()))
        files[f"{folder.name}.results.json"] = json.dumps(results, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        files[f"{folder.name}.feedback.txt"] = page_text((folder / "feedback.html").read_text())
    return files


def test_the_example_class_has_golden_files_for_everything_it_writes(example_outputs):
    """Is every file the grade writes covered by a golden file, and no golden file left over?"""
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for stale in GOLDEN.iterdir():
            stale.unlink()
        for name, text in example_outputs.items():
            (GOLDEN / name).write_text(text, encoding="utf-8")
    assert sorted(path.name for path in GOLDEN.iterdir()) == sorted(example_outputs)


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.iterdir()) if GOLDEN.is_dir() else [])
def test_the_example_class_writes_what_the_golden_file_holds(example_outputs, name):
    """Is this output of the example class, normalised, exactly the golden file?"""
    assert example_outputs.get(name) == (GOLDEN / name).read_text(encoding="utf-8")
