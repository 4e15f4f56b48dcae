"""The suite: every file whose change can change a grade, and their hash.

A stored result is reused only under the same hash (grading/reuse.py), and the checks' cache is kept by it
(course/cache.py).
"""

import functools
import hashlib

from autograder.course.stages import ROOT

# Everything whose change can change a grade (the grader, its hidden checks, the child, the references and the
# visible tests' examples); its hash is stored with each result.
SUITE_FILES = ("autograder/**/*.py", "solutions/*/*.py", "assignments/*/test_*.py")


@functools.cache
def suite_hash() -> str:
    digest = hashlib.sha256()
    paths = {path for pattern in SUITE_FILES for path in ROOT.glob(pattern) if "__pycache__" not in path.parts}
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
