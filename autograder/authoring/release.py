"""`autograde release OUT`: write the student copy of the course, then check that it gives nothing away.

The release holds assignments/ (starters generated fresh from solutions/, visible tests, READMEs and their
helpers), a README (how to work, play and how the course grades), check.py, hint.py and play.py, requirements.txt,
a pyproject.toml that configures pytest, a .gitignore, and .github/workflows/classroom.yml, GitHub Classroom's
autograding of the visible tests. It never holds solutions/, the grader, its tests, nbgrader/ or examples/. Every
text in it names the release's own commands (`python check.py`, never `autograde check`).

`--stages 1,2` releases those stages only; run again with more stages on the same OUT, it adds them and leaves the
student's modules (and their .gitignore) as they are. A starter that holds an earlier stage's answer (from stage 2
on, each is given stage 1's winner and to_move complete) gives that stage away: the release says which, and under
`--policy` refuses while that stage is not yet due.

The leak check (leaks(), run by every release) fails, naming file and line, when a released file contains
a meaningful line of a reference solution's body, or a board that only the hidden checks use. Its board half
(board_leaks) also guards the feedback `autograde publish` hands back.

classroom.yml scores the stages the course assigns, so its total is out of the final grade's possible points;
the bonus stages and unassigned ones run too, worth nothing there. `--policy FILE` reads which stages are
assigned and the bonus rule from the course policy's [grade] table (the defaults without it).
"""

from __future__ import annotations

import argparse
import datetime
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.admin.settings import DEFAULT_SETTINGS, CourseSettings
from autograder.authoring import build, release_play
from autograder.authoring.markers import solution_body
from autograder.course import parsing
from autograder.course.checks.visible import examples
from autograder.course.stages import BONUS_STAGES, ROOT, STAGES
from autograder.outputs.command_line import fail

# Solution lines with fewer non-blank characters than this are idioms the hints teach on purpose
# ("board[square] = mark", "memo[key] = result", "return memo[key]") or say nothing ("return total"). From
# about 20 a line carries a decision of the solution: a condition, a call with its arguments, a combination.
MIN_LEAK_CHARS = 20
EMPTY_BOARD = (" ",) * 9
COURSE_FOLDERS = ("assignments", "solutions", "autograder", "tests", "nbgrader", "docs", "examples")
SKIPPED_NAMES = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
# The folders of bonus stages the course has turned off (BONUS_STAGES_ON): left out of the release.
STAGES_OFF = {stage.id for stage in BONUS_STAGES} - {stage.id for stage in STAGES}

# A board written as 9 characters in quotes or backticks: "XO X O  X".
BOARD_STRING = re.compile(r"""(["'`])([XO ]{9})\1""")
# A board written as a list or tuple of 9 one-character strings: ['X', 'O', ' ', ...], across lines too.
_SQUARE = r"""\s*["'][XO ]["']\s*"""
BOARD_LIST = re.compile(r"[\[(]" + ",".join([_SQUARE] * 9) + r",?\s*[\])]")
# A board drawn as the feedback draws it (course/board.py: draw, draw_with_key), its rows joined by real line
# breaks or by the "\\n" of a JSON string: " O | · | X      0 1 2\n---+---+---\n ...". An empty square shows
# as "·", its number or a space.
_CELL = r"([XO0-8 ]|·|\\u00b7)"
_ROW = rf"{_CELL} \| {_CELL} \| {_CELL}"
_ROW_BREAK = r"[^\n\\|]*(?:\n|\\n)---\+---\+---(?:\n|\\n) ?"
BOARD_DRAWING = re.compile(_ROW + _ROW_BREAK + _ROW + _ROW_BREAK + _ROW)
# How a check's title says it enumerates a kind of board rather than sampling it.
EXHAUSTIVE_TITLE = re.compile(r"\bon every\b[^()]*\bboards?\b")
ONE_SQUARE = re.compile(r"""["']([XO ])["']""")
# Boards written in code (by a submission's text, in feedback): base64 or hex runs long enough to hold one, and
# nine squares standing alone. Decoded at every alignment, then read for nine squares in a row.
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")
HEX_RUN = re.compile(r"[0-9A-Fa-f]{18,}")
BARE_BOARD = re.compile(r"(?<![XO ])[XO ]{9}(?![XO ])")
SQUARES_RUN = re.compile(r"(?=([XO ]{9}))")

