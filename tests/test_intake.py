"""Does reading a class and its submissions hold against whatever a submission folder or zip holds?

In-process and fast: every test builds its own class in tmp_path and reads it with find_class and
read_student, the functions `autograde grade` and Gradescope's run_autograder use.
"""

import contextlib
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import time
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.course.stages import ROOT, STAGE_BY_ID, STAGES
from autograder.grading import submissions
from autograder.grading.intake import tree
from autograder.grading.intake.notebook import MAX_CODE_CHARS, extract_code
from autograder.grading.submissions import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_NOTE,
    MAX_NOTES,
    ClassError,
    find_class,
    printable,
    read_student,
)
from autograder.outputs import name_order
from autograder.outputs.folders import RESERVED, fold, output_folders
from autograder.outputs.results import failure_json, json_text
from tests.classes import perfect, reference, write_student, write_zip

STAGE_IDS = [stage.id for stage in STAGES]
RULES = STAGE_BY_ID["01_rules"]


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail instead of hanging (a blocking open of a named pipe would never return)."""

    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def assert_well_formed(submission) -> None:
    """Each stage has a source or a problem, never both; every string is printable, encodable and short."""
    assert set(submission.sources) | set(submission.problems) == set(STAGE_IDS)
    assert not set(submission.sources) & set(submission.problems)
    texts = [submission.student, *submission.notes, *submission.problems.values()]
    for source in submission.sources.values():
        texts += [source.name, *source.notes]
        source.text.encode("utf-8")  # it is written to a file in the sandbox
        assert "\0" not in source.text
    for text in texts:
        assert printable(text, 10**6) == text, text
        text.encode("utf-8")
        assert len(text) <= MAX_NOTE
    assert len(submission.notes) <= MAX_NOTES
    assert len(submission.files_hash) == 64


def students_and_notes(folder: Path, out: Path | None = None) -> tuple[list[tuple[str, Path]], list[str]]:
    found = find_class(folder, out)
    return found.students, found.notes


def read(path: Path):
    submission = read_student(path.name, path)
    assert_well_formed(submission)
    return submission


# --------------------------------------------------------------------------------------------------
# Links are never followed
# --------------------------------------------------------------------------------------------------


def test_a_folder_linked_to_the_solutions_earns_nothing(tmp_path):
    """Does `work -> <course>/solutions` (or a stage folder linked into it) give no source at all?"""
    alice = tmp_path / "class" / "alice"
    alice.mkdir(parents=True)
    (alice / "work").symlink_to(ROOT / "solutions")
    (alice / "01_rules").symlink_to(ROOT / "solutions" / "01_rules")
    (alice / "minimax.py").symlink_to(ROOT / "solutions" / "03_minimax" / "minimax.py")
    submission = read(alice)
    assert submission.sources == {}
    assert "01_rules is a symbolic link" in submission.problems["01_rules"]
    assert "minimax.py is a symbolic link" in submission.problems["03_minimax"]
    assert submission.problems["02_count_games"] == "count_games.py was not submitted"
    assert any("work is a symbolic link; links are not followed" in note for note in submission.notes)


def test_a_folder_linked_to_a_classmate_earns_nothing(tmp_path):
    """Does a link to a classmate's folder, stage folder or module read nothing of the classmate's work?"""
    folder = tmp_path / "class"
    write_student(folder / "bob", perfect())
    alice = folder / "alice"
    alice.mkdir()
    (alice / "bob").symlink_to("../bob")  # the only folder: would be taken as a wrapper if it were followed
    assert read(alice).sources == {}
    (alice / "01_rules").symlink_to("../bob/01_rules")
    (alice / "count_games.py").symlink_to(folder / "bob" / "02_count_games" / "count_games.py")
    submission = read(alice)
    assert submission.sources == {} and read(folder / "bob").problems == {}
    students, _ = students_and_notes(folder)
    assert [name for name, _ in students] == ["alice", "bob"]


def test_a_linked_stage_module_or_folder_is_skipped_and_the_rest_is_graded(tmp_path):
    """Are real files read beside links, and is a link passed over for the flat file it would shadow?"""
    folder = tmp_path / "class"
    write_student(folder / "bob", perfect())
    alice = write_student(folder / "alice", {"03_minimax": reference("03_minimax")})
    (alice / "05_winning_square").mkdir()
    (alice / "05_winning_square" / "winning_square.py").symlink_to(
        folder / "bob" / "05_winning_square" / "winning_square.py"
    )
    (alice / "01_rules").symlink_to(folder / "bob" / "01_rules")
    (alice / "rules.py").write_text(reference("01_rules"))  # the flat file is used instead of the link
    submission = read(alice)
    assert set(submission.sources) == {"01_rules", "03_minimax"}
    assert submission.sources["01_rules"].name == "rules.py"
    problem = submission.problems["05_winning_square"]
    assert problem == (
        "winning_square.py could not be read: "
        "05_winning_square/winning_square.py is a symbolic link (links are not followed)"
    )
    assert "01_rules is a symbolic link; links are not followed" in submission.notes


def test_a_student_entry_that_is_a_link_is_listed_and_unreadable(tmp_path):
    """Is a link in SUBMISSIONS listed as a student whose every stage says it is a link?"""
    folder = tmp_path / "class"
    write_student(folder / "bob", perfect())
    (folder / "alice").symlink_to("bob")
    write_zip(tmp_path / "upload.zip", perfect())
    (folder / "carol.zip").symlink_to(tmp_path / "upload.zip")
    students, _ = students_and_notes(folder)
    assert [name for name, _ in students] == ["alice", "bob", "carol"]
    paths = dict(students)
    assert set(read(paths["alice"]).problems.values()) == {"alice is a symbolic link; links are not followed"}
    assert set(read(paths["carol"]).problems.values()) == {"carol.zip is a symbolic link; links are not followed"}


def symlink_member(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # unix, as `zip -y` writes it
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def test_a_zip_with_link_entries_reads_none_of_them(tmp_path):
    """Is a zip member marked as a link ignored with a note, in the zip and once `unzip` restored it?"""
    folder = tmp_path / "class"
    write_student(folder / "bob", perfect())
    with zipfile.ZipFile(folder / "alice.zip", "w") as archive:
        archive.writestr(symlink_member("01_rules", "../bob/01_rules"), "../bob/01_rules")
        archive.writestr(symlink_member("count_games.py", "../bob/02_count_games/count_games.py"), "../bob/x")
        archive.writestr("minimax.py", reference("03_minimax"))
    submission = read(folder / "alice.zip")
    assert set(submission.sources) == {"03_minimax"}
    assert "01_rules is a symbolic link" in submission.problems["01_rules"]
    assert "count_games.py is a symbolic link" in submission.problems["02_count_games"]
    assert "01_rules in alice.zip is a symbolic link; links are not followed" in submission.notes
    if shutil.which("unzip"):  # what an instructor who unzips the upload gets: real links on disk
        unzipped = tmp_path / "unzipped" / "alice"
        unzipped.mkdir(parents=True)
        subprocess.run(["unzip", "-q", str(folder / "alice.zip"), "-d", str(unzipped)], check=True)
        assert (unzipped / "01_rules").is_symlink()
        assert set(read(unzipped).sources) == {"03_minimax"}


def test_zip_members_whose_path_leaves_the_zip_are_ignored(tmp_path):
    with zipfile.ZipFile(tmp_path / "alice.zip", "w") as archive:
        archive.writestr("../bob/rules.py", reference("01_rules"))
        archive.writestr("/etc/rules.py", reference("01_rules"))
        archive.writestr("./05_winning_square/winning_square.py", reference("05_winning_square"))
    submission = read(tmp_path / "alice.zip")
    assert set(submission.sources) == {"05_winning_square"}
    assert any("../bob/rules.py, whose path leaves the zip's folder" in note for note in submission.notes)


# --------------------------------------------------------------------------------------------------
# Zips: read in memory, every member's error caught on its own
# --------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not shutil.which("zip"), reason="the zip command is not installed")
def test_an_encrypted_member_spoils_its_stage_only(tmp_path):
    """Is a password-protected member (made by `zip -e`) one stage's problem, with the other stages read?"""
    source = write_student(tmp_path / "work", {"01_rules": reference("01_rules")}, nested=False)
    subprocess.run(["zip", "-q", "-P", "secret", str(tmp_path / "alice.zip"), "rules.py"], cwd=source, check=True)
    write_student(source, {"05_winning_square": reference("05_winning_square")}, nested=False)
    subprocess.run(["zip", "-q", str(tmp_path / "alice.zip"), "winning_square.py"], cwd=source, check=True)
    submission = read(tmp_path / "alice.zip")
    assert set(submission.sources) == {"05_winning_square"}
    assert submission.problems["01_rules"] == (
        "rules.py in alice.zip is encrypted (password-protected); zip it again without a password"
    )


