"""The SQLite gradebook: every run, every graded submission and every test result, kept for good.

Each submission's results are committed in one transaction as soon as it is graded, so a grader
killed mid-batch loses at most the submissions in flight, and a failure while storing one leaves
nothing of it. A submission is not graded again when everything that can change its grade is the same
(its files, the suite and grader, the time limit, the isolation and its cgroups mode): its stored
result is reused (and that reuse is what lets an interrupted batch resume). WAL mode and a busy
timeout let two graders share one gradebook.
"""

import dataclasses
import json
import os
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from autograder.outputs import uncreatable
from autograder.outputs.results import from_json, raw_json, test_name, to_json, visibility
from autograder.record import FinalGrade, GradingParameters, Lateness, SubmissionResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    suite_hash TEXT NOT NULL,
    isolation TEXT NOT NULL,
    submissions_dir TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL,
    files_hash TEXT NOT NULL,
    suite_hash TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    seconds REAL NOT NULL,
    results_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS submissions_by_files ON submissions (student, files_hash, suite_hash);
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (student, id);
CREATE TABLE IF NOT EXISTS stage_scores (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    stage TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (submission_id, stage)
);
CREATE TABLE IF NOT EXISTS test_results (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    stage TEXT NOT NULL,
    check_id TEXT NOT NULL,
    name TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    outcome TEXT NOT NULL,
    visibility TEXT NOT NULL,
    output TEXT NOT NULL,
    PRIMARY KEY (submission_id, stage, check_id)
);
-- Every wrong answer of a check by kind (results.json's tests[].extra_data.mistakes), for `autograde stats`
CREATE TABLE IF NOT EXISTS mistakes (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    stage TEXT NOT NULL,
    check_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    board TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mistakes_by_submission ON mistakes (submission_id);
-- The known mistakes the answers of each wrong stage match (grading/diagnosis.py, the diagnosis of a stage in
-- results.json), for `autograde stats`: a wrong stage with no row here is "not a known mistake"
CREATE TABLE IF NOT EXISTS diagnoses (
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    stage TEXT NOT NULL,
    name TEXT NOT NULL,
    says TEXT NOT NULL,
    explained INTEGER NOT NULL,
    wrong INTEGER NOT NULL,
    PRIMARY KEY (submission_id, stage, name)
);
-- Which submission stands for each student in each run (reused = 1 when an earlier result was taken over)
CREATE TABLE IF NOT EXISTS run_students (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    reused INTEGER NOT NULL,
    PRIMARY KEY (run_id, student)
);
-- What the course policy (--policy) made of each stage in a run: the raw scores above stay as graded
CREATE TABLE IF NOT EXISTS late_results (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL,
    stage TEXT NOT NULL,
    submitted_at TEXT,
    source TEXT NOT NULL,
    due TEXT,
    extension TEXT NOT NULL,
    late INTEGER NOT NULL,
    unit TEXT NOT NULL,
    penalty_percent REAL NOT NULL,
    penalty REAL NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (run_id, student, stage)
);
-- Each student's one final grade in a run (admin/final_grade.py), what every output reads: the students graded,
-- and the roster's students with no submission (status "not submitted", no run_students row)
CREATE TABLE IF NOT EXISTS final_grades (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL,
    status TEXT NOT NULL,
    points REAL NOT NULL,
    possible REAL NOT NULL,
    final_json TEXT NOT NULL,
    PRIMARY KEY (run_id, student)
);
"""

# Columns added since the first gradebooks: an older gradebook gets them (NULL in its old rows, which therefore
# never match a run's parameters and are regraded once).
ADDED_COLUMNS = {
    # course_hash: the policy, overrides and roster files the run applied (merge refuses runs that differ)
    "runs": {"grader_version": "TEXT", "time_limit": "REAL", "cgroups": "TEXT", "course_hash": "TEXT"},
    "submissions": {"grader_version": "TEXT", "time_limit": "REAL", "isolation": "TEXT", "cgroups": "TEXT"},
    # The stage's kind (record.StageKind) and its reason; old rows have NULL, and are regraded (the suite changed).
    "stage_scores": {"kind": "TEXT", "reason": "TEXT", "look": "TEXT"},
}
# Tables added since the first gradebooks: an older gradebook gets them when it is opened.
ADDED_TABLES = {"mistakes", "late_results", "final_grades", "diagnoses"}
# What a run's results depend on besides the files; the keys of results.json's extra_data.grading.
PARAMETERS = ("suite", "grader_version", "time_limit", "isolation", "cgroups")
SQLITE_HEADER = b"SQLite format 3\0"


@dataclasses.dataclass
class StoredRun:
    parameters: GradingParameters
    course_hash: str  # the policy, overrides and roster it applied ("" for none, or a run made before the hash)
    students: dict[str, tuple[str, SubmissionResult]]  # student -> (files_hash, result with lateness and final)
    absent: dict[str, FinalGrade]  # roster students with no submission


class GradebookError(Exception):
    """The path cannot be used as a gradebook (what it is instead, in one line)."""


def _table_columns(schema: str) -> dict[str, set[str]]:
    memory = sqlite3.connect(":memory:")
    for statement in _statements(schema):
        memory.execute(statement)
    tables = [row[0] for row in memory.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    columns = {table: {row[1] for row in memory.execute(f"PRAGMA table_info({table})")} for table in tables}
    memory.close()
    return columns


def problem(path: Path) -> str | None:
    """Why path cannot be opened as a gradebook, or None; reads only (a foreign database is never changed)."""
    if not path.exists():
        why = uncreatable(path)
        return f"cannot create the gradebook {path}: {why}" if why else None
    if path.is_dir():
        return f"the gradebook {path} is a folder, not a gradebook file"
    if not path.is_file():
        return f"the gradebook {path} is not a regular file"
    if not os.access(path, os.R_OK | os.W_OK):
        return f"cannot open the gradebook {path}: permission denied"
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        return f"cannot open the gradebook {path}: {error.strerror or error}"
    if not header:
        return None  # an empty file is an empty database
    if header != SQLITE_HEADER:
        return f"{path} is not a gradebook (it is not an SQLite database)"
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=60)
        try:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                return None
            wanted = {t: c for t, c in _table_columns(SCHEMA).items() if t not in ADDED_TABLES or t in tables}
            missing = sorted(set(wanted) - tables)
            if len(missing) == len(wanted):
                return f"{path} is an SQLite database but not a gradebook (it has none of the gradebook's tables)"
            if missing:
                return f"{path} is not a complete gradebook (it has no {', '.join(missing)} table)"
            for table, columns in wanted.items():
                if table not in tables:
                    continue  # one of ADDED_TABLES: opening the gradebook creates it
                found = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if columns - found:
                    lacking = min(columns - found)
                    return f"{path} is not a gradebook this grader can read (its {table} table has no {lacking})"
        finally:
            db.close()
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            return None  # another grader is writing to it: it is a database, and the real open waits for it
        return f"cannot read the gradebook {path}: {error}"
    except sqlite3.DatabaseError as error:
        return f"{path} is not a gradebook ({error})"
    return None


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Gradebook:
    def __init__(self, path: Path):
        """Open (or create) the gradebook at path; GradebookError when it is something else."""
        self.path = path
        why = problem(path)
        if why:
            raise GradebookError(why)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: every transaction below is opened and closed explicitly.
        self.db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            self._use_wal()
            # In WAL mode NORMAL still survives a killed grader (only a power cut can lose the last commits),
            # and it spares an fsync per graded submission.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=60000")
            self.db.execute("PRAGMA foreign_keys=ON")
            with self.transaction():
                for statement in _statements(SCHEMA):
                    self.db.execute(statement)
                for table, columns in ADDED_COLUMNS.items():
                    present = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
                    for column, kind in columns.items():
                        if column not in present:
                            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.DatabaseError as error:
            self.db.close()
            raise GradebookError(f"cannot open the gradebook {path}: {error}") from error

    def _use_wal(self) -> None:
        """Switch to WAL; SQLite may answer "locked" at once (not through the busy timeout) while another grader
        creates the same gradebook, so try again for a while."""
        for _ in range(600):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error):
                    raise
                time.sleep(0.05)
        self.db.execute("PRAGMA journal_mode=WAL")

    def transaction(self):
        return _Transaction(self.db)

    def start_run(self, parameters: GradingParameters, submissions_dir: str, course_hash: str = "") -> int:
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (started_at, suite_hash, isolation, submissions_dir, grader_version, time_limit,"
                " cgroups, course_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (now(), parameters.suite, parameters.isolation, submissions_dir, parameters.grader_version,
                 parameters.time_limit, parameters.cgroups, course_hash),
            )  # fmt: skip
        return cursor.lastrowid

    def finish_run(self, run_id: int) -> None:
        with self.transaction():
            self.db.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (now(), run_id))

    def stored(
        self, student: str, files_hash: str, parameters: GradingParameters
    ) -> tuple[int, SubmissionResult] | None:
        """The latest result for exactly these files graded with exactly these parameters, if there is one."""
        row = self.db.execute(
            "SELECT id, results_json FROM submissions WHERE student = ? AND files_hash = ? AND suite_hash = ?"
            " AND grader_version = ? AND time_limit = ? AND isolation = ? AND cgroups = ? ORDER BY id DESC LIMIT 1",
            (student, files_hash, parameters.suite, parameters.grader_version, parameters.time_limit,
             parameters.isolation, parameters.cgroups),
        ).fetchone()  # fmt: skip
        return (row[0], from_json(json.loads(row[1]))) if row else None

    def latest_result(self, student: str) -> tuple[int, SubmissionResult] | None:
        """The student's latest stored result, whatever it was graded from (what a part run takes over)."""
        row = self.db.execute(
            "SELECT id, results_json FROM submissions WHERE student = ? ORDER BY id DESC LIMIT 1", (student,)
        ).fetchone()
        return (row[0], from_json(json.loads(row[1]))) if row else None

    def latest(self, student: str) -> dict | None:
        """How the student's latest stored result was graded: files_hash and the PARAMETERS (None where unknown)."""
        row = self.db.execute(
            "SELECT files_hash, suite_hash, grader_version, time_limit, isolation, cgroups FROM submissions"
            " WHERE student = ? ORDER BY id DESC LIMIT 1",
            (student,),
        ).fetchone()
        return dict(zip(("files_hash", *PARAMETERS), row, strict=True)) if row else None

    def record(
        self,
        run_id: int,
        student: str,
        files_hash: str,
        parameters: GradingParameters,
        result: SubmissionResult,
        data: dict | None = None,
    ) -> int:
        """Store one graded submission with all its stage scores and test results, atomically.

        The raw result, for reuse by later runs; what this run's course made of it (its lateness and final grade)
        is stored beside it, for this run, in the same transaction. data: to_json(result), when it is at hand."""
        data = raw_json(data) if data is not None else to_json(dataclasses.replace(result, lateness=None, final=None))
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO submissions (run_id, student, files_hash, suite_hash, graded_at, score, max_score,"
                " seconds, results_json, grader_version, time_limit, isolation, cgroups)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, student, files_hash, parameters.suite, now(), result.total, result.max_total,
                 data["execution_time"], json.dumps(data), parameters.grader_version,
                 parameters.time_limit, parameters.isolation, parameters.cgroups),
            )  # fmt: skip
            submission_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO stage_scores (submission_id, stage, score, max_score, outcome, kind, reason, look)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (submission_id, stage_id, stage.score, stage.max_score, str(stage.outcome),
                     str(stage.status.kind), stage.status.reason, stage.look)
                    for stage_id, stage in result.stages.items()
                ],
            )  # fmt: skip
            self.db.executemany(
                "INSERT INTO mistakes VALUES (?, ?, ?, ?, ?, ?)",
                [(submission_id, t.stage, t.check, m.kind, m.board, m.value) for t in result.tests for m in t.mistakes],
            )
            self.db.executemany(
                "INSERT INTO diagnoses VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (submission_id, stage_id, d.name, d.says, d.explained, d.wrong)
                    for stage_id, stage in result.stages.items()
                    for d in stage.diagnosis
                ],
            )
            self.db.executemany(
                "INSERT INTO test_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (submission_id, t.stage, t.check, test_name(t), t.score, t.points, str(t.outcome),
                     visibility(t), t.output)
                    for t in result.tests
                ],
            )  # fmt: skip
            self._join(run_id, student, submission_id, reused=False)
            self._course_made(run_id, student, result)
        return submission_id

    def record_absent(self, run_id: int, student: str, final: FinalGrade) -> None:
        """Store the final grade of a roster student with no submission ("not submitted")."""
        with self.transaction():
            self._final(run_id, student, final)

    def _course_made(self, run_id: int, student: str, result: SubmissionResult) -> None:
        """What the run's course made of the result: each stage's lateness, and the final grade."""
        lateness = result.lateness or {}
        self.db.executemany(
            "INSERT OR REPLACE INTO late_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, student, stage, e.submitted, e.source, e.due, e.extension, e.late, e.unit,
                 e.penalty_percent, e.penalty, e.score)
                for stage, e in lateness.items()
            ],
        )  # fmt: skip
        if result.final is not None:
            self._final(run_id, student, result.final)

    def _final(self, run_id: int, student: str, final: FinalGrade) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO final_grades VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, student, final.status, final.points, final.possible, json.dumps(final.as_dict())),
        )

    def last_run_id(self) -> int | None:
        """The latest run that finished, or None."""
        row = self.db.execute("SELECT MAX(id) FROM runs WHERE finished_at IS NOT NULL").fetchone()
        return row[0]

    def run_results(self, run_id: int) -> dict[str, SubmissionResult]:
        """Every student graded in a run: their result, with its lateness and final grade as the run made them."""
        return {student: result for student, (_files, result) in self._run_students(run_id).items()}

    def run_absent(self, run_id: int) -> dict[str, FinalGrade]:
        """The roster's students with no submission in a run, each with their final grade ("not submitted")."""
        return {
            student: FinalGrade.from_dict(json.loads(text))
            for student, text in self.db.execute(
                "SELECT student, final_json FROM final_grades WHERE run_id = ? AND student NOT IN"
                " (SELECT student FROM run_students WHERE run_id = ?) ORDER BY student",
                (run_id, run_id),
            )
        }

    def _run_students(self, run_id: int) -> dict[str, tuple[str, SubmissionResult]]:
        rows = self.db.execute(
            "SELECT r.student, s.files_hash, s.results_json, f.final_json FROM run_students r"
            " JOIN submissions s ON s.id = r.submission_id"
            " LEFT JOIN final_grades f ON f.run_id = r.run_id AND f.student = r.student"
            " WHERE r.run_id = ? ORDER BY r.student",
            (run_id,),
        ).fetchall()
        students = {}
        for student, files_hash, text, final in rows:
            result = from_json(json.loads(text))
            result.final = None if final is None else FinalGrade.from_dict(json.loads(final))
            students[student] = (files_hash, result)
        for row in self.db.execute(
            "SELECT student, stage, submitted_at, source, due, extension, late, unit, penalty_percent, penalty, score"
            " FROM late_results WHERE run_id = ? ORDER BY student, stage",
            (run_id,),
        ):
            if row[0] in students:
                result = students[row[0]][1]
                result.lateness = {**(result.lateness or {}), row[1]: Lateness(*row[2:])}
        return students

    def last_run(self) -> "StoredRun | None":
        """The latest finished run: its parameters, course hash, students and absent students; None when none did.

        What `autograde merge` combines: each shard's OUT holds one such run (a resumed run's last one lists
        every student, the reused ones too)."""
        run = self.db.execute(
            "SELECT id, suite_hash, grader_version, time_limit, isolation, cgroups, course_hash FROM runs"
            " WHERE finished_at IS NOT NULL ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if run is None:
            return None
        students, absent = self._run_students(run[0]), self.run_absent(run[0])
        return StoredRun(GradingParameters(*run[1:6]), run[6] or "", students, absent)

    def reuse(self, run_id: int, student: str, submission_id: int, result: SubmissionResult | None = None) -> None:
        """Let an earlier stored submission stand for the student in this run; result: it as this run's course
        made it (its lateness and final grade are stored with the run)."""
        with self.transaction():
            self._join(run_id, student, submission_id, reused=True)
            if result is not None:
                self._course_made(run_id, student, result)

    def _join(self, run_id, student, submission_id, reused):
        self.db.execute(
            "INSERT OR REPLACE INTO run_students VALUES (?, ?, ?, ?)", (run_id, student, submission_id, int(reused))
        )

    def latest_run(self) -> int | None:
        """The id of the latest run that stored or reused any submission, or None."""
        row = self.db.execute("SELECT MAX(run_id) FROM run_students").fetchone()
        return row[0] if row else None

    def close(self):
        self.db.close()


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error: the writer lock is taken up front."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, traceback):
        try:
            if kind is None:
                self.db.execute("COMMIT")
        finally:
            # After an error, or a COMMIT that failed: undo it all, so the next transaction starts clean. SQLite
            # itself rolls back on some errors (disk full, I/O), and then there is nothing left to undo.
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