# The release's own files, kept as the files they become: README.md is a template whose {stages} line becomes
# the table of stages.
RELEASE_FILES = Path(__file__).parent / "release_files"


# Commands the course's texts name, as the release spells them (it has no autograder package to install).
SETUP_NOTE = re.compile(rb"\n?\(set up once with `pip install -e \.` from the course root; [^)]*\)")
RELEASE_COMMANDS = [
    (b"python -m autograder check", b"python check.py"),
    (b"autograde check", b"python check.py"),
    (b"autograde hint", b"python hint.py"),
    (b"autograde play", b"python play.py"),
]
TEXT_SUFFIXES = {".md", ".py", ".txt", ".toml", ".yml", ".cfg", ""}
# Files the student writes in or may change: written when absent, never replaced by a later release.
STUDENT_KEPT = (".gitignore",)
GITIGNORE = """\
# Made by your setup, not part of your work: keep them out of your repository.
.venv/
__pycache__/
*.pyc
.pytest_cache/
.ipynb_checkpoints/
# How many hints you have seen (python hint.py): yours, not your work.
.autograde-hints.json
"""
HAND_IN = {
    "github": "Push your work to your GitHub repository (GitHub Classroom): `git add assignments && git commit -m "
    "'stage 1' && git push`. What is in the repository when a stage is due is what is graded.",
    "gradescope": "Upload your stage's module (for example `assignments/01_rules/rules.py`, or the whole "
    "`assignments` folder) to the assignment on Gradescope; its autograder runs the same grader.",
    "zip": "Zip the `assignments` folder (`python -m zipfile -c work.zip assignments`) and upload `work.zip` where "
    "your course collects work.",
}


@dataclass(frozen=True)
class Secret:
    text: str  # what must not appear
    origin: str  # where it comes from, for the message


def points_text(value) -> str:
    return f"{float(value):g}"


def student_readme(
    stages=STAGES, settings: CourseSettings = DEFAULT_SETTINGS, policy=None, hand_in: str = "github"
) -> str:
    """The release's README: how to work a stage, play, and be graded, with the table of the stages released."""
    from autograder.course.checks import stage_outline

    due = {} if policy is None else policy.due
    rows = []
    for stage in stages:
        stars = " " + "★" * stage.stars if stage.stars else ""
        when = f" | {due[stage.id].strftime('%Y-%m-%d %H:%M %Z')}" if stage.id in due else (" | -" if due else "")
        outline = stage_outline(stage.id)
        shown = points_text(sum(check.points for check in outline if check.visible))
        hidden = points_text(sum(check.points for check in outline if not check.visible))
        rows.append(
            f"| `{stage.id}` | {stage.title}{stars} | {stage.points} | {shown} | {hidden} "
            f"| {counts_text(stage, settings)}{when} |"
        )
    header = "| stage | title | points | from visible tests | from hidden tests | counts |" + (" due |" if due else "")
    rule = "|---|---|---|---|---|---|" + ("---|" if due else "")
    core = sum(not stage.bonus for stage in stages)
    bonus = len(stages) - core
    intro = f"{number_text(core)} short assignment{'s' * (core != 1)}"
    intro += f" and {number_text(bonus)} bonus stage{'s' * (bonus != 1)}" if bonus else ""
    text = (RELEASE_FILES / "README.md").read_text()
    text = text.replace("{intro}", intro[0].upper() + intro[1:])
    text = text.replace("{grading}", grading_section(stages, settings, policy, hand_in))
    example = stages[0]  # the commands' examples name a stage this copy has
    text = text.replace("{example_id}", example.id).replace("{example_module}", example.module)
    text = text.replace("{example_number}", example.id[:2].lstrip("0"))
    return text.replace("{stages}", "\n".join([header, rule, *rows]))


def number_text(count: int) -> str:
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[count] if count < len(words) else str(count)


def counts_text(stage, settings: CourseSettings) -> str:
    """How a stage counts toward the final grade, in a few words."""
    counted = settings.counts(stage.id)
    if counted == "core":
        return "graded"
    if counted == "not assigned":
        return "not assigned: counts for nothing"
    if counted == "bonus off":
        return "bonus, not counted"
    if settings.bonus == "apart":
        return "bonus, reported apart"
    return "bonus, extra credit"