def patch_member(raw: bytearray, name: bytes, **fields: int) -> bytearray:
    """Change fields of a member's headers in zip bytes: flags, method, sizes (local and central headers)."""
    local = {"flags": 6, "method": 8, "compressed": 18, "size": 22}
    central = {"flags": 8, "method": 10, "compressed": 20, "size": 24}
    for signature, offsets, name_at in ((b"PK\x03\x04", local, 30), (b"PK\x01\x02", central, 46)):
        at = raw.find(signature)
        while at >= 0:
            if raw[at + name_at : at + name_at + len(name)] == name:
                for field_name, value in fields.items():
                    width = 2 if field_name in ("flags", "method") else 4
                    raw[at + offsets[field_name] : at + offsets[field_name] + width] = value.to_bytes(width, "little")
            at = raw.find(signature, at + 4)
    return raw


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytearray:
    path = Path(tempfile.mkdtemp()) / "z.zip"
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    raw = bytearray(path.read_bytes())
    shutil.rmtree(path.parent)
    return raw


def corrupt_data(raw: bytearray) -> bytearray:
    """Zero 40 bytes inside rules.py's deflated data (just after its local header)."""
    at = raw.find(b"rules.py") + len(b"rules.py") + 20
    raw[at : at + 40] = bytes(40)
    return raw


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda raw: patch_member(raw, b"rules.py", flags=1), "is encrypted (password-protected)"),
        (lambda raw: patch_member(raw, b"rules.py", method=99), "compressed with a method the grader does not read"),
        (lambda raw: patch_member(raw, b"rules.py", method=zipfile.ZIP_BZIP2), "(zip method 12)"),
        (lambda raw: patch_member(raw, b"rules.py", method=zipfile.ZIP_LZMA), "(zip method 14)"),
        (lambda raw: patch_member(raw, b"rules.py", size=100), "could not be read: Bad CRC-32"),
        (lambda raw: patch_member(raw, b"rules.py", compressed=5), "rules.py in alice.zip could not be read"),
        (corrupt_data, "rules.py in alice.zip could not be read"),
    ],
)
def test_a_bad_member_spoils_its_stage_only(tmp_path, damage, says):
    """Do a flagged, unsupported, short, corrupt member each make their stage unreadable, the rest read?"""
    members = {"rules.py": "".join(f"x{n} = {n * n}\n" for n in range(400)).encode(), "minimax.py": b"x = 1\n"}
    (tmp_path / "alice.zip").write_bytes(bytes(damage(zip_bytes(members))))
    submission = read(tmp_path / "alice.zip")
    assert says in submission.problems["01_rules"], submission.problems["01_rules"]
    assert set(submission.sources) == {"03_minimax"}


