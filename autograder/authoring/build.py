"""Generate what students get from the single source in solutions/, or check it is in sync.

Every file this module writes is a pure function of the repository's sources (no
timestamps), so `--check` can re-render and compare byte for byte.
"""

import ast
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.authoring import notebooks
from autograder.authoring.markers import MarkerError, solution_code, strip_solutions
from autograder.course import error_hints, parsing
from autograder.course.stages import GIVEN_HELPERS, ROOT, STAGES, Stage


def _definitions(source: str) -> dict[str, str]:
    """Top-level names of source mapped to the exact source text that defines them."""
    tree = parsing.parse(source)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.get_source_segment(source, node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = ast.get_source_segment(source, node)
    return found


def check_shared_helpers() -> list[str]:
    """Each stage carries complete copies of stage 1's helpers; say where a copy has drifted."""
    rules = STAGES[0]
    reference = _definitions(solution_code(rules.solution_path.read_text()))
    problems = []
    for stage in STAGES[1:]:
        defined = _definitions(stage.solution_path.read_text())
        for name in GIVEN_HELPERS:
            if name not in defined:
                problems.append(f"{stage.solution_path}: does not define {name}, which the stage needs")
            elif _strip_docstring(defined[name]) != _strip_docstring(reference[name]):
                problems.append(f"{stage.solution_path}: {name} differs from the one in {rules.solution_path}")
    return problems


def _strip_docstring(definition: str) -> str:
    return ast.dump(parsing.parse(definition))


def starter(stage: Stage) -> str:
    return strip_solutions(stage.solution_path.read_text(), str(stage.solution_path.relative_to(ROOT)))


# Every generated file: its path and the function that renders it. Later generators add to this table.
GENERATORS: list[tuple[Callable[[], list[Stage]], Callable[[Stage], Path], Callable[[Stage], str]]] = [
    (lambda: list(STAGES), lambda s: s.starter_path, starter),
]
ERROR_HINTS = Path(error_hints.__file__).read_text()
# The error hints the visible tests use: one source (autograder/course/error_hints.py), copied beside them.
GENERATORS.append((lambda: STAGES[:1], lambda _: ROOT / "assignments" / "error_hints.py", lambda _: ERROR_HINTS))
GENERATORS += notebooks.GENERATORS  # nbgrader source notebooks and the course folder's config


def rendered() -> dict[Path, str]:
    """Every generated file of the course, rendered fresh from the sources."""
    files = {}
    for stages, path_of, render in GENERATORS:
        for stage in stages():
            files[path_of(stage)] = render(stage)
    return files


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="autograde build", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each stale file")
    args = parser.parse_args(argv)
    try:
        files = rendered()
    except MarkerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    problems = check_shared_helpers()
    for path, text in files.items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            what = "is missing" if current is None else "differs from what its source generates"
            problems.append(f"{path.relative_to(ROOT)} {what}; run `autograde build` to regenerate it")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0
