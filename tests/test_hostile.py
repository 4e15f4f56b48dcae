"""Do hostile submissions, graded by the real grader, earn only what they honestly earn and leave the rest alone?

One class: an honest student and one student per attack in tests/hostile/ (their rules.py attacks; their
winning_square.py is the reference, to show the rest of their work is graded normally).
"""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.course.oracle import oracle
from autograder.course.stages import ROOT, STAGE_BY_ID, TOTAL_POINTS
from autograder.grading import sandbox
from autograder.outputs import stats
from tests.classes import grade, perfect, read_grades, reference, write_student

pytestmark = pytest.mark.slow  # a class of attackers graded twice, under bubblewrap and under the fallback

HOSTILE = Path(__file__).parent / "hostile"
ATTACKS = sorted(path.stem for path in HOSTILE.glob("*.py"))
RULES, SQUARE = STAGE_BY_ID["01_rules"], STAGE_BY_ID["05_winning_square"]
# What each attacker's rules.py honestly earns (its to_move is right in these three, winner too in two;
# the board attacks answer right, or nearly, but leave the boards changed: the board-unchanged check is advisory,
# worth no points, since only the child sees the board, so patch_changed_reply's forged "unchanged" steals nothing).
HONEST = {"network": RULES.points, "output_flood": RULES.points, "fork_setsid": RULES.points}
HONEST.update(
    rewrite_board=RULES.points, none_on_board=RULES.points - 1, patch_changed_reply=RULES.points, linger=RULES.points
)
HONEST["leak_at_import"] = 2  # no hidden board is in its job at import, so it loads: None is right twice


class Listener:
    """A TCP listener on 127.0.0.1 that records every byte anyone sends it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.received = b""
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                connection.settimeout(2)
                try:
                    while chunk := connection.recv(65536):
                        self.received += chunk
                except OSError:
                    pass


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


def survivors() -> list[int]:
    """Processes started by fork_setsid.py (they name themselves) that are still alive."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "hostile-linger":
                if (entry / "stat").read_text().split(") ")[1][0] != "Z":
                    found.append(int(entry.name))
        except OSError:
            pass
    return found


def make_class(folder: Path, port: int, attacks: list[str]) -> None:
    write_student(folder / "honest", perfect())
    for attack in attacks:
        source = (HOSTILE / f"{attack}.py").read_text().replace("PORT = 0", f"PORT = {port}")
        write_student(folder / f"hostile_{attack}", {RULES.id: source, SQUARE.id: reference(SQUARE.id)}, nested=False)


def graded_class(tmp_path_factory, isolation: str, attacks: list[str]):
    root = tmp_path_factory.mktemp(f"hostile-{isolation}")
    listener = Listener()
    make_class(root / "class", listener.port, attacks)
    before = {"class": tree_digest(root / "class"), "solutions": tree_digest(ROOT / "solutions")}
    result = grade(root / "class", root / "out", "--time-limit", "3", env={"AUTOGRADE_ISOLATION": isolation})
    return root, listener, before, result


@pytest.fixture(scope="module")
def bubblewrap_class(tmp_path_factory):
    if sandbox.detect().level != "bubblewrap":
        pytest.skip(f"bubblewrap isolation is not available here: {sandbox.detect().detail}")
    return graded_class(tmp_path_factory, "bubblewrap", ATTACKS)


def test_the_batch_finishes_and_the_honest_student_is_untouched(bubblewrap_class):
    """Does grading go through, with the honest student's marks exactly as without attackers?"""
    root, _, _, result = bubblewrap_class
    assert result.returncode == 0, result.stderr[-2000:]
    grades = read_grades(root / "out")
    assert set(grades) == {"honest", *(f"hostile_{a}" for a in ATTACKS)}
    assert grades["honest"]["total"] == str(TOTAL_POINTS)


MEANT_TO_FAIL_AT_IMPORT = {"delete_files", "exit_at_import", "memory"}  # their attack is the import itself