@pytest.mark.parametrize(
    "content",
    [
        b"PK\x03\x04 this is not a zip",
        b"",
        bytes(range(256)) * 40,
        lambda raw: raw[: len(raw) // 2],  # cut short: no central directory
        lambda raw: raw[:-10],  # the end record cut
        lambda raw: raw[:40] + bytes(len(raw) - 40),  # all but the start wiped
    ],
)
def test_a_truncated_or_corrupt_zip_is_one_clear_problem(tmp_path, content):
    if callable(content):
        content = bytes(content(zip_bytes({"rules.py": reference("01_rules").encode(), "minimax.py": b"x = 1\n"})))
    (tmp_path / "alice.zip").write_bytes(content)
    submission = read(tmp_path / "alice.zip")
    assert submission.sources == {}
    assert set(submission.problems.values()) == {"alice.zip could not be read: it is not a zip file"}


def test_a_zip_bomb_is_refused_without_inflating_it(tmp_path):
    """Is a member that inflates past the cap refused, whether its size is told truly or not, in little memory?"""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("rules.py", "w") as member:
            block = bytes(1 << 20)
            for _ in range(64):  # 64 MiB of zeros: about 280 KB deflated
                member.write(block)
        archive.writestr("minimax.py", "x = 1\n")
    honest = bytes(path.read_bytes())
    lying = bytes(patch_member(bytearray(honest), b"rules.py", size=1000))  # the central directory says 1,000 bytes
    for raw, says in ((honest, "is 67,108,864 bytes; a stage module must be under"), (lying, "Bad CRC-32")):
        path.write_bytes(raw)
        tracemalloc.start()
        started = time.perf_counter()
        submission = read(path)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert says in submission.problems["01_rules"], submission.problems["01_rules"]
        assert "03_minimax" in submission.sources
        assert peak < 4 << 20 and seconds < 1, (peak, seconds)


def test_a_zip_claiming_a_huge_file_list_is_refused_before_it_is_parsed(tmp_path):
    """A 14 MB zip of 300,000 tiny entries would become 300,000 objects in zipfile: is it refused first?"""
    entry = struct.pack("<4s4H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0) + b"a"
    count = 300_000
    directory = entry * count
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(directory), 0, 0)
    (tmp_path / "alice.zip").write_bytes(directory + end)
    del directory
    tracemalloc.start()
    submission = read(tmp_path / "alice.zip")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "alice.zip holds 65,535 files" in submission.problems["01_rules"]
    assert peak < 2 << 20, peak


def test_too_many_zip_members_is_one_clear_problem(tmp_path):
    with zipfile.ZipFile(tmp_path / "alice.zip", "w") as archive:
        for number in range(submissions.MAX_ZIP_MEMBERS + 1):
            archive.writestr(f"junk/{number}.txt", "")
    assert read(tmp_path / "alice.zip").problems["01_rules"].startswith("alice.zip holds 2,001 files")


# --------------------------------------------------------------------------------------------------
# Folders: only the stage files are opened, with caps
# --------------------------------------------------------------------------------------------------


def test_many_sparse_files_stay_cheap(tmp_path):
    """Do hundreds of sparse files claiming a GiB each, some at the stage paths, cost little memory and time?"""
    alice = tmp_path / "alice"
    for folder in ["", *STAGE_IDS, "junk", "junk/deeper"]:
        (alice / folder).mkdir(parents=True, exist_ok=True)
        for name in [f"sparse{n}.py" for n in range(40)] + [s.filename for s in STAGES] + ["01_rules.ipynb"]:
            with open(alice / folder / name, "wb") as handle:
                handle.truncate(1 << 30)
    tracemalloc.start()
    started = time.perf_counter()
    submission = read(alice)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert submission.sources == {}
    assert (
        submission.problems["01_rules"]
        == "01_rules/rules.py is 1,073,741,824 bytes; a stage module must be under 1,048,576"
    )
    assert peak < 1 << 20 and seconds < 1, (peak, seconds)


def test_a_named_pipe_or_a_device_at_a_stage_path_is_never_opened(tmp_path):
    """Does a FIFO named rules.py (which blocks whoever opens it to read) give a problem at once?"""
    alice = write_student(tmp_path / "class" / "alice", {"03_minimax": reference("03_minimax")})
    (alice / "01_rules").mkdir()
    os.mkfifo(alice / "01_rules" / "rules.py")
    os.mkfifo(alice / "count_games.py")
    if os.geteuid() == 0:
        os.mknod(alice / "winning_square.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # like /dev/zero
    os.mkfifo(tmp_path / "class" / "bob.zip")
    with deadline(5):
        submission = read(alice)
        assert read_student("bob", tmp_path / "class" / "bob.zip").problems["01_rules"] == (
            "bob.zip is not a folder or a zip file: it is a named pipe, not a file"
        )
        students, notes = students_and_notes(tmp_path / "class")
    assert set(submission.sources) == {"03_minimax"}
    assert (
        submission.problems["01_rules"] == "rules.py could not be read: 01_rules/rules.py is a named pipe, not a file"
    )
    assert "a named pipe" in submission.problems["02_count_games"]
    if os.geteuid() == 0:
        assert "is a device, not a file" in submission.problems["05_winning_square"]
    assert [name for name, _ in students] == ["alice"]
    assert any("bob.zip" in note for note in notes)


def test_the_entries_looked_at_are_capped_but_unrelated_folders_are_not_walked(tmp_path):
    """Is a folder of more than MAX_ENTRIES entries refused, while a big node_modules beside the stages is fine?"""
    alice = write_student(tmp_path / "alice", {"01_rules": reference("01_rules")})
    (alice / "node_modules").mkdir()
    for number in range(MAX_ENTRIES + 500):
        (alice / "node_modules" / f"{number}.js").write_text("")
    assert set(read(alice).sources) == {"01_rules"}
    for number in range(MAX_ENTRIES):
        (alice / f"{number}.txt").write_text("")
    submission = read(alice)
    assert submission.sources == {}
    assert "alice holds over 1,000 files and folders where the grader looks" in submission.problems["01_rules"]


def test_the_total_read_per_student_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(tree, "MAX_TOTAL_BYTES", 3000)
    alice = write_student(tmp_path / "alice", {s: "x = 1\n" * 200 for s in STAGE_IDS})  # 1,200 bytes each
    submission = read(alice)
    assert submission.sources == {}
    assert "alice: its stage files come to over 3,000 bytes together" in submission.problems["01_rules"]


def test_wrapper_folders_are_looked_through(tmp_path):
    """Are stage files found inside one or two wrapper folders, beside __MACOSX or an unrelated folder?"""
    cheap = {"01_rules": reference("01_rules"), "05_winning_square": reference("05_winning_square")}
    layouts = {"once": "once/", "twice": "twice/inner/", "flat_wrapped": "flat_wrapped/", "beside": "work/"}
    for name, prefix in layouts.items():
        write_student(tmp_path / name / prefix, cheap, nested=name != "flat_wrapped")
    (tmp_path / "once" / "__MACOSX" / "once").mkdir(parents=True)
    (tmp_path / "once" / "__MACOSX" / "once" / "._rules.py").write_bytes(b"\0\x05\x16\x07")
    (tmp_path / "twice" / "twice" / "images").mkdir()
    (tmp_path / "twice" / "twice" / "README.md").write_text("my work")
    (tmp_path / "beside" / "venv").mkdir()  # bigger than the cap on entries: looked into, not charged
    for number in range(MAX_ENTRIES + 10):
        (tmp_path / "beside" / "venv" / str(number)).write_text("")
    write_zip(tmp_path / "zipped.zip", cheap, prefix="zipped/inner/")
    for path in [tmp_path / name for name in layouts] + [tmp_path / "zipped.zip"]:
        assert set(read(path).sources) == {"01_rules", "05_winning_square"}, path
    too_deep = write_student(tmp_path / "deep" / "a" / "b" / "c" / "d", cheap)
    assert read(tmp_path / "deep").sources == {} and read(too_deep).sources.keys() == cheap.keys()


def test_the_hash_depends_only_on_the_files(tmp_path):
    """Do the same files elsewhere and later give the same hash, and a changed byte another?"""
    sources = {"01_rules": reference("01_rules"), "03_minimax": reference("03_minimax")}
    first = read(write_student(tmp_path / "one" / "alice", sources))
    time.sleep(0.01)
    second = read(write_student(tmp_path / "two" / "elsewhere" / "alice", sources))
    assert first == second and first.files_hash == second.files_hash
    (tmp_path / "one" / "alice" / "rules.py").symlink_to("01_rules/rules.py")  # an ignored link changes nothing read
    assert read(tmp_path / "one" / "alice").files_hash == first.files_hash
    changed = {**sources, "01_rules": sources["01_rules"] + "\n"}
    assert read(write_student(tmp_path / "three" / "alice", changed)).files_hash != first.files_hash
    fifo = write_student(tmp_path / "four" / "alice", {"03_minimax": sources["03_minimax"]})
    os.mkfifo(fifo / "rules.py")
    assert read(fifo).files_hash != first.files_hash


# --------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------


def test_names_that_are_not_utf8_or_hold_control_characters_are_shown_escaped(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for raw in (b"caf\xe9", b"red\x1b[31mbold", "\u202eevil".encode(), "ok-ünïcode".encode()):
        os.mkdir(os.path.join(os.fsencode(folder), raw))
        write_student(Path(os.fsdecode(os.path.join(os.fsencode(folder), raw))), {"01_rules": reference("01_rules")})
    (folder / "caf\\xe9").mkdir()  # a real name that reads like the escaped one: both are kept, distinct
    students, notes = students_and_notes(folder)
    names = [name for name, _ in students]
    assert names == sorted(names, key=name_order) and len(set(names)) == 5
    assert {"caf\\xe9", "red\\x1b[31mbold", "\\u202eevil", "ok-ünïcode"} <= set(names)
    assert dict(students)["caf\\xe9~2"].name == "caf\udce9"  # the literal name sorts first (byte order)
    for name, path in students:
        name.encode("utf-8")
        submission = read_student(name, path)
        assert_well_formed(submission)
        assert submission.student == name
        assert set(submission.sources) == (set() if path.name == "caf\\xe9" else {"01_rules"})
    assert any("caf\\xe9~2: the name is not plain UTF-8 text" in note for note in notes)
    assert printable("x" * 500) == "x" * 99 + "…"


def test_outputs_inside_submissions_are_skipped_or_renamed(tmp_path):
    """Is OUT inside SUBMISSIONS skipped, and does a student named like an output get a folder of its own?"""
    folder = tmp_path / "class"
    names = ["grades.csv", "report.html", "gradebook.db", "gradebook.db-wal", "Gradebook.DB-journal", "alice"]
    for name in names:
        write_student(folder / name, {"01_rules": reference("01_rules")})
    (folder / "out").mkdir()
    (folder / ".git").mkdir()
    (folder / "__MACOSX").mkdir()
    (folder / "_private.zip").write_bytes(b"")
    students, notes = students_and_notes(folder, folder / "out")
    assert sorted(name for name, _ in students) == sorted(names)
    assert "skipped out: it is the output folder (--out), not a submission" in notes
    assert "skipped .git: a git repository's own data, not a student" in notes
    assert "skipped __MACOSX: macOS's resource forks, added when a zip is made in the Finder, not a student" in notes
    assert any(note.startswith("skipped _private.zip: names starting with '_' are not students") for note in notes)
    (tmp_path / "link-to-out").symlink_to(folder / "out")
    _, notes = students_and_notes(folder, tmp_path / "link-to-out")
    assert "skipped out: it is the output folder (--out), not a submission" in notes
    folders = output_folders(name for name, _ in students)
    assert len(set(folders.values())) == len(students) and folders["alice"] == "alice"
    assert not {f.casefold() for f in folders.values()} & RESERVED
    assert output_folders([".hidden", "grades.csv"]) == {".hidden": "_.hidden", "grades.csv": "_grades.csv"}
    assert all(set(read_student(name, path).sources) == {"01_rules"} for name, path in students)


def test_a_folder_and_a_zip_of_the_same_name_keep_the_folder(tmp_path):
    folder = tmp_path / "class"
    write_student(folder / "alice", {"01_rules": reference("01_rules")})
    write_zip(folder / "alice.zip", perfect())
    students, notes = students_and_notes(folder)
    assert students == [("alice", folder / "alice")]
    assert "skipped alice.zip: alice is graded instead" in notes


def test_an_unusable_class_folder_is_a_class_error(tmp_path):
    for path in (tmp_path / "missing", tmp_path):
        with pytest.raises(ClassError):
            find_class(path)
    (tmp_path / "file").write_text("")
    with pytest.raises(ClassError, match="is not a folder"):
        find_class(tmp_path / "file")


# --------------------------------------------------------------------------------------------------
# Notebooks: linear time, bounded depth and memory
# --------------------------------------------------------------------------------------------------


def notebook(*sources: str, **extra) -> bytes:
    cells = [{"cell_type": "code", "metadata": {}, "source": source} for source in sources]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells, **extra}).encode()


@pytest.mark.parametrize(
    "line",
    [" " * 1_000_000, " " * 1_000_000 + "x", "a" + " " * 1_000_000 + "!", "x" * 1_000_000 + " ?", "(" * 500_000],
)
def test_a_notebook_with_a_huge_line_is_read_in_linear_time(tmp_path, line):
    raw = notebook("%time 1\n" + line + "\n", "def winner(board):\n    return None\n")
    started = time.perf_counter()
    code, notes = extract_code(raw, "rules.ipynb")
    assert time.perf_counter() - started < 1
    assert "def winner" in code and all(len(note) < 200 for note in notes)
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "rules.ipynb").write_bytes(raw)
    started = time.perf_counter()
    assert read(tmp_path / "alice").sources["01_rules"].text == code
    assert time.perf_counter() - started < 1


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_a_notebook_nested_100000_deep_is_unreadable_not_a_crash(tmp_path, opening, closing):
    depth = 100_000
    raw = b'{"nbformat": 4, "cells": [], "metadata": ' + (opening * depth + "1" + closing * depth).encode() + b"}"
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "01_rules.ipynb").write_bytes(raw)
    started = time.perf_counter()
    submission = read(tmp_path / "alice")
    assert time.perf_counter() - started < 1
    assert (
        submission.problems["01_rules"]
        == "01_rules.ipynb is not a notebook: its JSON is nested too deeply to be a notebook"
    )


