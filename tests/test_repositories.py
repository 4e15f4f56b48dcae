"""A class of git repositories as GitHub Classroom's tools clone them, graded as it is and as it was (--at)."""

import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from autograder.admin.submitted import submission_times
from autograder.course.stages import ROOT, STAGES
from autograder.grading.intake import git_snapshot, repositories
from autograder.outputs.results import from_json
from autograder.record import StageKind
from tests.classes import grade, read_grades, reference, starter
from tests.test_golden import page_text

DEADLINE = "2026-03-01T23:59:00+01:00"
BEFORE, AFTER = "2026-02-27T12:00:00+01:00", "2026-03-02T09:30:00+01:00"
RULES, SQUARE = "assignments/01_rules/rules.py", "assignments/05_winning_square/winning_square.py"
POINTS = {"01_rules": 10, "05_winning_square": 10}


def git(repository: Path, *arguments: str, when: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    command = ["git", "-c", "user.name=Student", "-c", "user.email=s@example.org", "-C", str(repository), *arguments]
    return subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout.strip()


def commit(repository: Path, when: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "work", when=when)
    return git(repository, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Three repositories named <assignment>-<username>, the shape of the release, with commits either side of
    the deadline; returns the folder and the commit each student should be graded at with --at."""
    folder = tmp_path_factory.mktemp("classroom")
    chosen = {}
    for username in ("alice", "bob", "carol-x"):
        repository = folder / f"tictactoe-minimax-{username}"
        repository.mkdir()
        git(repository, "init", "-q")
        (repository / "README.md").write_text("# my course copy\n")
    alice, bob, carol = (folder / f"tictactoe-minimax-{u}" for u in ("alice", "bob", "carol-x"))
    chosen["alice"] = commit(alice, BEFORE, {RULES: reference("01_rules"), SQUARE: starter("05_winning_square")})
    commit(alice, AFTER, {SQUARE: reference("05_winning_square")})  # late: not graded with --at
    chosen["bob"] = commit(bob, BEFORE, {RULES: reference("01_rules"), SQUARE: reference("05_winning_square")})
    commit(bob, AFTER, {RULES: starter("01_rules")})  # a late change that breaks stage 1
    commit(carol, AFTER, {RULES: reference("01_rules")})  # nothing before the deadline
    (alice / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\ntouch HOOK-RAN\n")
    (alice / ".git" / "hooks" / "post-checkout").chmod(0o755)
    return folder, chosen


def points(grades: dict, student: str) -> tuple[str, str, str]:
    row = grades[student]
    return row["01_rules"], row["05_winning_square"], row["total"]


@pytest.mark.slow
def test_the_working_trees_are_graded_under_the_usernames(classroom, tmp_path):
    folder, _ = classroom
    run = grade(folder, tmp_path / "out", "--jobs", "2")
    assert run.returncode == 0, run.stderr
    grades = read_grades(tmp_path / "out")
    assert sorted(grades) == ["alice", "bob", "carol-x"]
    assert points(grades, "alice") == ("10", "10", "20")
    assert points(grades, "bob") == ("0", "10", "10")
    assert points(grades, "carol-x") == ("10", "0", "10")
    data = json.loads((tmp_path / "out" / "alice" / "results.json").read_text())
    assert "commit" not in data["extra_data"]


@pytest.mark.slow
def test_at_grades_the_last_commit_before_the_deadline_without_touching_the_repositories(classroom, tmp_path):
    folder, chosen = classroom
    before = {path.name: git(path, "status", "--porcelain") for path in folder.iterdir()}
    trees = {path: path.read_bytes() for path in folder.rglob("*.py")}
    run = grade(folder, tmp_path / "out", "--jobs", "2", "--at", DEADLINE)
    assert run.returncode == 0, run.stderr
    grades = read_grades(tmp_path / "out")
    assert points(grades, "alice") == ("10", "0", "10")
    assert points(grades, "bob") == ("10", "10", "20")
    assert points(grades, "carol-x") == ("0", "0", "0")
    for student in ("alice", "bob"):
        data = json.loads((tmp_path / "out" / student / "results.json").read_text())
        assert data["extra_data"]["commit"] == {"hash": chosen[student], "time": BEFORE}
        page = (tmp_path / "out" / student / "feedback.html").read_text()
        assert f"Graded as of commit {chosen[student][:12]} ({BEFORE})" in page
    with sqlite3.connect(tmp_path / "out" / "gradebook.db") as book:  # stored with its commit, for a merge
        (stored,) = book.execute("SELECT results_json FROM submissions WHERE student = 'alice'").fetchone()
    assert json.loads(stored)["extra_data"]["commit"]["hash"] == chosen["alice"]
    carol = json.loads((tmp_path / "out" / "carol-x" / "results.json").read_text())
    assert "commit" not in carol["extra_data"]
    assert carol["extra_data"]["stages"]["01_rules"]["message"] == f"no commit before {DEADLINE}"
    assert {path.name: git(path, "status", "--porcelain") for path in folder.iterdir()} == before
    assert {path: path.read_bytes() for path in folder.rglob("*.py")} == trees
    assert not list(folder.rglob("HOOK-RAN"))


@pytest.mark.slow
def test_at_with_no_commit_before_the_moment_is_not_submitted_in_every_output(classroom, tmp_path):
    """carol committed only after the deadline: with --at she had handed nothing in by then. Is every stage of hers
    "not submitted" (not "could not be read") with the reason, in the record, the report, her feedback and the
    terminal, and is she left out of "Needs a look"?"""
    folder, _ = classroom
    out, why = tmp_path / "out", f"no commit before {DEADLINE}"
    assert grade(folder, out, "--at", DEADLINE).returncode == 0
    carol = from_json(json.loads((out / "carol-x" / "results.json").read_text()))
    assert {stage_id: entry.status.kind for stage_id, entry in carol.stages.items()} == {
        stage.id: StageKind.NOT_SUBMITTED for stage in STAGES
    }
    assert {entry.status.reason for entry in carol.stages.values()} == {why}
    report = page_text((out / "report.html").read_text())
    row = report[report.rindex("\ncarol-x\n") :].splitlines()[1 : 1 + len(STAGES) + 2]
    assert row.count("0 – not submitted") == len(STAGES) and "could not be read" not in report
    assert "Needs a look — 0 of 3 students" in report and "Every submission was graded normally." in report
    feedback = page_text((out / "carol-x" / "feedback.html").read_text())  # dates read DATE
    assert feedback.count("– not submitted\nno commit before DATE\n") == len(STAGES), feedback
    assert "could not be read" not in feedback
    # The terminal's table, printed again from the stored results (a second run reuses them).
    command = [sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out), "--at", DEADLINE]
    shown = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"}
    )
    assert shown.returncode == 0, shown.stderr
    line = next(line for line in shown.stdout.splitlines() if "carol-x" in line)
    assert line.count("0 –") == len(STAGES) and "⊘" not in shown.stdout, shown.stdout
    assert "– not submitted" in shown.stdout and "could not be read" not in shown.stdout


@pytest.mark.parametrize(
    "names, prefix",
    [
        (["hw1-alice", "hw1-bob", "hw1-carol-x"], "hw1-"),
        (["hw1-alan", "hw1-alice"], "hw1-"),  # the shared "al" is part of the usernames
        (["tictactoe-minimax-alice", "tictactoe-minimax-bob"], "tictactoe-minimax-"),
        (["hw1-alice"], ""),  # one repository: where the assignment's name ends is unknown
        (["alice", "bob"], ""),
        (["hw1-", "hw1-bob"], ""),  # a name would be empty
    ],
)
def test_the_assignment_prefix_is_the_shared_part_up_to_a_dash(names, prefix):
    assert repositories.assignment_prefix(names) == prefix


@pytest.mark.parametrize(
    "at, says",
    [
        ("2026-03-01T23:59:00", "has no time zone"),
        ("tomorrow", "must be an ISO 8601 time with a zone"),
    ],
)
def test_a_bad_at_is_one_line_and_exit_2(tmp_path, at, says):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    run = grade(tmp_path / "class", tmp_path / "out", "--at", at)
    assert run.returncode == 2 and says in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert not (tmp_path / "out").exists()


def test_at_on_folders_that_are_not_repositories_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    run = grade(tmp_path / "class", tmp_path / "out", "--at", DEADLINE)
    assert run.returncode == 2 and "alice is not one (no .git in it)" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------------
# A repository is the student's input: nothing it configures runs, nothing it points to elsewhere is read


def signed_commit(repository: Path, when: str, files: dict[str, str]) -> str:
    """A commit carrying a (fake) signature, so a configuration that shows signatures would run its program."""
    for name, text in files.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    git(repository, "add", "-A")
    tree = git(repository, "write-tree")
    stamp = f"{int(__import__('datetime').datetime.fromisoformat(when).timestamp())} +0000"
    body = (
        f"tree {tree}\nauthor S <s@example.org> {stamp}\ncommitter S <s@example.org> {stamp}\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned work\n"
    )
    object_file = repository / ".git" / "signed-commit"
    object_file.write_text(body)
    made = git(repository, "hash-object", "-t", "commit", "-w", str(object_file))
    object_file.unlink()
    git(repository, "update-ref", "HEAD", made)
    return made


def hostile_config(repository: Path, marker: Path) -> None:
    """Every way a repository's own configuration can make git run a program of the student's."""
    program = repository / "tools" / "verify.sh"
    program.parent.mkdir(exist_ok=True)
    program.write_text(f"#!/bin/sh\nid -u >> {marker}\nexit 0\n")
    program.chmod(0o755)
    included = repository / "tools" / "more.cfg"
    included.write_text(f"[core]\n\tpager = {program}\n")
    with open(repository / ".git" / "config", "a") as config:
        config.write(
            f'[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {program}\n[gpg "ssh"]\n\tprogram = {program}\n'
            f'[gpg "x509"]\n\tprogram = {program}\n[core]\n\tfsmonitor = {program}\n\tpager = {program}\n'
            f"\thooksPath = {repository / 'tools'}\n\talternateRefsCommand = {program}\n"
            f"[diff]\n\texternal = {program}\n[include]\n\tpath = {included}\n"
            f'[filter "x"]\n\tsmudge = {program}\n\tclean = {program}\n\tprocess = {program}\n'
        )
    (repository / ".gitattributes").write_text("* filter=x diff=x\n")


def test_a_repository_that_configures_a_program_never_runs_it(tmp_path):
    """Is a signature program, pager, fsmonitor, filter or include of the student's repository run by --at or
    by the submission times? (git once ran the student's signature program as root through log.showSignature)"""
    classroom = tmp_path / "classroom"
    marker = tmp_path / "ran"
    evil, honest = classroom / "hw-mallory", classroom / "hw-grace"
    for repository in (evil, honest):
        repository.mkdir(parents=True)
        git(repository, "init", "-q")
    signed_commit(evil, BEFORE, {RULES: reference("01_rules")})
    hostile_config(evil, marker)
    commit(honest, BEFORE, {RULES: reference("01_rules")})
    policy = tmp_path / "policy.toml"
    policy.write_text("[due]\n01_rules = 2026-03-01T23:59:00+01:00\n")
    for extra in ([], ["--at", DEADLINE]):
        out = tmp_path / f"out{len(extra)}"
        done = grade(classroom, out, "--policy", str(policy), *extra)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), f"the repository's program ran ({marker.read_text()!r}) with {extra}"
        grades = read_grades(out)
        assert grades["mallory"]["01_rules"] == grades["grace"]["01_rules"] == "10"
        late = json.loads((out / "grace" / "results.json").read_text())["extra_data"]["late"]["stages"]["01_rules"]
        assert late["late"] == 0 and late["source"] in ("git commit", "git commit graded (--at)")


def test_a_git_file_pointing_at_a_classmate_is_not_graded_on_their_commit(tmp_path):
    """Is a .git that is a file (gitdir: ../classmate/.git), a link, or a folder whose objects or refs live in
    another folder (alternates, commondir) refused for that student alone, with the classmate graded as usual?"""
    classroom = tmp_path / "classroom"
    honest = classroom / "hw-ada"
    honest.mkdir(parents=True)
    git(honest, "init", "-q")
    commit(honest, BEFORE, {RULES: reference("01_rules"), SQUARE: reference("05_winning_square")})
    gitfile = classroom / "hw-eve"
    gitfile.mkdir()
    (gitfile / ".git").write_text("gitdir: ../hw-ada/.git\n")
    linked = classroom / "hw-lin"
    linked.mkdir()
    (linked / ".git").symlink_to(honest / ".git")
    borrowed = classroom / "hw-bo"
    borrowed.mkdir()
    git(borrowed, "init", "-q")
    (borrowed / ".git" / "objects" / "info" / "alternates").write_text(str(honest / ".git" / "objects") + "\n")
    git(borrowed, "update-ref", "HEAD", git(honest, "rev-parse", "HEAD"))
    common = classroom / "hw-co"
    common.mkdir()
    git(common, "init", "-q")
    (common / ".git" / "commondir").write_text(str(honest / ".git") + "\n")
    empty = classroom / "hw-nan"  # a repository with no commit at all: nothing handed in, not a git failure
    empty.mkdir()
    git(empty, "init", "-q")
    broken = classroom / "hw-bea"  # its branch points at an object that is not there: a git failure
    broken.mkdir()
    git(broken, "init", "-q")
    (broken / ".git" / "refs" / "heads" / git(broken, "symbolic-ref", "--short", "HEAD")).write_text("1" * 40 + "\n")
    out = tmp_path / "out"
    done = grade(classroom, out, "--at", DEADLINE)
    assert done.returncode == 0, done.stderr
    grades = read_grades(out)
    assert (grades["ada"]["01_rules"], grades["ada"]["05_winning_square"]) == ("10", "10")
    # A git failure is "could not be read"; a repository that never had a commit handed nothing in.
    records = {student: json.loads((out / student / "results.json").read_text()) for student in os.listdir(out)
               if (out / student / "results.json").is_file()}  # fmt: skip
    kinds = {student: {entry.status.kind for entry in from_json(record).stages.values()}
             for student, record in records.items()}  # fmt: skip
    assert kinds == {"ada": kinds["ada"], "nan": {StageKind.NOT_SUBMITTED},
                     **dict.fromkeys(("eve", "lin", "bo", "co", "bea"), {StageKind.UNREADABLE})}  # fmt: skip
    assert "bad object" in records["bea"]["output"] and f"no commit before {DEADLINE}" in records["nan"]["output"]
    for student, why in (
        ("eve", ".git is a file"),
        ("lin", ".git is a link"),
        ("bo", "alternates"),
        ("co", "commondir"),
    ):
        assert grades[student]["total"] == "0", student
        output = json.loads((out / student / "results.json").read_text())["output"]
        assert why in output, (student, output)


def test_replace_refs_and_grafts_do_not_rewrite_the_history_graded(tmp_path):
    """Does a refs/replace/ object or an info/grafts file make --at grade other content than the commit holds?"""
    classroom = tmp_path / "classroom"
    student = classroom / "hw-rex"
    student.mkdir(parents=True)
    git(student, "init", "-q")
    commit(student, BEFORE, {RULES: starter("01_rules")})
    real = git(student, "rev-parse", "HEAD")
    (student / "other").mkdir()
    git(student / "other", "init", "-q")
    better = commit(student / "other", BEFORE, {RULES: reference("01_rules")})
    git(student, "fetch", "-q", str(student / "other"), "HEAD")
    git(student, "replace", real, better)
    (student / ".git" / "info" / "grafts").write_text(f"{real} {better}\n")
    out = tmp_path / "out"
    assert grade(classroom, out, "--at", DEADLINE).returncode == 0
    assert read_grades(out)["hw-rex"]["01_rules"] == "0"  # the starter it committed, not the replacement


# ---------------------------------------------------------------------------------------------------------------
# Git itself parses the student's objects: its memory, CPU and output are capped by the kernel


def inflating_commit(repository: Path, inflated: int) -> str:
    """HEAD: a loose commit object of a few hundred KB on disk whose message inflates to `inflated` bytes."""
    empty_tree = git(repository, "hash-object", "-t", "tree", "-w", "/dev/null")
    person = "S <s@example.org> 1740823200 +0000"
    head = f"tree {empty_tree}\nauthor {person}\ncommitter {person}\n\n"
    body_size = len(head) + inflated
    prefix = f"commit {body_size}\0".encode() + head.encode()
    digest, packer = hashlib.sha1(prefix), zlib.compressobj(1)
    data = [packer.compress(prefix)]
    chunk = b"a" * (16 << 20)
    for _ in range(inflated // len(chunk)):
        digest.update(chunk)
        data.append(packer.compress(chunk))
    data.append(packer.flush())
    object_id = digest.hexdigest()
    folder = repository / ".git" / "objects" / object_id[:2]
    folder.mkdir(exist_ok=True)
    (folder / object_id[2:]).write_bytes(b"".join(data))
    git(repository, "update-ref", "HEAD", object_id)
    return object_id


def tree_bomb(repository: Path, fan_out: int = 16, depth: int = 8) -> None:
    """HEAD: a commit of a tree naming one subtree fan_out times, depth deep (fan_out ** depth paths, a few KB)."""
    blob = subprocess.run(
        ["git", "-C", str(repository), "hash-object", "-w", "--stdin"], input="x\n", capture_output=True, text=True
    ).stdout.strip()
    entries = "".join(f"100644 blob {blob}\tf{i}\n" for i in range(fan_out))
    for _ in range(depth):
        tree = subprocess.run(
            ["git", "-C", str(repository), "mktree"], input=entries, capture_output=True, text=True, check=True
        ).stdout.strip()
        entries = "".join(f"040000 tree {tree}\t01_rules{i}\n" for i in range(fan_out))
    made = git(repository, "commit-tree", tree, "-m", "bomb", when=BEFORE)
    git(repository, "update-ref", "HEAD", made)


def test_objects_that_ask_git_for_gigabytes_are_stopped_for_that_student_alone(tmp_path, monkeypatch):
    """Is a commit that inflates past git's memory cap, or a tree listing billions of paths, stopped by the kernel
    (RLIMIT_AS, RLIMIT_FSIZE) with a reason for that student, while a classmate is read as usual? (A 3 MB .git
    whose commit inflates to 3 GiB once took git 25 s and 3 GiB of the grader's memory, as root.)"""
    monkeypatch.setattr(git_snapshot, "GIT_MEMORY", 256 << 20)  # the same mechanism, with a bomb quick to build
    monkeypatch.setattr(repositories, "MAX_LISTING_BYTES", 1 << 20)
    moment, _ = repositories.parse_at(DEADLINE)
    inflating, listing, honest = tmp_path / "hw-mallory", tmp_path / "hw-trudy", tmp_path / "hw-grace"
    for repository in (inflating, listing, honest):
        repository.mkdir()
        git(repository, "init", "-q")
    commit(honest, BEFORE, {RULES: reference("01_rules")})
    inflating_commit(inflating, 320 << 20)
    (inflating / RULES).parent.mkdir(parents=True)
    (inflating / RULES).write_text(reference("01_rules"))
    tree_bomb(listing)

    submission, found = repositories.read_at("mallory", inflating, moment)
    assert found is None and "memory" in submission.problems["01_rules"], submission.problems["01_rules"]
    submission, found = repositories.read_at("trudy", listing, moment)
    assert found is None and "wrote over" in submission.problems["01_rules"], submission.problems["01_rules"]
    # The submission times of the working tree: the commit cannot be read, so the file's own time is used.
    assert submission_times(inflating, {"01_rules": RULES})["01_rules"].source == "file times"
    submission, found = repositories.read_at("grace", honest, moment)
    assert found is not None and "01_rules" in submission.sources and not submission.problems.get("01_rules")
    assert submission_times(honest, {"01_rules": RULES})["01_rules"].source == "git commit"


def test_a_fifo_or_device_in_git_refuses_the_repository_without_opening_it(tmp_path):
    def device(path):
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))

    for name, make in (("fifo", os.mkfifo), ("device", device)):
        repository = tmp_path / name
        repository.mkdir()
        git(repository, "init", "-q")
        commit(repository, BEFORE, {RULES: reference("01_rules")})
        try:
            make(repository / ".git" / "refs" / "heads" / "trap")
        except PermissionError:
            pytest.skip("mknod needs root")
        with pytest.raises(git_snapshot.GitError, match="not a plain file"), git_snapshot.snapshot(repository):
            pass


def test_the_graders_own_git_environment_is_not_passed_on(tmp_path):
    """Does a GIT_DIR, GIT_CONFIG_* or GIT_PAGER in the instructor's environment (a grader started from a git
    hook, say) reach the git the grader runs: another repository read, a configured program run?"""
    classroom = tmp_path / "classroom"
    marker = tmp_path / "ran"
    own, other = classroom / "hw-ivy", classroom / "hw-grace"
    for repository in (own, other):
        repository.mkdir(parents=True)
        git(repository, "init", "-q")
    signed_commit(own, BEFORE, {RULES: starter("01_rules")})
    commit(other, BEFORE, {RULES: reference("01_rules")})
    program = tmp_path / "verify.sh"
    program.write_text(f"#!/bin/sh\nid -u >> {marker}\nexit 0\n")
    program.chmod(0o755)
    hostile = {
        "GIT_DIR": str(other / ".git"),
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "log.showSignature",
        "GIT_CONFIG_VALUE_0": "true",
        "GIT_CONFIG_KEY_1": "gpg.program",
        "GIT_CONFIG_VALUE_1": str(program),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program}'",
        "GIT_PAGER": str(program),
        "GIT_EXTERNAL_DIFF": str(program),
    }
    policy = tmp_path / "policy.toml"
    policy.write_text("[due]\n01_rules = 2026-03-01T23:59:00+01:00\n")
    for extra in ([], ["--at", DEADLINE]):
        out = tmp_path / f"out{len(extra)}"
        done = grade(classroom, out, "--policy", str(policy), *extra, env=hostile)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), extra
        grades = read_grades(out)
        assert (grades["ivy"]["01_rules"], grades["grace"]["01_rules"]) == ("0", "10"), extra  # ivy's own starter


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can hand a repository to another uid")
def test_repositories_owned_by_other_uids_are_read_as_root(tmp_path):
    """Git refuses a repository of another owner ("dubious ownership", safe.directory): does a class cloned by
    the students' uids (or unpacked with their owners) still grade with --at and get its commit times as root?"""
    classroom = tmp_path / "classroom"
    for number, username in enumerate(("ana", "ben")):
        repository = classroom / f"hw-{username}"
        repository.mkdir(parents=True)
        git(repository, "init", "-q")
        commit(repository, BEFORE, {RULES: reference("01_rules")})
        for path in (repository, *repository.rglob("*")):
            os.lchown(path, 4200 + number, 4200 + number)
    plain = subprocess.run(["git", "-C", str(classroom / "hw-ana"), "log", "-1"], capture_output=True, text=True)
    assert plain.returncode != 0 and "dubious ownership" in plain.stderr  # what git itself does with them
    policy = tmp_path / "policy.toml"
    policy.write_text("[due]\n01_rules = 2026-03-01T23:59:00+01:00\n")
    for extra in ([], ["--at", DEADLINE]):
        out = tmp_path / f"out{len(extra)}"
        done = grade(classroom, out, "--policy", str(policy), *extra)
        assert done.returncode == 0, done.stderr
        for username in ("ana", "ben"):
            assert read_grades(out)[username]["01_rules"] == "10", (username, extra)
            late = json.loads((out / username / "results.json").read_text())["extra_data"]["late"]["stages"]
            assert late["01_rules"]["source"] in ("git commit", "git commit graded (--at)"), late["01_rules"]
