"""The package's imports go one way: from the interfaces down to the model, never back up.

A module may import from its own layer or a lower one, and no two rooms import each other.
Function-local imports count too: they are how a cycle hides. `docs/architecture.md` draws the
same plan; tests/test_architecture.py holds the page to this list.
"""

import ast
from pathlib import Path

import aiayn

PACKAGE = Path(aiayn.__file__).parent

# Lowest first. What a layer's rooms may import: their own layer and every layer below.
LAYERS = [
    {"files", "layout", "devices", "config"},  # names of files, settings, devices
    {"data", "model"},  # the corpus and the network
    {"decode", "nn", "interop"},  # what runs a network: the searches, torch.nn's API, imports
    {"evaluate"},  # judging and choosing outputs: scores, languages, the length setting
    {"train", "engines", "export"},  # training (it validates); every engine behind one interface
    {"documents", "plot", "vision"},  # structure kept around the engines; figures; images
    {"commands", "serve", "cli", "__main__"},  # the interfaces
]
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}

# Inside a room: which of its sub-rooms each part may import (the room's own top modules are
# what every part shares, and import none of its sub-rooms).
INSIDE = {
    "data": {
        "data": set(),
        "data.batches": set(),  # what training reads
        "data.prepare": set(),  # one language pair
        "data.multilingual": {"data.prepare"},  # many, built on the pair's parts
    },
}


def modules() -> dict[str, ast.Module]:
    """{dotted module name: its syntax tree} for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(("aiayn", *parts)).removesuffix(".__init__")
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def imported(tree: ast.Module) -> set[str]:
    """Every aiayn name an import statement in `tree` names: modules and module.name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return {n for n in names if n.startswith("aiayn.")}


def imports_by_room() -> dict[str, set[str]]:
    """{room: the other aiayn rooms it imports}, from every import statement in it."""
    found: dict[str, set[str]] = {}
    for name, tree in modules().items():
        if name == "aiayn":
            continue  # the package's own front door re-exports from below
        source = name.split(".")[1]
        targets = {n.split(".")[1] for n in imported(tree)}
        for target in targets & set(LAYER) - {source}:
            found.setdefault(source, set()).add(target)
    return found


def sub_room(name: str, room: str) -> str:
    """The part of `room` that module `name` belongs to: "data.prepare", or "data" itself."""
    parts = name.split(".")
    deeper = f"{room}.{parts[2]}" if len(parts) > 3 else room
    return deeper if deeper in INSIDE[room] else room


def test_every_room_has_a_layer():
    rooms = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()}
    rooms = {p for p in rooms if not p.startswith(("_", ".")) or p == "__main__"}
    rooms -= {"static", "py"}
    assert rooms <= set(LAYER), f"put {sorted(rooms - set(LAYER))} in a layer"


def test_no_room_imports_upward():
    upward = [
        f"{source} (layer {LAYER[source]}) imports {target} (layer {LAYER[target]})"
        for source, targets in imports_by_room().items()
        for target in targets
        if LAYER[target] > LAYER[source]
    ]
    assert not upward, upward


def test_no_two_rooms_import_each_other():
    graph = imports_by_room()
    cycles = sorted(
        f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a in graph.get(b, ())
    )
    assert not cycles, cycles


def test_decoding_and_evaluation_do_not_need_training():
    graph = imports_by_room()
    assert "train" not in graph.get("decode", set()) | graph.get("evaluate", set())


def part_violations(found: dict[str, ast.Module]) -> list[str]:
    """Imports between the parts of a room that INSIDE does not allow."""
    wrong = []
    for name, tree in found.items():
        room = name.split(".")[1] if name.count(".") else ""
        if room not in INSIDE:
            continue
        part = sub_room(name, room)
        for target in imported(tree):
            if target.split(".")[1] != room or target.count(".") < 2:
                continue
            other = sub_room(target if target.count(".") > 2 else f"{target}.x", room)
            if other not in (part, room) and other not in INSIDE[room][part]:
                wrong.append(f"{name} ({part}) imports {target} ({other})")
    return sorted(set(wrong))


def test_the_parts_of_a_room_import_only_what_its_plan_allows():
    assert not part_violations(modules())


def test_a_shared_module_that_imports_a_stage_is_caught():
    shared = ast.parse("from aiayn.data.prepare.bible import connect\n")
    assert part_violations({"aiayn.data.sources": shared})
    stage = ast.parse("from aiayn.data.multilingual.verses import Verse\n")
    assert part_violations({"aiayn.data.prepare.bible": stage})
    allowed = ast.parse("from aiayn.data.prepare.bpe import train_bpe\n")
    assert not part_violations({"aiayn.data.multilingual.pipeline": allowed})