@pytest.mark.parametrize(
    "source, says",
    [
        ("x = '\udc80'\n", "a lone surrogate, '\\udc80') at line 3"),
        ("x = '\0'\n", "contains NUL characters"),
    ],
)
def test_notebook_text_python_cannot_hold_is_a_problem(tmp_path, source, says):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "rules.ipynb").write_bytes(notebook(source))
    assert says in read(tmp_path / "alice").problems["01_rules"]


def test_notes_about_dropped_lines_are_capped_and_printable():
    code, notes = extract_code(notebook("\n".join(f"%pwd \x1b[2J{n} " + "y" * 100 for n in range(2_000))), "x.ipynb")
    assert code.count("pass  # IPython magic") == 2_000
    assert len(notes) == 20 and all(len(note) < 200 and "\x1b" not in note for note in notes)
    assert notes[-1] == "... and 1,981 more IPython-only lines left out"


# --------------------------------------------------------------------------------------------------
# Gradescope reads through the same reader
# --------------------------------------------------------------------------------------------------


def test_gradescope_gives_nothing_for_a_linked_folder(tmp_path):
    """Does run_autograder's grading of /autograder/submission follow no link either (all zeros, said why)?"""
    from autograder.verbs import gradescope

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "work").symlink_to(ROOT / "solutions")
    (tmp_path / "submission" / "01_rules").symlink_to(ROOT / "solutions" / "01_rules")
    assert gradescope.run(tmp_path) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["score"] == 0
    assert "01_rules is a symbolic link" in json.dumps(results)