def grading_section(stages, settings: CourseSettings, policy, hand_in: str) -> str:
    """ "How you are graded": the points of each stage's visible tests and hidden checks (from the manifest and
    the checks), the bonus rule, the due dates and late rule of the policy, and how to hand in."""
    lines = [
        "Each stage is worth the points in the table of stages below, shared among the grader's checks of it, and "
        "every check you pass earns its own points, so a stage can earn part of its points. A few points come "
        "from the visible tests you have (one check per function: all of its examples right). Most come from "
        "hidden checks, which call the same functions on many more boards (for most stages every board that can "
        "happen in a game), so a stage that passes here can still lose points. What a hidden check found is in "
        "your feedback, with the board and what to try.",
        "",
    ]
    possible = sum(stage.points for stage in stages if settings.counts(stage.id) == "core")
    bonus = [stage for stage in stages if stage.bonus]
    rule = f"Your grade is out of {possible} points: the graded stages' points."
    if bonus and settings.bonus == "extra":
        cap = "" if settings.bonus_cap is None else f", at most {points_text(settings.bonus_cap)} points in all"
        rule += f" The bonus stages' points are extra credit on top{cap}."
    elif bonus and settings.bonus == "apart":
        rule += " The bonus stages are graded and reported apart: they do not change that grade."
    elif bonus:
        rule += " The bonus stages are not counted in this course."
    lines.append(rule)
    if policy is not None and policy.due:
        late = policy.late
        penalty = (
            f"a stage handed in after its due date loses {points_text(late.percent)}% of its points per "
            f"{late.per} or part of one late"
            if late.percent
            else "a stage handed in after its due date loses no points"
        )
        if late.cap is not None:
            penalty += f", at most {points_text(late.cap)}% in all"
        if late.zero_after is not None:
            penalty += f"; more than {late.zero_after} {late.per}{'s' * (late.zero_after != 1)} late, it earns 0"
        grace = int(policy.grace.total_seconds() // 60)
        lines += [
            "",
            f"Due dates are in the table above; {penalty}" + (f" (after {grace} minutes' grace)." if grace else "."),
        ]
    lines += ["", "**How to hand in.** " + HAND_IN[hand_in]]
    if hand_in == "github":
        lines += [
            "",
            "**What GitHub shows.** Every push runs each stage's visible tests (`.github/workflows/classroom.yml`, "
            "in the Actions tab) and shows a score per stage: all of a stage's points when every one of its "
            "visible tests passes, and 0 otherwise, so 26 of 27 passing shows 0. It is a preview of the visible "
            "tests only, not your grade: the grader gives each test its own points and adds the hidden ones.",
        ]
    return "\n".join(lines)


# One graded step of classroom.yml: a stage's visible tests, all or nothing for the stage's points.
GRADER_STEP = """\
      - name: {title}
        id: {runner}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: {test_name}
          command: python -m pytest assignments/{stage} -q
          timeout: {timeout}
          max-score: {points}"""
# A stage the grade does not count here (a bonus stage, one the course has not assigned): its visible tests run
# and say how they went in a notice on the run's page, worth no points. It is no runner of the reporter, which
# would add its points to the maximum (any max-score above 0) or fail the whole check when it fails (any).
SHOWN_STEP = """\
      - name: {title}
        timeout-minutes: {timeout}
        run: |
          if python -m pytest assignments/{stage} -q; then
            echo "::notice title={stage}::{passing}"
          else
            echo "::notice title={stage}::{failing}"
          fi"""
CLASSROOM_WORKFLOW = ".github/workflows/classroom.yml"
CLASSROOM_TIMEOUT_MINUTES = 5  # per stage; the visible tests of a correct stage take seconds


def classroom_runner(stage) -> str:
    """The step id of a stage: letters and digits only, as the grading reporter's `runners` list requires."""
    return "stage" + stage.id.split("_", 1)[0]


def not_scored(stage, settings: CourseSettings) -> str | None:
    """How a stage counts when classroom.yml gives it no points, in the student's words; None when it is scored."""
    counted = settings.counts(stage.id)
    if counted == "core":
        return None
    if counted == "not assigned":
        return "not assigned in this course: it counts for nothing"
    if counted == "bonus off":
        return "a bonus stage, not counted in this course"
    if settings.bonus == "apart":
        return "a bonus stage: the instructor's grader reports it apart from the grade"
    cap = "" if settings.bonus_cap is None else f" (at most {float(settings.bonus_cap):g} points)"
    return f"a bonus stage: extra credit in the instructor's final grade{cap}"


def classroom_workflow(settings: CourseSettings = DEFAULT_SETTINGS, stages=STAGES) -> str:
    """GitHub Classroom's autograding workflow: one command grader per assigned stage released (its visible
    tests), then the reporter, which reads each grader's result from the environment variable <STEP ID>_RESULTS,
    so its maximum is those stages' points. The other stages run as SHOWN_STEPs."""
    steps, runner_ids, possible = [], [], 0
    for stage in stages:
        why = not_scored(stage, settings)
        if why is None:
            runner_ids.append(classroom_runner(stage))
            step = GRADER_STEP.format(
                title=json.dumps(f"{stage.id} visible tests"),
                runner=runner_ids[-1],
                test_name=json.dumps(f"{stage.id}: {stage.title}"),
                stage=stage.id,
                timeout=CLASSROOM_TIMEOUT_MINUTES,
                points=stage.points,
            )
            possible += stage.points
        else:
            step = SHOWN_STEP.format(
                title=json.dumps(f"{stage.id} visible tests (no points here)"),
                stage=stage.id,
                timeout=CLASSROOM_TIMEOUT_MINUTES,
                passing=f"its visible tests pass; {why}",
                failing=f"its visible tests do not pass yet; {why}",
            )
        steps.append(step)
    reporter_env = "\n".join(f"          {i.upper()}_RESULTS: ${{{{ steps.{i}.outputs.result }}}}" for i in runner_ids)
    template = (RELEASE_FILES / "classroom.yml").read_text()
    filled = template.replace("{graders}", "\n".join(steps)).replace("{reporter_env}", reporter_env)
    return filled.replace("{runners}", ",".join(runner_ids)).replace("{possible}", str(possible))


def released_files(
    settings: CourseSettings = DEFAULT_SETTINGS, stages=STAGES, policy=None, hand_in: str = "github"
) -> dict[str, bytes]:
    """Every file of the release of these stages, by its path inside OUT; settings: the course's, for the
    README's grading section and classroom.yml's points; policy: the due dates and late rule the README states."""
    files: dict[str, bytes] = {}
    assignments = ROOT / "assignments"
    stage_folders = {stage.id for stage in STAGES} | STAGES_OFF
    released = {stage.id for stage in stages}
    for path in sorted(assignments.rglob("*")):
        relative = path.relative_to(ROOT)
        if not path.is_file() or any(part in SKIPPED_NAMES or part.startswith(".") for part in relative.parts):
            continue
        if path.suffix in (".pyc", ".pyo") or (relative.parts[1] in stage_folders - released):
            continue
        data = path.read_bytes()
        if path.name == "README.md":
            data = SETUP_NOTE.sub(b" (set up once with `pip install -r requirements.txt`)", data)
        files[relative.as_posix()] = data
    for stage in stages:
        # Fresh from the solution, never the working copy: an instructor may have filled in a starter to try it.
        files[stage.starter_path.relative_to(ROOT).as_posix()] = build.starter(stage).encode()
    files["README.md"] = student_readme(stages, settings, policy, hand_in).encode()
    files["requirements.txt"] = (RELEASE_FILES / "requirements.txt").read_bytes()
    files["pyproject.toml"] = (RELEASE_FILES / "pyproject.toml").read_bytes()
    files["check.py"] = (Path(__file__).parents[1] / "practice" / "check.py").read_bytes()
    files["hint.py"] = (Path(__file__).parents[1] / "practice" / "hint.py").read_bytes()
    files["play.py"] = release_play.play_script()
    files[CLASSROOM_WORKFLOW] = classroom_workflow(settings, stages).encode()
    files[".gitignore"] = GITIGNORE.encode()
    # The release has no `autograde` command: the same check, hints and game ship as check.py, hint.py and play.py.
    for name, data in files.items():
        if Path(name).suffix in TEXT_SUFFIXES:
            for course, release in RELEASE_COMMANDS:
                data = data.replace(course, release)
            files[name] = data
    return files


# ---------------------------------------------------------------------------------------------------------------
# What a starter gives away


@dataclass(frozen=True)
class GiveAway:
    path: str  # the starter, inside the release
    stage: str  # the stage of that starter
    gives: str  # the earlier stage whose answer it holds
    functions: tuple[str, ...]  # the answered functions

    def describe(self) -> str:
        names = " and ".join(self.functions)
        return f"{self.path} holds {names} complete: it gives away {self.gives}"


def written_functions(source: str) -> set[str]:
    """The functions a module defines with a real body: not only `raise NotImplementedError()` (and a docstring)."""
    import ast

    found = set()
    for node in ast.walk(parsing.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
            stub = len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0])
            if body and not stub:
                found.add(node.name)
    return found


