"""Does every verb give each student a folder of their own, on any disk, and keep its own files its own?

Names become paths in one place (autograder/outputs/folders.py). These tests grade, publish, compare and play
classes whose names clash on disks that ignore case or Unicode form (`ADA` beside `ada`), match a verb's own
outputs (`tournament.json`, `similar.html`), or run long; once on the machine's own disk, checking that no two
entries would fold alike (the simulation, which always runs), and once on a real exFAT filesystem mounted
through FUSE on a loop device, where the disk itself folds case (skipped, saying why, where that cannot mount).
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.course.stages import ROOT, STAGE_BY_ID
from autograder.outputs.folders import MAX_FOLDER_BYTES, RESERVED, fold, output_folders
from tests.classes import grade, read_grades, reference, write_student, write_zip

WRONG = (ROOT / "tests" / "variants" / "01_rules" / "wrong_missing_diagonal.py").read_text()
RIGHT = reference("01_rules")
FULL = str(STAGE_BY_ID["01_rules"].points)
NFC, NFD = unicodedata.normalize("NFC", "zoé"), unicodedata.normalize("NFD", "zoé")
LONG = "€" * 83  # 249 bytes: a zip's name at the filesystem's limit


def verb(name: str, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", name, *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def results_by_student(folder: Path) -> dict[str, dict]:
    """Each entry's results.json (a folder of OUT or DEST), by the student it names."""
    found = {}
    for entry in folder.iterdir():
        if (entry / "results.json").is_file():
            results = json.loads((entry / "results.json").read_text())
            found[results["extra_data"]["student"]] = results
    return found


def assert_foldable(folder: Path) -> None:
    """No two entries would be one on a disk that ignores case or Unicode form; each name fits any filesystem."""
    names = [entry.name for entry in folder.iterdir()]
    assert len({fold(name) for name in names}) == len(names), sorted(names)
    assert all(len(os.fsencode(name)) <= 255 for name in names)


# ---------------------------------------------------------------------------------------------------------------
# The mapping itself
# ---------------------------------------------------------------------------------------------------------------


def test_clashing_reserved_and_long_names_get_distinct_folders():
    names = ["ada", "ADA", "Ada", NFC, NFD, "straße", "STRASSE", "tournament.json", "Similar.HTML", "gradebook.db-wal"]
    names += [LONG, LONG + "x", "what?", "alice"]
    folders = output_folders(names)
    assert folders["ada"] == "ada" and folders["alice"] == "alice" and folders[NFC] == NFC
    assert folders["ADA"].startswith("ADA~") and folders[NFD].startswith(NFD + "~")
    assert folders["tournament.json"] == "_tournament.json" and folders["Similar.HTML"] == "_Similar.HTML"
    assert len({fold(folder) for folder in folders.values()}) == len(names)
    assert all(len(folder.encode()) <= MAX_FOLDER_BYTES for folder in folders.values())
    assert not {fold(folder) for folder in folders.values()} & {fold(name) for name in RESERVED}
    assert output_folders(reversed(names)) == folders, "the same class gives the same folders, in any order"
    crafted = folders["ADA"].lower()  # a name made to look like ADA's folder
    again = output_folders([*names, crafted])
    assert len({fold(folder) for folder in again.values()}) == len(names) + 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aAßsSéeE\u0301\uff21._ ~-€😀", min_size=1, max_size=70), max_size=12))
def test_folders_are_distinct_after_folding_for_any_class(names):
    names = [name for name in names if not name.startswith("_")]  # find_class never lists these
    folders = output_folders(names)
    assert len({fold(folder) for folder in folders.values()}) == len(set(names))
    assert all(len(folder.encode()) <= MAX_FOLDER_BYTES and "/" not in folder for folder in folders.values())


# ---------------------------------------------------------------------------------------------------------------
# The simulation: grade, publish, similar and tournament on this disk, checked as a folding disk would see them
# ---------------------------------------------------------------------------------------------------------------


def hostile_class(folder: Path) -> None:
    for name, code in {"ADA": RIGHT, "ada": WRONG, "alice": RIGHT, "tournament.json": RIGHT, "similar.html": RIGHT,
                       NFC: RIGHT, NFD: WRONG}.items():  # fmt: skip
        write_student(folder / name, {"01_rules": code})
    write_zip(folder / f"{LONG}.zip", {"01_rules": RIGHT})