# --------------------------------------------------------------------------------------------------
# Fuzzing: random trees never make the reader raise, leave the folder, pass a cap or change its mind
# --------------------------------------------------------------------------------------------------

SECRET = "SECRET-OUTSIDE-THE-SUBMISSION"
STAGE_PATHS = [*STAGE_IDS, *(s.filename for s in STAGES), "rules.ipynb", "01_rules.ipynb"]
NAMES = st.one_of(
    st.sampled_from(STAGE_PATHS),  # most names are where the reader looks
    st.sampled_from(STAGE_PATHS),
    st.sampled_from(["alice", "wrap", "__MACOSX", ".git", "rules.PY", "01_rules "]),
    st.binary(min_size=1, max_size=12)
    .map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))
    .filter(lambda b: b not in (b".", b"..")),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
CELL_TEXT = st.one_of(
    st.sampled_from(
        ["%time 1\n", "x = !ls\n", "def winner(b):\n    return None\n", "\udc80", "a\0b", " " * 3000 + "?"]
    ),
    st.text(max_size=40),
)
NOTEBOOK = st.one_of(
    JSON.map(lambda value: json.dumps(value).encode()),
    st.lists(
        st.fixed_dictionaries(
            {"cell_type": st.sampled_from(["code", "markdown"]), "source": CELL_TEXT | st.lists(CELL_TEXT, max_size=3)},
            optional={"metadata": JSON},
        ),
        max_size=4,
    ).map(lambda cells: json.dumps({"nbformat": 4, "cells": cells}).encode()),
)
CONTENT = st.one_of(
    st.binary(max_size=200),
    st.just(b"def winner(board):\n    return None\n"),
    NOTEBOOK,
)