def give_aways(stages=STAGES) -> list[GiveAway]:
    """Each starter that holds, complete, a function an earlier stage asks students to write."""
    owner: dict[str, str] = {}
    for stage in STAGES:
        for name in stage.functions:
            owner.setdefault(name, stage.id)
    found = []
    for stage in stages:
        given = written_functions(build.starter(stage)) - set(stage.functions)
        by_stage: dict[str, list[str]] = {}
        for name in sorted(given, key=lambda n: (owner.get(n, ""), n)):
            if name in owner and owner[name] != stage.id:
                by_stage.setdefault(owner[name], []).append(name)
        path = stage.starter_path.relative_to(ROOT).as_posix()
        found += [GiveAway(path, stage.id, gives, tuple(names)) for gives, names in sorted(by_stage.items())]
    return found


def not_yet_due(give_away: GiveAway, policy, now) -> str | None:
    """Why a give-away must wait under the policy (its stage is not due yet), or None when it may go out."""
    due = policy.due.get(give_away.gives)
    if due is None:
        return None
    if now < due:
        return f"{give_away.gives} is due {due.strftime('%Y-%m-%d %H:%M %Z')}"
    return None


# ---------------------------------------------------------------------------------------------------------------
# What must not leak


def _normalise(line: str) -> str:
    return " ".join(line.split())


