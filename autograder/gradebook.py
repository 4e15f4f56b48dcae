"""The SQLite gradebook: every run, every graded submission and every test result, kept for good.

Each submission's results are committed in one transaction as soon as it is graded, so a grader
killed mid-batch loses at most the submissions in flight. A submission whose files and test suite
are unchanged is not graded again: its stored result is reused (and that reuse is what lets an
interrupted batch resume). WAL mode and a busy timeout let two graders share one gradebook.
"""

import json
import sqlite3
import time
from pathlib import Path

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
-- Which submission stands for each student in each run (reused = 1 when an earlier result was taken over)
CREATE TABLE IF NOT EXISTS run_students (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    student TEXT NOT NULL,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    reused INTEGER NOT NULL,
    PRIMARY KEY (run_id, student)
);
"""


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Gradebook:
    def __init__(self, path: Path):
        self.path = path
        # Autocommit mode: every transaction below is opened and closed explicitly.
        self.db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._use_wal()
        # In WAL mode NORMAL still survives a killed grader (only a power cut can lose the last commits),
        # and it spares an fsync per graded submission.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=60000")
        self.db.execute("PRAGMA foreign_keys=ON")
        with self.transaction():
            for statement in _statements(SCHEMA):
                self.db.execute(statement)

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

    def start_run(self, suite_hash: str, isolation: str, submissions_dir: str) -> int:
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO runs (started_at, suite_hash, isolation, submissions_dir) VALUES (?, ?, ?, ?)",
                (now(), suite_hash, isolation, submissions_dir),
            )
        return cursor.lastrowid

    def finish_run(self, run_id: int) -> None:
        with self.transaction():
            self.db.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (now(), run_id))

    def stored(self, student: str, files_hash: str, suite_hash: str) -> tuple[int, dict] | None:
        """The latest result for exactly these files under exactly this suite, if there is one."""
        row = self.db.execute(
            "SELECT id, results_json FROM submissions WHERE student = ? AND files_hash = ? AND suite_hash = ?"
            " ORDER BY id DESC LIMIT 1",
            (student, files_hash, suite_hash),
        ).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def record(self, run_id: int, student: str, files_hash: str, suite_hash: str, results: dict) -> int:
        """Store one graded submission with all its stage scores and test results, atomically."""
        extra = results["extra_data"]
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO submissions (run_id, student, files_hash, suite_hash, graded_at, score, max_score,"
                " seconds, results_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, student, files_hash, suite_hash, now(), results["score"], extra["max_total"],
                 results["execution_time"], json.dumps(results)),
            )  # fmt: skip
            submission_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO stage_scores VALUES (?, ?, ?, ?, ?)",
                [
                    (submission_id, stage, s["score"], s["max_score"], s["outcome"])
                    for stage, s in extra["stages"].items()
                ],
            )
            self.db.executemany(
                "INSERT INTO test_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (submission_id, t["extra_data"]["stage"], t["extra_data"]["check"], t["name"], t["score"],
                     t["max_score"], t["extra_data"]["outcome"], t["visibility"], t.get("output", ""))
                    for t in results["tests"]
                ],
            )  # fmt: skip
            self._join(run_id, student, submission_id, reused=False)
        return submission_id

    def reuse(self, run_id: int, student: str, submission_id: int) -> None:
        with self.transaction():
            self._join(run_id, student, submission_id, reused=True)

    def _join(self, run_id, student, submission_id, reused):
        self.db.execute(
            "INSERT OR REPLACE INTO run_students VALUES (?, ?, ?, ?)", (run_id, student, submission_id, int(reused))
        )

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
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
