"""What grading writes: results.json per student, grades.csv, the summary table (and, later, pages)."""

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write text so that a reader (or a crash) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
        out.write(text)
    os.replace(temporary, path)