def _weight(line: str) -> int:
    return len(line) - line.count(" ")


def solution_lines() -> list[Secret]:
    """The meaningful lines of every solution body (between the markers), without those students are given.

    A line is meaningful when it has MIN_LEAK_CHARS non-blank characters and appears in no starter: stage 1's helpers,
    for instance, are solution bodies in stage 1 but given code in every later stage.
    """
    given: set[str] = set()
    for stage in STAGES:
        given.update(_normalise(line) for line in build.starter(stage).splitlines())
    secrets: dict[str, Secret] = {}
    for stage in STAGES:
        for number, line in solution_body(stage.solution_path.read_text()):
            text = _normalise(line)
            if _weight(text) >= MIN_LEAK_CHARS and text not in given and text not in secrets:
                where = f"{stage.solution_path.relative_to(ROOT)}:{number}"
                secrets[text] = Secret(text, f"line {where} of a reference solution")
    return list(secrets.values())


def is_exhaustive(check) -> bool:
    """Does a hidden check run on every board of a kind ("winner on every reachable board ...")?

    Such a check has no secret inputs: knowing one of its 5,478 or 958 boards tells a student nothing about
    the test. The boards of a fixed sample ("on a fixed sample of 40 unfinished boards") are secret.
    """
    return EXHAUSTIVE_TITLE.search(check.title) is not None


def hidden_boards(enumerated: bool = False) -> dict[tuple[str, ...], str]:
    """Boards only the hidden checks use (samples, not enumerations), each with the id of a check using it.

    enumerated: also those of the checks that run on every board of a kind. They are no secret of the course,
    but which of them a student's code failed on is a detail of a hidden test (what `autograde publish` holds
    back until the grades are published).
    """
    from autograder.course.checks import stage_checks

    visible: set[tuple[str, ...]] = {EMPTY_BOARD}
    hidden: dict[tuple[str, ...], str] = {}
    for stage in STAGES:
        # Every board a visible test shows, answers included (the eight turned boards of 10_symmetry's examples).
        visible |= {board for row in examples(stage) for _line, board in boards_in(repr(row))}
        for check in stage_checks(stage.id):
            boards = {tuple(case.args[0]) for case in check.cases if case.args}
            if check.visible:
                visible |= boards
            elif enumerated or not is_exhaustive(check):
                for board in boards:
                    hidden.setdefault(board, f"{stage.id} hidden check {check.id}")
    return {board: where for board, where in hidden.items() if board not in visible}