def test_every_attack_gets_past_its_own_import(bubblewrap_class):
    """Does every attacker's rules.py load (but the three whose attack is the import), so that a test of an attack
    is never passed by an attack that broke on a slip of its own, as forged_replies once did on the job's format?"""
    root, _, _, _ = bubblewrap_class
    stopped = {}
    for attack in ATTACKS:
        stage = json.loads((root / "out" / f"hostile_{attack}" / "results.json").read_text())["extra_data"]["stages"]
        if stage[RULES.id]["phase"] == "import":  # it did not load, or was stopped while it loaded
            stopped[attack] = stage[RULES.id]["message"]
    assert set(stopped) == MEANT_TO_FAIL_AT_IMPORT, stopped


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_attack_earns_only_its_honest_part(bubblewrap_class, attack):
    """Does each attacker earn on rules.py only what honest code earns, and keep its other stage's marks?"""
    root, _, _, _ = bubblewrap_class
    row = read_grades(root / "out")[f"hostile_{attack}"]
    assert float(row["01_rules"]) <= HONEST.get(attack, 0), f"{attack} earned {row['01_rules']} on 01_rules"
    assert float(row["05_winning_square"]) == SQUARE.points, f"{attack} lost marks on its honest stage"
    results = json.loads((root / "out" / f"hostile_{attack}" / "results.json").read_text())
    assert results["extra_data"]["isolation"]["level"] == "bubblewrap"


def test_nothing_was_read_or_sent_over_the_network(bubblewrap_class):
    """Did the listener on 127.0.0.1 receive nothing at all?"""
    _, listener, _, _ = bubblewrap_class
    assert listener.connections == 0 and listener.received == b""


def test_no_file_outside_the_sandbox_changed(bubblewrap_class):
    """Are the class's files and the reference solutions byte for byte as before, and OUT holds only grader files?"""
    root, _, before, _ = bubblewrap_class
    assert tree_digest(root / "class") == before["class"]
    assert tree_digest(ROOT / "solutions") == before["solutions"]
    written = {p.relative_to(root / "out").as_posix() for p in (root / "out").rglob("*") if p.is_file()}
    expected = {"grades.csv", "gradebook.db"} | {f"{s}/results.json" for s in read_grades(root / "out")}
    assert not {name for name in written - expected if not name.startswith(("gradebook.db-", "report.html"))
                and not name.endswith("feedback.html")}  # fmt: skip


def test_no_process_outlives_its_stage(bubblewrap_class):
    """Are the forked children and the setsid grandchild gone once grading ends?"""
    assert no_survivors()


def no_survivors() -> bool:
    """True when no sandbox uid runs a process (allowing the kernel a moment to reap the last ones)."""
    for _ in range(20):
        if not survivors():
            return True
        time.sleep(0.1)
    return False


def test_reports_say_what_happened(bubblewrap_class):
    """Do the attackers' results name the timeout, the crash and the wrong types?"""
    root, _, _, _ = bubblewrap_class

    def stage_result(attack):
        results = json.loads((root / "out" / f"hostile_{attack}" / "results.json").read_text())
        return results["extra_data"]["stages"]["01_rules"], results

    assert stage_result("ignore_sigterm")[0]["outcome"] == "timeout"
    assert stage_result("exit_at_import")[0]["outcome"] == "crashed"
    assert stage_result("memory")[0]["outcome"] in ("memory-limit", "crashed")  # MemoryError, or killed at the limit
    assert stage_result("ignore_sigterm")[0]["status"]["kind"] == "timed-out"
    always_equal = stage_result("always_equal")[1]
    winner_test = next(t for t in always_equal["tests"] if t["extra_data"]["check"] == "winner/no-line")
    assert "object of type Anything" in winner_test["output"]


def student_seconds(out: Path, student: str) -> float:
    return json.loads((out / student / "results.json").read_text())["execution_time"]