@st.composite
def zips(draw) -> bytes:
    """Zip bytes with random members: names from the stage paths, links, encrypted flags, odd methods, damage."""
    members = draw(
        st.lists(
            st.tuples(st.lists(NAMES, min_size=1, max_size=3), CONTENT, st.sampled_from(["file", "link", "dir"])),
            max_size=5,
        )  # fmt: skip
    )
    path = Path(tempfile.mkdtemp()) / "z.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a name given twice is one of the cases
        for parts, content, kind in members:
            name = "/".join(os.fsdecode(part) if isinstance(part, bytes) else part for part in parts)
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            info = zipfile.ZipInfo(name + ("/" if kind == "dir" else ""))
            info.compress_type = zipfile.ZIP_DEFLATED
            if kind == "link":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, b"" if kind == "dir" else content)
    raw = bytearray(path.read_bytes())
    shutil.rmtree(path.parent)
    for _ in range(draw(st.integers(0, 2))):  # flip header fields or data bytes here and there
        if raw:
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    return bytes(raw)


KINDS = ["file", "file", "dir", "link-inside", "link-outside", "link-outside", "link-outside", "fifo", "sparse", "zip"]
ENTRY = st.tuples(st.lists(NAMES, min_size=1, max_size=2), st.sampled_from(KINDS), CONTENT, st.integers(0, 20))
# Links out of the submission, named where the reader looks: (name, target inside the classmate's folder).
OUTSIDE = [("01_rules", "01_rules"), ("rules.py", "01_rules/rules.py"), ("minimax.py", "minimax.py"),
           ("03_minimax", "."), ("work", "."), ("wrap", "..")]  # fmt: skip


