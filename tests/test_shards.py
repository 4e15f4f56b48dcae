"""A class graded in shards on several machines and merged is the class graded in one run."""

import subprocess
import sys

import pytest

from autograder.course.stages import ROOT
from autograder.grading import shards
from tests.classes import grade, reference, starter, write_student

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "=heidi"]


def merge(*arguments) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "merge", *map(str, arguments)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def whole_and_shards(tmp_path_factory):
    """A class of 8 (right, wrong and missing answers) graded whole and as 3 shards, and the shards merged."""
    tmp = tmp_path_factory.mktemp("shards")
    for number, name in enumerate(NAMES):
        sources = {"01_rules": reference("01_rules") if number % 2 else starter("01_rules")}
        if number % 3:
            sources["05_winning_square"] = reference("05_winning_square")
        write_student(tmp / "class" / name, sources)
    whole = grade(tmp / "class", tmp / "whole", "--jobs", "2")
    assert whole.returncode == 0, whole.stderr
    for k in (1, 2, 3):
        run = grade(tmp / "class", tmp / f"shard{k}", "--jobs", "2", "--shard", f"{k}/3")
        assert run.returncode == 0, run.stderr
    merged = merge(tmp / "shard1", tmp / "shard2", tmp / "shard3", "--out", tmp / "merged")
    assert merged.returncode == 0, merged.stderr
    return tmp


@pytest.mark.slow
def test_the_merged_shards_write_the_grades_of_one_run_byte_for_byte(whole_and_shards):
    tmp = whole_and_shards
    assert (tmp / "merged" / "grades.csv").read_bytes() == (tmp / "whole" / "grades.csv").read_bytes()
    sizes = [len((tmp / f"shard{k}" / "grades.csv").read_text().splitlines()) - 1 for k in (1, 2, 3)]
    assert sum(sizes) == len(NAMES) and all(sizes), sizes  # a partition, and no shard empty for this class
    for name in NAMES:
        assert (tmp / "merged" / name / "results.json").is_file()
        assert (tmp / "merged" / name / "feedback.html").is_file()
    assert (tmp / "merged" / "report.html").is_file() and (tmp / "merged" / "gradebook.db").is_file()


@pytest.mark.slow
def test_runs_made_with_other_limits_or_other_results_are_refused(whole_and_shards, tmp_path):
    tmp = whole_and_shards
    other_limit = grade(tmp / "class", tmp_path / "limit", "--shard", "1/3", "--time-limit", "7")
    assert other_limit.returncode == 0, other_limit.stderr
    refused = merge(tmp / "shard2", tmp_path / "limit", "--out", tmp_path / "merged")
    assert refused.returncode == 2 and "another time limit" in refused.stderr, refused.stderr
    assert len(refused.stderr.splitlines()) == 1 and not (tmp_path / "merged").exists()

    changed = tmp_path / "changed"
    write_student(changed / "alice", {"01_rules": reference("01_rules")})  # the class's alice has the starter
    run = grade(changed, tmp_path / "alice-again")
    assert run.returncode == 0, run.stderr
    clash = merge(tmp / "whole", tmp_path / "alice-again", "--out", tmp_path / "merged")
    assert clash.returncode == 2 and "'alice' has different results" in clash.stderr, clash.stderr
    assert not (tmp_path / "merged").exists()


def test_a_students_shard_depends_on_the_name_alone():
    """Adding students moves nobody: each name's shard is the same whoever else is in the class."""
    small = dict(shards.select([(name, None) for name in NAMES], [], (2, 3))[0])
    bigger = dict(shards.select([(name, None) for name in [*NAMES, "zoe", "yann"]], [], (2, 3))[0])
    assert set(small) <= set(bigger) and set(bigger) - set(small) <= {"zoe", "yann"}
    slices = [{name for name, _ in shards.select([(n, None) for n in NAMES], [], (k, 3))[0]} for k in (1, 2, 3)]
    assert set().union(*slices) == set(NAMES) and sum(map(len, slices)) == len(NAMES)


@pytest.mark.parametrize("text, says", [("3", "must be K/N"), ("0/3", "K must be 1 to 3"), ("4/3", "K must be 1 to 3")])
def test_a_bad_shard_is_one_line(text, says):
    assert shards.parse_shard(text) == (None, shards.parse_shard(text)[1]) and says in shards.parse_shard(text)[1]
