"""docs/architecture.md draws the plan that tests/test_layers.py holds the code to: every room
(each package and sub-package) and top-level module is a row, in the layer LAYERS gives it."""

import re
from pathlib import Path

from tests.test_layers import LAYER, PACKAGE

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
ROW = re.compile(r"^\| (\d+) \| `([\w./]+)` \|", re.M)


def rows(text: str) -> dict[str, int]:
    """{path under src/aiayn/: layer} for every row of the page's table."""
    return {path: int(layer) for layer, path in ROW.findall(text)}


def rooms() -> set[str]:
    """Every package (as "data/", "data/prepare/") and top-level module ("files.py") that a
    reader of the page should find, the front door (`__init__.py`) aside."""
    packages = {
        f"{p.parent.relative_to(PACKAGE)}/"
        for p in PACKAGE.rglob("__init__.py")
        if p.parent != PACKAGE and "__pycache__" not in p.parts
    }
    return packages | {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}


def layer_of(path: str) -> int:
    """The layer tests/test_layers.py gives a row's path: its top room's."""
    return LAYER[path.split("/")[0].removesuffix(".py")]


def mismatches(table: dict[str, int], found: set[str]) -> list[str]:
    problems = [f"{p}: no row; add one" for p in sorted(found - set(table))]
    problems += [f"{p}: a row, but no such room" for p in sorted(set(table) - found)]
    problems += [
        f"{p}: layer {n} on the page, {layer_of(p)} in tests/test_layers.py"
        for p, n in sorted(table.items())
        if p in found and n != layer_of(p)
    ]
    return problems


def test_the_page_lists_every_room_in_its_layer():
    assert not mismatches(rows(PAGE.read_text(encoding="utf-8")), rooms())


def test_a_missing_or_misplaced_room_is_caught():
    table = rows(PAGE.read_text(encoding="utf-8"))
    missing = {k: v for k, v in table.items() if k != "evaluate/"}
    assert mismatches(missing, rooms()) == ["evaluate/: no row; add one"]
    moved = table | {"decode/": table["decode/"] + 1}
    assert len(mismatches(moved, rooms())) == 1
    assert mismatches(table | {"nowhere/": 1}, rooms()) == ["nowhere/: a row, but no such room"]