def build_tree(base: Path, entries, zipped: bytes | None) -> Path:
    """A student folder (or zip) under base/class, and a classmate with SECRET outside it that links point to."""
    outside = base / "class" / "classmate"
    write_student(outside, {"01_rules": f"# {SECRET}\n"}, nested=True)
    write_student(outside, {"03_minimax": f"# {SECRET}\n"}, nested=False)
    if zipped is not None:
        path = base / "class" / "alice.zip"
        path.write_bytes(zipped)
        return path
    root = os.fsencode(base / "class" / "alice")
    os.makedirs(root)
    root = os.path.realpath(root)  # so that a real path differs from its own only through a link made below
    made: list[bytes] = [root]
    for parts, kind, content, choice in entries:
        parts = [os.fsencode(p) if isinstance(p, str) else p for p in parts]
        path = os.path.join(root, *parts)
        with contextlib.suppress(OSError):  # a name already taken, a parent that is a file: skip that entry
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.realpath(os.path.dirname(path)) != os.path.abspath(os.path.dirname(path)):
                continue  # never write through a link made earlier
            if kind == "file":
                with open(path, "xb") as handle:
                    handle.write(content)
            elif kind == "dir":
                os.mkdir(path)
            elif kind == "link-inside":
                os.symlink(os.path.relpath(made[choice % len(made)], os.path.dirname(path)), path)
            elif kind == "link-outside":
                name, target = OUTSIDE[choice % len(OUTSIDE)]
                if choice % 3:  # mostly named as a stage path, else under the random name drawn
                    path = os.path.join(os.path.dirname(path), os.fsencode(name))
                target = os.path.join(os.fsencode(outside), os.fsencode(target))
                os.symlink(target if choice % 2 else os.path.relpath(target, os.path.dirname(path)), path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "sparse":
                with open(path, "xb") as handle:
                    handle.truncate(1 << 40)
            elif kind == "zip":
                with open(path, "xb") as handle:
                    handle.write(content)
            made.append(path)
    return Path(os.fsdecode(root))


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(entries=st.lists(ENTRY, min_size=3, max_size=8), zipped=st.one_of(st.none(), st.none(), st.none(), zips()))
def test_random_submissions_never_break_the_reader(entries, zipped):
    """For any tree or zip: no exception, a source or a problem per stage, within caps, nothing from outside, stable."""
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        with deadline(10):
            path = build_tree(Path(one), entries, zipped)
            first = read_student(path.name, path)
            assert_well_formed(first)
            assert read_student(path.name, path) == first  # the same read twice
            again = build_tree(Path(two), entries, zipped)
            assert read_student(again.name, again) == first  # elsewhere, later: the same result and hash
            students, notes = students_and_notes(Path(one) / "class")
        for source in first.sources.values():
            assert SECRET not in source.text
            assert len(source.text) <= (MAX_CODE_CHARS if source.name.endswith(".ipynb") else MAX_FILE_BYTES)
        everything = json.dumps([first.notes, first.problems, {k: v.name for k, v in first.sources.items()}, notes])
        assert one not in everything and two not in everything  # no absolute path of the grader's machine leaks
        assert [name for name, _ in students] == sorted({"alice", "classmate"})


@settings(max_examples=40, derandomize=True, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=10, unique=True))
def test_random_class_folders_give_printable_distinct_names(names):
    """Whatever the entries are called, are students' names printable, distinct, sorted, with distinct outputs?"""
    with tempfile.TemporaryDirectory() as base:
        folder = os.path.join(os.fsencode(base), b"class")
        os.mkdir(folder)
        for name in names:
            name = os.fsencode(name) if isinstance(name, str) else name
            with contextlib.suppress(FileExistsError):
                os.mkdir(os.path.join(folder, name))
        try:
            students, notes = students_and_notes(Path(os.fsdecode(folder)))
        except ClassError as error:
            assert "holds no submissions" in str(error) or "is one student's folder" in str(error)
            return
        shown = [name for name, _ in students]
        assert shown == sorted(shown, key=name_order) and len(set(shown)) == len(shown)
        assert len({fold(folder) for folder in output_folders(shown).values()}) == len(shown)
        for text in [*shown, *notes]:
            assert printable(text, 10**6) == text
            text.encode("utf-8")
        for name, path in students:
            assert path.is_dir() and not path.name.startswith((".", "_"))
            assert_well_formed(read_student(name, path))


