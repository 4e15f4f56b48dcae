"""What a stage is made of, and which piece a stage lacks: the checklist of adding a stage, run as code.

A stage is its manifest entry (course/stages.py: its contract of functions, each with its oracle method and
return rule, and the name of its checks module), its reference solution, its README and visible tests, its
checks module, and its variants. `missing_pieces` names what is not there, so a stage half added fails with
the piece to add rather than somewhere deep in the grader.
"""

import ast
from pathlib import Path

from autograder.course import parsing
from autograder.course.oracle import Oracle
from autograder.course.stages import REFERENCE, RETURN_RULES, ROOT, Stage


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, and assigned names such as memo)."""
    tree = parsing.parse(path.read_text(encoding="utf-8"))
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def _examples(path: Path) -> list | None:
    for node in parsing.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXAMPLES" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def missing_pieces(stage: Stage, root: Path = ROOT) -> list[str]:
    """Each piece the stage lacks, one line each naming the file or entry to add; [] when it is whole."""
    missing = []
    solution = root / "solutions" / stage.id / stage.filename
    folder = root / "assignments" / stage.id
    tests = folder / f"test_{stage.module}.py"
    checks = (root / "autograder" / "course" / "checks" / stage.checks).with_suffix(".py")
    variants = root / "tests" / "variants" / stage.id
    for function in stage.contract:
        if function.returns not in RETURN_RULES:
            missing.append(f"the manifest: {function.name} returns {function.returns!r}, not one of RETURN_RULES")
        if function.oracle != REFERENCE and not callable(getattr(Oracle, function.oracle, None)):
            missing.append(f"course/oracle.py: Oracle has no method {function.oracle} (the oracle of {function.name})")
    if not solution.is_file():
        missing.append(f"the reference solution {solution.relative_to(root)}")
    else:
        defined = _defined(solution)
        for name in sorted(set(stage.functions) - defined):
            missing.append(f"{solution.relative_to(root)}: the function {name} of the contract")
        for name in sorted({stage.memo, stage.counted, *stage.cached} - {""} - defined):
            missing.append(f"{solution.relative_to(root)}: {name}, which the stage's manifest entry names")
    if not (folder / "README.md").is_file():
        missing.append(f"the instructions {(folder / 'README.md').relative_to(root)}")
    rows = _examples(tests) if tests.is_file() else None
    if rows is None:
        missing.append(f"the visible tests {tests.relative_to(root)} with an EXAMPLES table")
    else:
        for name in stage.functions:
            if not any(row[0] == name for row in rows):
                missing.append(f"{tests.relative_to(root)}: EXAMPLES rows for {name}")
    if not checks.is_file():
        missing.append(f"the checks module {checks.relative_to(root)} (the manifest's checks={stage.checks!r})")
    elif "checks" not in _defined(checks):
        missing.append(f"{checks.relative_to(root)}: a function checks(oracle) returning the stage's checks")
    if not variants.is_dir() or not any(variants.glob("wrong_*.py")):
        missing.append(f"known-wrong variants {variants.relative_to(root)}/wrong_*.py (autograde verify grades them)")
    return missing
