"""How the suite is spread over pytest-xdist's workers: `make test` runs it with --dist loadfile on one
worker more than the cores.

Each file runs on one worker, so a module-scoped fixture (a class graded once for all the file's tests) is built
once. (xdist's finer --dist loadgroup cannot be used: it renames node ids, which pytest 9 no longer allows.)
"""


def expensive(item) -> bool:
    """Is this test marked slow, or does it share a module-scoped fixture (a class graded once, in a subprocess)?"""
    fixtures = getattr(item, "_fixtureinfo", None)
    definitions = fixtures.name2fixturedefs.values() if fixtures else ()
    return item.get_closest_marker("slow") is not None or any(chain[-1].scope == "module" for chain in definitions)


def pytest_collection_modifyitems(items):
    """The files holding expensive tests first, so the longest files start at once and the cheap ones fill the gaps
    at the end, keeping every worker busy. Within a file the order stays as written."""
    costly = {item.path for item in items if expensive(item)}
    items.sort(key=lambda item: item.path not in costly)
