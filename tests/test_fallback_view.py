"""At the rlimits level (no bubblewrap) a run sees the machine's files as its uid does: are the course's answers,
the class and OUT hidden from it, and is grading refused where they cannot be? (The real grader, real mounts.)"""

import os
import shutil
import uuid
from pathlib import Path

import pytest

from autograder.course.stages import ROOT, STAGE_BY_ID, TOTAL_POINTS
from autograder.grading import exposure, sandbox
from autograder.grading.sandbox import fallback, isolation
from autograder.verbs import grade
from tests.classes import grade as grade_class
from tests.classes import perfect, read_grades, reference, write_student

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the rlimits level needs root")
HOSTILE = Path(__file__).parent / "hostile"
RULES, SQUARE = STAGE_BY_ID["01_rules"], STAGE_BY_ID["05_winning_square"]
RLIMITS = sandbox.Isolation("rlimits", "chosen by the test")


@pytest.fixture
def visible_folder():
    """A world-readable folder outside /tmp (a run's /tmp is its own), where the class and OUT are visible to any uid
    unless the grader hides them: under /run, which the rlimits level keeps for its run folders."""
    folder = Path("/run") / f"autograde-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir(mode=0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_a_submission_that_reads_the_solution_or_a_classmate_earns_nothing_at_the_fallback(visible_folder):
    """Forced to the rlimits level, in the development layout (a world-readable checkout), does a rules.py that
    execs solutions/01_rules/rules.py, or a classmate's, earn 0 while the honest classmate keeps full marks?"""
    if fallback.private_tmp()[0] is None:
        pytest.skip(f"no private namespaces here: {fallback.private_tmp()[1]}")
    assert os.stat(ROOT / "solutions" / "01_rules" / "rules.py").st_mode & 0o004  # readable by any uid on disk
    write_student(visible_folder / "class" / "honest", perfect())
    for attack in ("read_solution", "read_other_student"):
        source = (HOSTILE / f"{attack}.py").read_text()
        write_student(
            visible_folder / "class" / attack, {RULES.id: source, SQUARE.id: reference(SQUARE.id)}, nested=False
        )
    out = visible_folder / "out"
    result = grade_class(visible_folder / "class", out, "--time-limit", "3", env={"AUTOGRADE_ISOLATION": "rlimits"})
    assert result.returncode == 0, result.stderr[-2000:]
    grades = read_grades(out)
    assert grades["honest"]["total"] == str(TOTAL_POINTS)
    for attack in ("read_solution", "read_other_student"):
        assert float(grades[attack]["01_rules"]) == 0, attack
        assert float(grades[attack]["05_winning_square"]) == SQUARE.points, attack
    said = (out / "read_solution" / "results.json").read_text()
    assert "no reference solution within reach" in said


def test_without_private_mounts_a_readable_course_is_refused(monkeypatch, visible_folder, capsys):
    """Where the rlimits level has no mount namespace (a container without unshare) and the checkout is readable by
    any uid, does `autograde grade` refuse, naming a reference solution, before grading anyone?"""
    monkeypatch.setattr(fallback, "_private", (None, "disabled by the test"))
    monkeypatch.setattr(isolation, "_isolation", RLIMITS)
    write_student(visible_folder / "class" / "honest", perfect())
    code = grade.main([str(visible_folder / "class"), "--out", str(visible_folder / "out"), "--quiet"])
    said = capsys.readouterr().err
    assert code == 2 and "refusing to grade" in said and "solutions/" in said, said
    assert not (visible_folder / "out" / "grades.csv").exists()


def test_the_preflight_passes_where_the_course_is_hidden_and_under_bubblewrap(visible_folder):
    """With private mounts, do the masks hide every secret from a real rlimits child (so the check passes), and is
    nothing tried under bubblewrap?"""
    if fallback.private_tmp()[0] is None:
        pytest.skip(f"no private namespaces here: {fallback.private_tmp()[1]}")
    (visible_folder / "class").mkdir()
    assert exposure.problem(RLIMITS, visible_folder / "class") is None
    found = sandbox.detect()
    if found.level == "bubblewrap":
        assert exposure.problem(found, visible_folder / "class") is None


def test_a_path_the_grader_hides_under_a_kept_folder_is_masked(visible_folder):
    """An installed grader lies in site-packages under /usr, which runs need: is a path hide() names there (here one
    under /run) unreadable to a run, while the interpreter stays usable?"""
    if fallback.private_tmp()[0] is None:
        pytest.skip(f"no private namespaces here: {fallback.private_tmp()[1]}")
    secret = visible_folder / "site-packages" / "autograder"
    secret.mkdir(parents=True)
    (secret / "oracle.py").write_text("ANSWER = 42\n")
    code = f"import os\ntry:\n    open({str(secret / 'oracle.py')!r}).read()\n    os.write(3, b'read')\n"
    code += "except OSError:\n    os.write(3, b'hidden')\n"
    before = sandbox.run({"c.py": code.encode()}, "c.py", b"", sandbox.PROBE_LIMITS, RLIMITS)
    assert before.reply == b"read"  # a folder nobody asked to hide, under a kept one, is visible
    sandbox.hide([secret])
    after = sandbox.run({"c.py": code.encode()}, "c.py", b"", sandbox.PROBE_LIMITS, RLIMITS)
    assert after.reply == b"hidden", after


def test_gradescope_metadata_and_the_courses_notebooks_are_secrets_of_the_fallback(visible_folder):
    """Gradescope's submission_metadata.json lists earlier results with their hidden tests, and nbgrader's source
    notebooks and the git history hold every solution: are they hidden from a run (here the metadata lies in a
    folder runs keep), and on the preflight's list?"""
    if fallback.private_tmp()[0] is None:
        pytest.skip(f"no private namespaces here: {fallback.private_tmp()[1]}")
    metadata = visible_folder / "submission_metadata.json"
    metadata.write_text('{"previous_submissions": [{"results": {"tests": [{"name": "hidden board"}]}}]}')
    metadata.chmod(0o644)
    code = f"import os\ntry:\n    os.write(3, open({str(metadata)!r}).read().encode() or b'hidden')\n"
    code += "except OSError:\n    os.write(3, b'hidden')\n"
    before = sandbox.run({"c.py": code.encode()}, "c.py", b"", sandbox.PROBE_LIMITS, RLIMITS)
    assert b"hidden board" in before.reply  # the attack works on a folder nobody asked to hide
    assert exposure.problem(RLIMITS, visible_folder / "results", metadata) is None  # as gradescope.run calls it
    after = sandbox.run({"c.py": code.encode()}, "c.py", b"", sandbox.PROBE_LIMITS, RLIMITS)
    assert after.reply == b"hidden", after
    folders, tried = exposure.secrets(metadata)
    assert {ROOT, ROOT / "nbgrader", ROOT / ".git", metadata} <= set(folders)
    assert metadata in tried and any(path.suffix == ".ipynb" for path in tried)
    honest = sandbox.run({"c.py": b"import os\nos.write(3, b'42')\n"}, "c.py", b"", sandbox.PROBE_LIMITS, RLIMITS)
    assert honest.reply == b"42"