@pytest.mark.parametrize("isolation", ["bubblewrap", "rlimits"])
def test_a_stage_ends_when_the_child_has_answered_everything(tmp_path, isolation):
    """Does a right rules.py that keeps its process alive (a non-daemon thread sleeping past the backstop, then
    lightly busy; atexit; a setsid grandchild) get its marks in about a second, not after the wall-clock backstop
    (32 s at --time-limit 2; up to four backstops before), nothing left running and the honest classmate unchanged?"""
    if isolation == "bubblewrap" and sandbox.detect().level != "bubblewrap":
        pytest.skip(f"bubblewrap isolation is not available here: {sandbox.detect().detail}")
    if isolation == "rlimits" and os.geteuid() != 0:
        pytest.skip("the fallback's unprivileged uid needs the grader to run as root")
    write_student(tmp_path / "class" / "honest", perfect())
    linger = {RULES.id: (HOSTILE / "linger.py").read_text(), SQUARE.id: reference(SQUARE.id)}
    write_student(tmp_path / "class" / "lingering", linger, nested=False)
    started = time.monotonic()
    result = grade(tmp_path / "class", tmp_path / "out", "--time-limit", "2", env={"AUTOGRADE_ISOLATION": isolation})
    assert result.returncode == 0, result.stderr[-2000:]
    assert time.monotonic() - started < 60  # the whole batch (before: the lingering student alone took 32 s)
    grades = read_grades(tmp_path / "out")
    assert grades["honest"]["total"] == str(TOTAL_POINTS)
    assert float(grades["lingering"]["01_rules"]) == RULES.points
    assert float(grades["lingering"]["05_winning_square"]) == SQUARE.points
    assert student_seconds(tmp_path / "out", "lingering") < 25  # about 2 s; below the 32 s it took before
    assert no_survivors()


SLEEPER = "import time\ntime.sleep(3600)\n"


def test_a_students_stages_share_one_wall_clock_budget(tmp_path, monkeypatch):
    """When a student's stages together use up their wall-clock budget (here set to a twentieth of a backstop),
    is the stage running then stopped at what was left, are the later ones not run, each saying why, and is the
    honest classmate graded unchanged with the usual budget?"""
    from autograder.grading import grade as grading
    from autograder.grading.sandbox import limits

    isolation = sandbox.detect()
    write_student(tmp_path / "sleepy", {RULES.id: SLEEPER, SQUARE.id: SLEEPER, "06_count_results": SLEEPER})
    write_student(tmp_path / "honest", perfect())
    with monkeypatch.context() as patched:
        patched.setattr(limits, "STUDENT_BACKSTOPS", 0.05)  # 1.6 s at --time-limit 2
        started = time.monotonic()
        sleepy = grading.grade_student("sleepy", tmp_path / "sleepy", isolation, 2)
        took = time.monotonic() - started
    assert 1.6 <= took < 10, took
    stages = sleepy.stages
    assert stages[RULES.id].outcome == "timeout" and "all the student's stages" in stages[RULES.id].message
    for stage_id in (SQUARE.id, "06_count_results"):
        assert stages[stage_id].outcome == "timeout" and stages[stage_id].message.startswith("not run: "), stage_id
    assert sleepy.total == 0
    honest = grading.grade_student("honest", tmp_path / "honest", isolation, 2)
    assert honest.total == TOTAL_POINTS and not honest.ungraded
    assert no_survivors()


# The fallback level (no bubblewrap): limits and an unprivileged uid still hold against process and
# resource attacks. Reading world-readable files is not prevented there; `autograde doctor` says so.
FALLBACK_ATTACKS = ["exit_at_import", "fork_setsid", "ignore_sigterm", "memory", "output_flood", "always_equal"]


def test_fallback_contains_resource_attacks(tmp_path_factory):
    """Without bubblewrap, do limits and the unprivileged uid still contain runaway processes and memory?"""
    if os.geteuid() != 0:
        pytest.skip("the fallback's unprivileged uid needs the grader to run as root")
    root, listener, before, result = graded_class(tmp_path_factory, "rlimits", FALLBACK_ATTACKS)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("without the bubblewrap sandbox") == 1, "announced once, even with --quiet"
    grades = read_grades(root / "out")
    assert grades["honest"]["total"] == str(TOTAL_POINTS)
    for attack in FALLBACK_ATTACKS:
        assert float(grades[f"hostile_{attack}"]["01_rules"]) <= HONEST.get(attack, 0), attack
        assert float(grades[f"hostile_{attack}"]["05_winning_square"]) == SQUARE.points, attack
    results = json.loads((root / "out" / "honest" / "results.json").read_text())
    assert results["extra_data"]["isolation"]["level"] == "rlimits"
    assert no_survivors()


def test_the_reading_attacks_found_nothing_in_the_sandbox(bubblewrap_class):
    """Did the reading attacks run, look, and find neither the classmate beside them nor the reference solutions?"""
    root, _, _, _ = bubblewrap_class
    for attack, says in [("read_other_student", "no other student's work within reach"),
                         ("read_solution", "no reference solution within reach")]:  # fmt: skip
        results = json.loads((root / "out" / f"hostile_{attack}" / "results.json").read_text())
        outputs = [t["output"] for t in results["tests"] if t["extra_data"]["stage"] == RULES.id]
        assert any(says in output for output in outputs), (attack, outputs)


