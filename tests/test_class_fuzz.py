"""Does no submission, however odd, stop a batch or change another student's row?

Property-based: hypothesis draws one strange submission (a random tree of files, links, pipes and zips, or a
module that writes random bytes to the grader's reply channel), the real grader grades it in one class beside an
honest student, and the honest student's row must be exactly what it is in a class of its own.
"""

import contextlib
import csv
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.verbs import grade
from tests.classes import reference, write_student
from tests.test_intake import ENTRY, build_tree, zips

pytestmark = pytest.mark.slow

CHEAP = ("01_rules", "05_winning_square")
# Where in a module the random bytes are written to the reply channel (file descriptor 3).
WRITERS = {
    "import": "import os\nos.write(3, {data!r})\n",
    "call": "import os\ndef winner(board):\n    os.write(3, {data!r})\n    return None\n",
    "call-then-exit": "import os\ndef winner(board):\n    os.write(3, {data!r})\n    os._exit(0)\n",
}
REPLY_BYTES = st.one_of(
    st.binary(max_size=300),
    st.lists(
        st.sampled_from(
            [
                b'{"import": "ok"}\n',
                b'{"done": true}\n',
                b'{"ids": [0], "values": ["sX"], "details": []}\n',
                b'{"ids": [0, 0], "values": ["n", "n"], "details": []}\n',
                b'{"import": "ok", "extra": 1}\n',
                b"[" * 5000 + b"\n",
                b'{"ids": [99999], "values": ["n"], "details": []}\n',
                b"\xff\xfe\n",
            ]
        ),  # fmt: skip
        max_size=6,
    ).map(b"".join),
).filter(bytes.strip)  # something on the channel: an empty write is no message at all


def grades_of(folder: Path, out: Path) -> tuple[int, dict[str, dict[str, str]]]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = grade.main([str(folder), "--out", str(out), "--quiet", "--jobs", "2", "--time-limit", "5"])
    with open(out / "grades.csv", newline="") as handle:
        return code, {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def honest_alone(tmp_path_factory):
    root = tmp_path_factory.mktemp("alone")
    write_student(root / "class" / "honest", {s: reference(s) for s in CHEAP})
    code, rows = grades_of(root / "class", root / "out")
    assert code == 0
    return rows["honest"]


def check_class(base: Path, honest_row: dict) -> dict[str, dict[str, str]]:
    write_student(base / "class" / "honest", {s: reference(s) for s in CHEAP})
    code, rows = grades_of(base / "class", base / "out")
    assert code == 0, "no submission may make the grader fail"
    assert rows["honest"] == honest_row
    return rows


@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(entries=st.lists(ENTRY, min_size=3, max_size=8), zipped=st.one_of(st.none(), st.none(), zips()))
def test_a_random_tree_beside_an_honest_student(honest_alone, entries, zipped):
    """A random tree or zip (links in and out, pipes, sparse files, bad bytes) graded beside an honest student."""
    with tempfile.TemporaryDirectory() as base:
        build_tree(Path(base), entries, zipped)  # "alice" and a "classmate" of stub files
        rows = check_class(Path(base), honest_alone)
        assert {"alice", "classmate", "honest"} <= set(rows)


@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(sorted(WRITERS)), data=REPLY_BYTES)
def test_random_bytes_on_the_reply_channel_beside_an_honest_student(honest_alone, where, data):
    """A module that writes random bytes to the reply channel earns nothing for its stage, and nobody else changes."""
    with tempfile.TemporaryDirectory() as base:
        write_student(Path(base) / "class" / "mallory", {"01_rules": WRITERS[where].format(data=data)})
        rows = check_class(Path(base), honest_alone)
        assert rows["mallory"]["01_rules"] == "0"
