"""The package's imports go one way: from the commands down to the model, never back up.

A module may import from its own layer or a lower one, and no two packages import each other.
Function-local imports count too: they are how a cycle hides.
"""

import ast
from pathlib import Path

import aiayn

PACKAGE = Path(aiayn.__file__).parent

# Lowest first. What a layer's packages may import: their own layer and every layer below.
LAYERS = [
    {
        "files",
        "layout",
        "config",
        "config_checks",
        "overrides",
        "devices",
    },  # names, settings, devices
    {"data", "model"},  # the corpus and the network
    # what uses a trained network; with evaluate, langid (which language a text is in) and the
    # scores per direction of a multilingual model
    {"decode", "evaluate", "langid", "directions", "tune", "export", "interop", "nn"},
    {"train", "engines"},  # training (it validates by decoding); every engine behind one interface
    {"plot", "vision", "documents"},  # and documents: structure kept around the engines
    {"commands", "serve", "cli", "__main__"},  # the interfaces
]
LAYER = {name: level for level, names in enumerate(LAYERS) for name in names}


def imports_by_package() -> dict[str, set[str]]:
    """{package: the other aiayn packages it imports}, from every import statement in it."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue  # the package's own front door re-exports from below
        source = parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            targets = {n.split(".")[1] for n in names if n.startswith("aiayn.")}
            for target in targets & set(LAYER) - {source}:
                found.setdefault(source, set()).add(target)
    return found


def test_every_package_has_a_layer():
    packages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()}
    packages = {p for p in packages if not p.startswith(("_", ".")) or p == "__main__"}
    packages -= {"static", "py"}
    assert packages <= set(LAYER), f"put {sorted(packages - set(LAYER))} in a layer"


def test_no_package_imports_upward():
    upward = [
        f"{source} (layer {LAYER[source]}) imports {target} (layer {LAYER[target]})"
        for source, targets in imports_by_package().items()
        for target in targets
        if LAYER[target] > LAYER[source]
    ]
    assert not upward, upward


def test_no_two_packages_import_each_other():
    graph = imports_by_package()
    cycles = sorted(
        f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a in graph.get(b, ())
    )
    assert not cycles, cycles


def test_decoding_and_evaluation_do_not_need_training():
    graph = imports_by_package()
    assert "train" not in graph.get("decode", set()) | graph.get("evaluate", set())