PROBE = "import rules; print(rules.winner(list('XXXOO    ')), rules.to_move(list('XXXOO    ')))"


def run_unsandboxed(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The probe importing folder's rules.py, in a plain process whose command line ends with args."""
    command = [sys.executable, "-c", PROBE, *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)


def test_read_solution_works_without_a_sandbox(tmp_path):
    """Control: run unsandboxed, does read_solution find the reference answers? (So containing it means something.)"""
    make_class(tmp_path / "class", 0, ["read_solution"])
    result = run_unsandboxed(tmp_path / "class" / "hostile_read_solution")
    assert result.stdout.split() == ["X", "O"], result.stderr[-500:]


def test_read_other_student_reads_the_classmate_without_a_sandbox(tmp_path):
    """Control: unsandboxed, does read_other_student copy the classmate the test built (honest), both from inside
    the class and from a folder of its own under a grader's command line, and find nothing once honest is gone?"""
    make_class(tmp_path / "class", 0, ["read_other_student"])
    in_class = tmp_path / "class" / "hostile_read_other_student"
    alone = tmp_path / "runs" / "run-1"  # where a grader without a sandbox would put its copy: outside the class
    alone.mkdir(parents=True)
    shutil.copy(in_class / "rules.py", alone / "rules.py")
    grader_line = ("autograde", "grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"))
    for folder, args in [(in_class, ()), (alone, grader_line)]:
        result = run_unsandboxed(folder, *args)
        assert result.stdout.split() == ["X", "O"], (folder, result.stderr[-500:])
    shutil.rmtree(tmp_path / "class" / "honest")  # so what it found was the classmate, not a rules.py elsewhere
    for folder, args in [(in_class, ()), (alone, grader_line)]:
        result = run_unsandboxed(folder, *args)
        assert "no other student's work within reach" in result.stderr, (folder, result.stdout)


# Student-written text and the hidden checks: leak_in_text.py, leak_at_import.py, leak_by_tampering.py and
# leak_by_reading_ahead.py write HIDDENRUN and the boards they were handed (base64, hex) into every text they control,
# but only once they hold a board that is not a visible example (in their job, asked, or read ahead from the
# descriptor the hidden job comes on). The texts written after the child was handed the hidden job may reach the
# hidden checks' details (held back until the grades are published) and nothing else.
LEAKS = ("leak_at_import", "leak_by_reading_ahead", "leak_by_tampering", "leak_in_text")
MARK = "HIDDENRUN"


def publish(out: Path, dest: Path, *extra: str) -> dict[str, str]:
    """`autograde publish OUT DEST` run for real: every file it wrote, path -> text."""
    command = [sys.executable, "-m", "autograder", "publish", str(out), str(dest), *extra]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return {path.relative_to(dest).as_posix(): path.read_text() for path in sorted(dest.rglob("*")) if path.is_file()}


def encoded_hidden_boards() -> dict[str, str]:
    """Each hidden board in the forms a submission could write it in, the form -> the board."""
    import base64

    from autograder.authoring.release import hidden_boards

    forms = {}
    for board in hidden_boards(enumerated=True):
        text = "".join(board).encode()  # 9 bytes: its base64 is the same 12 characters inside a longer run
        for form in (text.decode(), base64.b64encode(text).decode(), text.hex(), text.hex().upper()):
            forms[form] = "".join(board)
    return forms


def shown_before_publication(results: dict) -> str:
    """Everything of a results.json a student reads before the grades are published, as one text: a hidden test's
    output, wrong answers and counterexample are held back (autograde publish drops them)."""
    kept = json.loads(json.dumps(results))
    for test in kept["tests"]:
        if test["visibility"] != "visible":
            test["output"] = ""
            test["extra_data"].pop("mistakes", None)
            test["extra_data"].pop("counterexample", None)
    return json.dumps(kept, ensure_ascii=False)


