"""The checks' cache between runs (course/cache.py): read only when it is ours, whole and of this suite;
anything else is rebuilt; a grade is the same from a cold cache and a warm one."""

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.course import cache
from autograder.course.checks import stage_checks as built_checks
from autograder.course.stages import ROOT
from autograder.course.suite import suite_hash
from tests.test_golden import normalised_results


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def counted(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_a_value_is_built_once_and_read_back(folder):
    build, calls = counted({"answers": (1, 2, 3)})
    assert cache.cached("s", build) == {"answers": (1, 2, 3)}
    assert cache.cached("s", build) == {"answers": (1, 2, 3)}
    assert len(calls) == 1
    (path,) = folder.glob("*.pickle")
    assert path.name.startswith(suite_hash()) and oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


def _rebuilt(name: str) -> bool:
    build, calls = counted("fresh")
    assert cache.cached(name, build) == "fresh"
    return calls == [1]


def test_a_corrupt_truncated_or_foreign_file_is_ignored_and_written_anew(folder):
    cache.cached("s", lambda: "old")
    (path,) = folder.glob("*.pickle")
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one bit changed: the digest no longer matches
    assert _rebuilt("s")
    path.write_bytes(data[: len(data) // 2])
    assert _rebuilt("s")
    # Whole and hashing right, but of another suite: a stale answer must not pass for this suite's.
    payload = cache.pickle.dumps(("0000000000000000", "stale"))
    path.write_bytes(cache.MAGIC + cache.hashlib.sha256(payload).digest() + payload)
    assert _rebuilt("s")
    assert cache.cached("s", lambda: pytest.fail("the rewritten file was not read")) == "fresh"


def test_a_file_or_folder_others_may_write_is_not_read(folder):
    cache.cached("s", lambda: "old")
    (path,) = folder.glob("*.pickle")
    path.chmod(0o666)
    assert _rebuilt("s")
    folder.chmod(0o777)
    assert _rebuilt("s")
    folder.chmod(0o700)


def test_a_link_in_place_of_the_file_is_not_followed(folder, tmp_path):
    cache.cached("s", lambda: "old")
    (path,) = folder.glob("*.pickle")
    target = tmp_path / "elsewhere.pickle"
    path.rename(target)
    path.symlink_to(target)
    assert _rebuilt("s")


def test_a_cache_that_cannot_be_written_costs_only_the_time(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    assert _rebuilt("s") and _rebuilt("s")


def test_only_the_newest_suites_are_kept(folder):
    folder.mkdir(mode=0o700)
    for number in range(cache.KEEP_SUITES + 2):
        stale = folder / f"{number:016x}-py311-s.pickle"
        stale.write_bytes(b"old")
        os.utime(stale, (number, number))
    cache.cached("s", lambda: "new")
    names = sorted(path.name.split("-")[0] for path in folder.glob("*.pickle"))
    assert suite_hash() in names and len(names) == cache.KEEP_SUITES  # this suite's, and the newest others
    assert f"{1:016x}" not in names and f"{cache.KEEP_SUITES + 1:016x}" in names


def test_the_checks_read_back_are_the_checks_built(folder):
    script = (
        "from autograder.course.checks import stage_checks, stage_outline\n"
        "import pickle, sys\n"
        "sys.stdout.buffer.write(pickle.dumps((stage_checks('01_rules'), stage_outline('09_best_squares'))))\n"
    )
    env = {**os.environ, cache.CACHE_ENV: str(folder)}
    runs = [subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, check=True)]
    runs.append(subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, check=True))
    cold, warm = (cache.pickle.loads(run.stdout) for run in runs)
    assert cold == warm and cold[0] == built_checks("01_rules")
    assert [check.id for check in cold[1]] == [check.id for check in built_checks("09_best_squares")]
    assert all(check.cases == [] for check in cold[1])


def test_a_class_grades_the_same_from_a_cold_cache_and_a_warm_one(folder, tmp_path):
    submissions = tmp_path / "class"
    for name, stage in (("ada", "01_rules"), ("bo", "03_minimax")):
        source = ROOT / "solutions" / stage
        (submissions / name / stage).mkdir(parents=True)
        for file in source.glob("*.py"):
            (submissions / name / stage / file.name).write_bytes(file.read_bytes())
    env = {**os.environ, cache.CACHE_ENV: str(folder)}
    outputs = []
    for run in ("cold", "warm"):
        out = tmp_path / run
        command = [sys.executable, "-m", "autograder", "grade", str(submissions), "--out", str(out), "--quiet"]
        subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
        results = [normalised_results(json.loads((out / name / "results.json").read_text())) for name in ("ada", "bo")]
        outputs.append([(out / "grades.csv").read_text(), *results])
        if run == "cold":
            assert len(list(folder.glob("*.pickle"))) >= 10  # each stage's checks or outline, kept
    assert outputs[0] == outputs[1]


def test_what_threads_ask_for_at_once_is_built_once_per_stage():
    """Grading threads start a class together and all ask for stage one's checks: is each stage's value built once
    (the others wait for it and get the same object), while another stage is still built for itself?"""
    builds: list[str] = []
    first = threading.Event()

    @cache.built_once
    def load(stage_id):
        builds.append(stage_id)
        first.set()
        time.sleep(0.2)  # a slow load: the other threads arrive while it runs
        return object()

    with ThreadPoolExecutor(max_workers=4) as pool:
        values = list(pool.map(load, ["01_rules"] * 4))
        assert first.wait(5)
        other = pool.submit(load, "02_count_games").result()
    assert builds == ["01_rules", "02_count_games"]
    assert all(value is values[0] for value in values) and other is not values[0]