@pytest.mark.slow
def test_every_verb_keeps_each_student_apart(tmp_path):
    """ADA and ada, NFC and NFD zoé, students named tournament.json and similar.html and a 249-byte name: each
    graded into a folder of their own, linked, published and compared; the verbs' own files stay theirs; and an
    honest classmate's results are those of a class without them."""
    submissions, out, dest = tmp_path / "class", tmp_path / "out", tmp_path / "dest"
    hostile_class(submissions)
    done = grade(submissions, out)
    assert done.returncode == 0, done.stderr
    assert_foldable(out)
    graded = results_by_student(out)
    expected = {"ADA": FULL, "ada": "wrong", "alice": FULL, "tournament.json": FULL, "similar.html": FULL,
                NFC: FULL, NFD: "wrong", LONG: FULL}  # fmt: skip
    assert set(graded) == set(expected)
    for student, score in expected.items():
        assert (graded[student]["score"] == int(FULL)) == (score == FULL), student
    report = (out / "report.html").read_text()
    folders = output_folders(expected)
    for student, folder in folders.items():
        page = (out / folder / "feedback.html").read_text()
        assert json.loads((out / folder / "results.json").read_text())["extra_data"]["student"] == student
        assert folder.replace("&", "&amp;") in report or any(ord(c) > 127 for c in folder)
        assert student in page or "\\" in student
    assert (out / "grades.csv").is_file() and read_grades(out)["ada"]["01_rules"] != FULL

    published = verb("publish", str(out), str(dest))
    assert published.returncode == 0, published.stderr
    assert_foldable(dest)
    assert {student: r["score"] for student, r in results_by_student(dest).items()} == {
        student: r["score"] for student, r in graded.items()
    }
    zipped = verb("publish", str(out), str(tmp_path / "zips"), "--zip")
    assert zipped.returncode == 0, zipped.stderr
    assert_foldable(tmp_path / "zips")

    similar = verb("similar", str(submissions), "--out", str(out))
    assert similar.returncode == 0, similar.stderr
    assert (out / "similar.html").is_file() and (out / "_similar.html" / "results.json").is_file()

    alone = tmp_path / "alone"
    write_student(alone / "alice", {"01_rules": RIGHT})
    write_student(alone / "bob", {"01_rules": RIGHT})
    assert grade(alone, tmp_path / "alone-out").returncode == 0
    honest = json.loads((tmp_path / "alone-out" / "alice" / "results.json").read_text())
    assert [t["score"] for t in honest["tests"]] == [t["score"] for t in graded["alice"]["tests"]]
    assert honest["score"] == graded["alice"]["score"] == int(FULL)


@pytest.mark.slow
def test_a_student_named_tournament_json_leaves_the_tournament_its_files(tmp_path):
    """`autograde tournament` into the OUT that `grade` wrote for a student named tournament.json: exit 0, both
    of its files written; a folder in the way (an older grader's) is one line and exit 2 before any game."""
    submissions, out = tmp_path / "class", tmp_path / "out"
    write_student(submissions / "tournament.json", {"01_rules": RIGHT, "03_minimax": reference("03_minimax")})
    write_student(submissions / "ada", {"01_rules": RIGHT})
    assert grade(submissions, out).returncode == 0
    played = verb("tournament", str(submissions), "--out", str(out), "--openings", "1", "--time-limit", "2")
    assert played.returncode == 0, played.stderr
    assert json.loads((out / "tournament.json").read_text()) and (out / "tournament.html").is_file()
    assert (out / "_tournament.json" / "results.json").is_file()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "tournament.json").mkdir()
    blocked = verb("tournament", str(submissions), "--out", str(tmp_path / "old"), "--openings", "1")
    assert blocked.returncode == 2 and "tournament.json is in the way" in blocked.stderr
    assert "Traceback" not in blocked.stderr


# ---------------------------------------------------------------------------------------------------------------
# A real disk that ignores case: exFAT, through FUSE on a loop device
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture
def exfat(tmp_path):
    """A fresh exFAT filesystem mounted at tmp_path / "exfat" (root, losetup, mkfs.exfat and mount.exfat-fuse)."""
    tools = [shutil.which(tool) for tool in ("losetup", "mkfs.exfat", "mount.exfat-fuse")]
    if os.geteuid() != 0 or not all(tools) or not os.path.exists("/dev/fuse"):
        pytest.skip("needs root, losetup, mkfs.exfat and mount.exfat-fuse (Debian: exfatprogs, exfat-fuse)")
    image, mount = tmp_path / "exfat.img", tmp_path / "exfat"
    with open(image, "wb") as handle:
        handle.truncate(64 << 20)
    mount.mkdir()
    subprocess.run(["mkfs.exfat", str(image)], check=True, capture_output=True)
    attached = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if attached.returncode != 0:
        pytest.skip(f"no loop device: {attached.stderr.strip()}")
    device = attached.stdout.strip()
    try:
        mounted = subprocess.run(["mount.exfat-fuse", device, str(mount)], capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"exFAT does not mount here: {mounted.stderr.strip()}")
        try:
            (mount / "ADA").mkdir()
            assert (mount / "ada").is_dir(), "exFAT is meant to ignore case"
            (mount / "ADA").rmdir()
            yield mount
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)
    finally:
        with contextlib.suppress(OSError):
            subprocess.run(["losetup", "-d", device], capture_output=True)


@pytest.mark.slow
def test_ada_and_ada_get_their_own_pages_on_exfat(tmp_path, exfat):
    """On a disk that ignores case, ADA (right) and ada (wrong) are graded into two folders and handed back two
    pages, each naming its own student with its own score; alice, beside them, is graded as always."""
    submissions = tmp_path / "class"
    for name, code in {"ADA": RIGHT, "ada": WRONG, "alice": RIGHT}.items():
        write_student(submissions / name, {"01_rules": code})
    out, dest = exfat / "out", exfat / "dest"
    done = grade(submissions, out)
    assert done.returncode == 0, done.stderr
    published = verb("publish", str(out), str(dest))
    assert published.returncode == 0, published.stderr
    for folder in (out, dest):
        pages = results_by_student(folder)
        assert set(pages) == {"ADA", "ada", "alice"}
        assert pages["ADA"]["score"] == pages["alice"]["score"] == int(FULL) > pages["ada"]["score"]
    folders = output_folders(["ADA", "ada", "alice"])
    assert sorted(entry.name for entry in dest.iterdir()) == sorted(folders.values())
    assert "Feedback for ADA" in (dest / folders["ADA"] / "feedback.html").read_text()
    assert "Feedback for ada" in (dest / folders["ada"] / "feedback.html").read_text()
    grades = read_grades(out)
    assert grades["ADA"]["01_rules"] == grades["alice"]["01_rules"] == FULL != grades["ada"]["01_rules"]