def test_no_hidden_board_leaves_in_what_student_code_writes(bubblewrap_class, tmp_path):
    """Do the texts a submission's code writes carry no hidden board, in any form, into OUT's pages, the parts of
    results.json shown before publication, or `autograde publish`'s files, while the honest classmate keeps full
    marks and its feedback?"""
    root, _, _, _ = bubblewrap_class
    out = root / "out"
    published = publish(out, tmp_path / "dest")
    forms = encoded_hidden_boards()
    for name, text in published.items():
        assert MARK not in text, name
        if name.startswith("hostile_leak"):
            found = sorted({board for form, board in forms.items() if form in text})
            assert not found, (name, found[:5])
    for attack in LEAKS:
        results = json.loads((out / f"hostile_{attack}" / "results.json").read_text())
        assert MARK not in shown_before_publication(results), attack
        assert MARK not in (out / f"hostile_{attack}" / "feedback.html").read_text(), attack
        visible = [t for t in results["tests"] if t["extra_data"]["stage"] == RULES.id and t["visibility"] == "visible"]
        assert visible and all(t["status"] == "failed" for t in visible), attack  # judged, and wrong
    texts = json.loads((out / "hostile_leak_in_text" / "results.json").read_text())
    visible = next(t for t in texts["tests"] if t["extra_data"]["check"] == "winner/examples")
    assert "raised visible_onlyError" in visible["output"]  # the visible job's own texts are shown, as before
    stage = json.loads((out / "hostile_leak_by_tampering" / "results.json").read_text())["extra_data"]["stages"]
    assert stage[RULES.id]["outcome"] == "tampered" and stage[RULES.id]["score"] == 0
    honest = json.loads(published["honest/results.json"])
    assert honest["extra_data"]["total"] == TOTAL_POINTS and {t["status"] for t in honest["tests"]} == {"passed"}
    assert read_grades(out)["honest"]["total"] == str(TOTAL_POINTS)


def test_the_hidden_run_did_write_its_mark(bubblewrap_class, tmp_path):
    """Control: after publication (--show-hidden) do the hidden checks' details show leak_in_text's HIDDENRUN, so
    the test above looked for something the hidden run really wrote?"""
    root, _, _, _ = bubblewrap_class
    published = publish(root / "out", tmp_path / "dest", "--show-hidden")
    results = json.loads(published["hostile_leak_in_text/results.json"])
    hidden = [t for t in results["tests"] if t["visibility"] != "visible" and MARK in t["output"]]
    assert hidden, "the hidden run never wrote its mark"


def test_a_table_of_every_score_is_listed_under_needs_a_look(tmp_path):
    """Does a memoization.py that holds every board's score (no search at all) keep the points nothing in the
    child can refuse it, but land under "Needs a look" (report, gradebook, `autograde stats`) with the line of
    its table, while the honest classmate beside it is graded exactly as alone and listed nowhere?"""
    memo_stage = STAGE_BY_ID["04_memoization"]
    scores = {"".join(board): oracle().score(board) for board in oracle().positions}
    table = (HOSTILE / "memoization" / "table.py").read_text().replace("TABLE = {}", f"TABLE = {scores!r}")
    write_student(tmp_path / "class" / "honest", perfect())
    write_student(tmp_path / "class" / "tabled", {**perfect(), memo_stage.id: table})
    result = grade(tmp_path / "class", tmp_path / "out", "--time-limit", "10")
    assert result.returncode == 0, result.stderr[-2000:]
    grades = read_grades(tmp_path / "out")
    assert grades["honest"]["total"] == grades["tabled"]["total"] == str(TOTAL_POINTS)  # a known limit (README)
    looks = stats.needs_a_look(stats.facts_from_gradebook(tmp_path / "out" / "gradebook.db"))
    assert [(look.student, look.stage) for look in looks] == [("tabled", memo_stage.id)]
    assert "memoization.py line 8 holds a literal of 10,956 values" in looks[0].reason
    stage = json.loads((tmp_path / "out" / "tabled" / "results.json").read_text())["extra_data"]["stages"]
    assert "a table where a computation is asked" in stage[memo_stage.id]["look"]
    assert (
        "look"
        not in json.loads((tmp_path / "out" / "honest" / "results.json").read_text())["extra_data"]["stages"][
            memo_stage.id
        ]
    )
    report = (tmp_path / "out" / "report.html").read_text()
    assert "a table where a computation is asked?" in report