def boards_in(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, board) for every board in text: a quoted 9-character string, a list of 9, or a drawing.

    HTML is read as its text too, so a board whose quotes a page escapes (&#39;X&#39;, ...) is found as well.
    """
    found: list[tuple[int, tuple[str, ...]]] = []
    for form in dict.fromkeys([text, html.unescape(text)]):  # unescaping keeps the line breaks where they were
        for match in BOARD_STRING.finditer(form):
            found.append((form.count("\n", 0, match.start()) + 1, tuple(match.group(2))))
        for match in BOARD_LIST.finditer(form):
            squares = tuple(ONE_SQUARE.findall(match.group(0)))
            if len(squares) == 9:
                found.append((form.count("\n", 0, match.start()) + 1, squares))
        for match in BOARD_DRAWING.finditer(form):
            squares = tuple(cell if cell in "XO" else " " for cell in match.groups())
            found.append((form.count("\n", 0, match.start()) + 1, squares))
    return list(dict.fromkeys(found))


def encoded_boards_in(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, board) for every board written in base64 or hex (at any alignment) or as 9 bare squares.

    A second line behind the grader's own design (a child that shows its texts never sees a hidden board): it
    catches the encodings a submission would reach for first, not every code one could invent.
    """
    import base64
    import binascii

    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        decoded = [match.group(0) for match in BARE_BOARD.finditer(line)]
        for match in BASE64_RUN.finditer(line):
            run = match.group(0).replace("-", "+").replace("_", "/")
            for start in range(4):
                part = run[start:]
                part = part[:-1] if len(part) % 4 == 1 else part + "=" * (-len(part) % 4)  # its last bytes too
                try:
                    decoded.append(base64.b64decode(part).decode("latin-1"))
                except (binascii.Error, ValueError):
                    pass
        for match in HEX_RUN.finditer(line):
            for start in range(2):
                part = match.group(0)[start:]
                decoded.append(bytes.fromhex(part[: len(part) // 2 * 2]).decode("latin-1"))
        for piece in decoded:
            found += [(number, tuple(board)) for board in SQUARES_RUN.findall(piece)]
    return list(dict.fromkeys(found))


def board_leaks(name: str, text: str, boards: dict[tuple[str, ...], str]) -> list[str]:
    """Every board of boards (hidden_boards()) in the text of the file name, one line each: "name:line: ..."."""
    return [
        f"{name}:{number}: board {''.join(board)!r} is an input of the {boards[board]}"
        for number, board in dict.fromkeys([*boards_in(text), *encoded_boards_in(text)])
        if board in boards
    ]


def leaks(folder: Path, names=None) -> list[str]:
    """Every leak in the files under folder (only those named, when names are given: a release added to a
    student's copy checks what it wrote, not the student's own answers), one line each: "path:line: what leaked
    (where it comes from)"."""
    secrets = solution_lines()
    hidden = hidden_boards()
    problems = []
    paths = folder.rglob("*") if names is None else (folder / name for name in names)
    for path in sorted(p for p in paths if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text: nothing a student could read a line of code from
        name = path.relative_to(folder).as_posix()
        for number, line in enumerate(text.splitlines(), start=1):
            flat = _normalise(line)
            if _weight(flat) < MIN_LEAK_CHARS:
                continue
            for secret in secrets:
                if secret.text in flat:
                    problems.append(f"{name}:{number}: {secret.text!r} is {secret.origin}")
        problems += board_leaks(name, text, hidden)
    return problems


# ---------------------------------------------------------------------------------------------------------------


def write_release(out: Path, files: dict[str, bytes] | None = None, keep: bool = False) -> list[str]:
    """Write the release into out and return the leaks of what it wrote. keep: out is a student's copy (an
    earlier release): a file the student writes in (a stage's module, .gitignore) that is there stays as it is."""
    files = released_files() if files is None else files
    kept = {stage.starter_path.relative_to(ROOT).as_posix() for stage in STAGES} | set(STUDENT_KEPT)
    written = []
    for name, content in files.items():
        path = out / name
        if keep and name in kept and path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(name)
    return leaks(out, written if keep else None)


PROG = "autograde release"


def is_release(folder: Path) -> bool:
    """Does folder look like a student's copy an earlier release wrote?"""
    return (folder / "assignments" / "conftest.py").is_file() and (folder / "check.py").is_file()


def released_stages(folder: Path) -> list[str]:
    """The stages an earlier release put in folder (their folders in assignments/)."""
    return [stage.id for stage in STAGES if (folder / "assignments" / stage.id).is_dir()]


def parse_stages(text: str) -> list:
    """--stages 1,2 (numbers, ids or module names, as everywhere in the course): those stages, in course order."""
    from autograder.course.stages import stage as find

    wanted = set()
    for name in (part.strip() for part in text.split(",")):
        if name:
            wanted.add(find(name).id)  # KeyError names the stages there are
    if not wanted:
        raise KeyError("--stages names no stage")
    return [stage for stage in STAGES if stage.id in wanted]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "out",
        type=Path,
        help="the folder to write the release into (new or empty, or an earlier release with --stages)",
    )
    parser.add_argument("--force", action="store_true", help="delete OUT first if it already holds files")
    parser.add_argument(
        "--stages",
        metavar="LIST",
        help="release only these stages (numbers, ids or names: 1,2 or 01_rules,count_games); on an earlier "
        "release, add them and keep the student's work",
    )
    parser.add_argument(
        "--policy",
        type=Path,
        help="the course policy: the README's due dates and late rule, classroom.yml scores the stages its [grade] "
        "table assigns, and a starter that gives away a stage not yet due is refused",
    )
    parser.add_argument(
        "--hand-in", choices=sorted(HAND_IN), default="github", help="how students hand in, as the README says it"
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    settings, policy = DEFAULT_SETTINGS, None
    if args.policy is not None:
        from autograder.admin.policy import PolicyError, load_policy

        try:
            policy = load_policy(args.policy)
        except PolicyError as error:
            return fail(PROG, str(error))
        settings = policy.settings
    try:
        stages = list(STAGES) if args.stages is None else parse_stages(args.stages)
    except KeyError as error:
        return fail(PROG, str(error.args[0]))
    adding, chosen = False, list(stages)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if args.stages is not None and not args.force and out.is_dir() and is_release(out):
            adding = True  # a staged release: the stages already out stay, with the student's work
            present = set(released_stages(out))
            stages = [stage for stage in STAGES if stage.id in present or stage in stages]
        elif not args.force:
            hint = " (or --stages to add stages to it)" if out.is_dir() and is_release(out) else ""
            return fail(PROG, f"{out} already exists and is not empty; pass --force to replace it{hint}")
        else:
            precious = {ROOT, *ROOT.parents, *(ROOT / name for name in COURSE_FOLDERS)}
            if out.resolve() in precious:
                return fail(PROG, f"refusing to delete {out}: it is (or holds) the course itself")
    refused = []
    now = datetime.datetime.now(datetime.UTC)
    for give_away in give_aways(chosen):  # those already out were decided when they went out
        why = None if policy is None else not_yet_due(give_away, policy, now)
        if why is not None:
            refused.append(f"{give_away.describe()}, and {why}")
        elif policy is None:
            print(f"note: {give_away.describe()} (no --policy: no due date to hold it back)", file=sys.stderr)
        else:
            print(f"note: {give_away.describe()} ({give_away.gives} is due, or has no due date)", file=sys.stderr)
    if refused:
        for line in refused:
            print(f"refused: {line}", file=sys.stderr)
        return fail(PROG, "nothing written: release those stages once the stages they give away are due")
    if out.exists() and args.force and not adding:
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    files = released_files(settings, stages, policy, args.hand_in)
    problems = write_release(out, files, keep=adding)
    for problem in problems:
        print(f"leak: {problem}", file=sys.stderr)
    if problems:
        print(f"{PROG}: {len(problems)} leak(s) in {out}; do not hand it out", file=sys.stderr)
        return 1
    what = ", ".join(stage.id for stage in stages)
    verb = "Added to" if adding else "Wrote"
    print(f"{verb} the student release in {out} ({len(files)} files; stages {what}); the leak check found nothing.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
