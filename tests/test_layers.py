"""The package's layers, lowest first (README, Layout): a module imports its own layer and those below it.

So the record is at the centre (every layer reads it, it reads only the manifest), outputs/ writes records without
reaching back into grading/, and grading/ asks the course step it is given instead of importing admin/.
"""

import ast

import pytest

from autograder.course.stages import ROOT

LAYERS = ("course", "record", "outputs", "grading", "admin", "verbs")


def _layer(parts: list[str]) -> str | None:
    """The layer of a module named by its dotted parts after "autograder" (None: outside the layers)."""
    return parts[0].removesuffix(".py") if parts and parts[0].removesuffix(".py") in LAYERS else None


def _imports(path) -> list[str]:
    """Every autograder module the file imports, deferred imports inside functions included."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [name for name in names if name.startswith("autograder.")]


MODULES = sorted(
    path.relative_to(ROOT / "autograder")
    for path in (ROOT / "autograder").rglob("*.py")
    if _layer([path.relative_to(ROOT / "autograder").parts[0]]) is not None
)


@pytest.mark.parametrize("relative", MODULES, ids=str)
def test_a_module_imports_no_layer_above_its_own(relative):
    own = LAYERS.index(_layer(list(relative.parts)))
    above = [
        name
        for name in _imports(ROOT / "autograder" / relative)
        if (layer := _layer(name.split(".")[1:])) is not None and LAYERS.index(layer) > own
    ]
    assert above == [], f"autograder/{relative} imports {above}, above its layer {LAYERS[own]}"


def test_the_record_imports_only_the_manifest():
    assert _imports(ROOT / "autograder" / "record.py") == ["autograder.course.stages"]


def test_an_import_that_climbs_is_seen(tmp_path):
    """The check is not blind: an outputs module importing grading/ would be named."""
    module = tmp_path / "climbing.py"
    module.write_text("def late():\n    from autograder.grading.judging import fail_all\n")
    (name,) = _imports(module)
    assert LAYERS.index(_layer(name.split(".")[1:])) > LAYERS.index("outputs")