# --------------------------------------------------------------------------------------------------
# Near-miss names, folders that are not students, one student's folder
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "found, should",
    [
        ("Rules.py", "rules.py"),
        ("rules (1).py", "rules.py"),
        ("rules - Copy.py", "rules.py"),
        ("rules.py.txt", "rules.py"),
        ("01_rules/Rules.py", "01_rules/rules.py"),
        ("1_rules/rules.py", "01_rules/rules.py"),
        ("01-Rules/rules (2).py", "01_rules/rules.py"),
        ("Rules.ipynb", "rules.ipynb"),
    ],
)
def test_a_near_miss_name_is_graded_as_the_name_it_should_have_with_a_note(tmp_path, found, should):
    folder = tmp_path / "alice"
    (folder / found).parent.mkdir(parents=True, exist_ok=True)
    text = reference("01_rules")
    (folder / found).write_bytes(notebook(text) if found.endswith(".ipynb") else text.encode())
    submission = read(folder)
    assert submission.sources["01_rules"].name == found
    assert f"found {found}, graded it as {should}: name it {should} next time" in submission.sources["01_rules"].notes
    assert submission.renamed == {"01_rules": (found, should)}
    (folder / found).rename((folder / found).with_name("notes.py"))  # no longer a near miss: not submitted
    assert read(folder).problems["01_rules"] == "rules.py was not submitted"


def test_two_near_misses_are_refused_naming_both_and_an_exact_name_wins(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "Rules.py").write_text(reference("01_rules"))
    (folder / "rules (1).py").write_text(reference("01_rules"))
    assert read(folder).problems["01_rules"] == (
        "found Rules.py and rules (1).py for rules.py: hand in one file named rules.py"
    )
    (folder / "rules.py").write_text(reference("01_rules"))
    submission = read(folder)
    assert submission.sources["01_rules"].name == "rules.py" and not submission.renamed


def test_a_near_miss_in_a_zip_is_found_too_and_links_stay_unfollowed(tmp_path):
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as archive:
        archive.writestr("bob/Rules.py", reference("01_rules"))
    assert read(tmp_path / "bob.zip").renamed == {"01_rules": ("Rules.py", "rules.py")}
    folder = tmp_path / "carol"
    folder.mkdir()
    (tmp_path / "secret.py").write_text(SECRET)
    (folder / "Rules.py").symlink_to(tmp_path / "secret.py")
    submission = read(folder)
    assert "01_rules" not in submission.sources and submission.problems["01_rules"] == "rules.py was not submitted"


def test_folders_that_are_not_students_are_skipped_one_note_each(tmp_path):
    folder = tmp_path / "class"
    write_student(folder / "alice", {"01_rules": reference("01_rules")})
    for name in ("__MACOSX", "Thumbs", ".ipynb_checkpoints", ".git", "old-out/alice"):
        (folder / name).mkdir(parents=True)
    (folder / "Thumbs.db").write_bytes(b"")
    (folder / "notes.txt").write_text("")
    (folder / "old-out" / "gradebook.db").write_bytes(b"SQLite format 3\0" + bytes(100))
    (folder / "results-copy").mkdir()
    (folder / "results-copy" / "results.json").write_text(json_text(failure_json("a failure", 1.0)))
    (folder / "own-results").mkdir()  # a student's own results.json is not the grader's
    (folder / "own-results" / "results.json").write_text("{}")
    (folder / "out").mkdir()
    found = find_class(folder, folder / "out")
    assert [name for name, _ in found.students] == ["alice", "own-results"]
    reasons = dict(found.skipped)
    assert list(reasons) == sorted(reasons, key=name_order)
    assert set(reasons) == {
        "__MACOSX", "Thumbs", "Thumbs.db", ".ipynb_checkpoints", ".git", "old-out", "results-copy", "notes.txt", "out"
    }  # fmt: skip
    assert "gradebook.db" in reasons["old-out"] and "results.json" in reasons["results-copy"]
    assert reasons["Thumbs"] == "a Windows thumbnail folder, not a student"
    assert all(f"skipped {name}: {why}" in found.notes for name, why in found.skipped)


@pytest.mark.parametrize("inside", ["01_rules", "rules.py", "Rules.py", "1_rules", "count_games (1).py"])
def test_one_students_folder_given_as_the_class_is_refused_with_the_command_to_run(tmp_path, inside):
    student = tmp_path / "class" / "alice"
    (student / inside).parent.mkdir(parents=True, exist_ok=True)
    (student / inside).mkdir() if "." not in inside else (student / inside).write_text("")
    with pytest.raises(ClassError) as refused:
        find_class(student)
    assert f"autograde grade {tmp_path / 'class'} --out OUT --student alice" in str(refused.value)
    assert "one student's folder" in str(refused.value)


def test_names_sort_as_people_expect():
    names = ["student10", "Student2", "bob", "Ada", "student1", "ada", "x"]
    assert sorted(names, key=name_order) == ["Ada", "ada", "bob", "student1", "Student2", "student10", "x"]
    assert sorted(["9" * 5000, "1" + "0" * 5000], key=name_order)[0] == "9" * 5000  # no int(): no digit limit


def test_outputs_are_written_with_the_usual_permissions(tmp_path):
    from autograder.outputs import write_atomically

    previous = os.umask(0o022)
    try:
        write_atomically(tmp_path / "out" / "grades.csv", "student\n")
        os.umask(0o077)
        write_atomically(tmp_path / "out" / "private.csv", "student\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out" / "grades.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out" / "private.csv").stat().st_mode) == 0o600
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["grades.csv", "private.csv"]
