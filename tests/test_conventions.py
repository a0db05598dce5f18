"""The house rules of ../shared/STYLE.md that a machine can check, on every module of the
package: public means public, no caller asks which engine it holds, and rooms, files and
functions stay small enough to read."""

import ast

from aiayn.config import ENGINES
from tests.test_layers import PACKAGE, modules

MAX_TOP_LEVEL = 8  # modules at the top of the package, beside the rooms
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
# "module:function" -> why it stays longer; none today. A new entry needs its reason here.
LONG_FUNCTIONS: dict[str, str] = {}


def private_imports(name: str, tree: ast.Module) -> list[str]:
    """`from aiayn.x import _y`, and `x._y` where x is an aiayn module imported by name."""
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("aiayn"):
                continue
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.append(f"{name}: from {node.module} import {a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            aliases |= {
                a.asname or a.name: a.name for a in node.names if a.name.startswith("aiayn")
            }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    return found


def engine_comparisons(name: str, tree: ast.Module) -> list[str]:
    """Comparisons with an engine's name ("ctranslate2", ...), alone or in a tuple or set."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            constants = [c for c in ast.walk(side) if isinstance(c, ast.Constant)]
            if any(c.value in ENGINES for c in constants):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def long_functions(name: str, tree: ast.Module) -> dict[str, int]:
    """{"module:function": lines} for each function longer than the limit (methods too)."""
    return {
        f"{name}:{node.name}": node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }


def test_no_module_imports_a_private_name_of_another():
    found = [x for name, tree in modules().items() for x in private_imports(name, tree)]
    assert not found, "make them public where they are defined, or move the caller: " + str(found)


def test_a_private_import_is_caught():
    tree = ast.parse("from aiayn.data import bible\nbible._connect(db)\n")
    assert private_imports("m", tree) == ["m: aiayn.data.bible._connect"]
    tree = ast.parse("from aiayn.data.token_ids import _with\n")
    assert private_imports("m", tree) == ["m: from aiayn.data.token_ids import _with"]


def test_only_the_engines_compare_an_engine_name():
    found = [
        x
        for name, tree in modules().items()
        if not name.startswith("aiayn.engines")
        for x in engine_comparisons(name, tree)
    ]
    assert not found, "ask the engine (src/aiayn/engines/) instead: " + str(found)


def test_an_engine_comparison_is_caught():
    tree = ast.parse('if args.engine == "aiayn":\n    pass\nx = e in ("onnx", "ctranslate2")\n')
    assert len(engine_comparisons("m", tree)) == 2


def test_few_modules_at_the_top_of_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, f"{top}: move some into a room"


def test_no_file_over_the_limit():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    }
    assert not long, f"split these at about {MAX_FILE_LINES} lines: {long}"


def test_no_function_over_the_limit():
    found = {
        k: v for name, tree in modules().items() for k, v in long_functions(name, tree).items()
    }
    unexcused = {k: v for k, v in found.items() if k not in LONG_FUNCTIONS}
    assert not unexcused, (
        f"split these into named steps of <= {MAX_FUNCTION_LINES} lines: {unexcused}"
    )
    stale = set(LONG_FUNCTIONS) - set(found)
    assert not stale, f"no longer long: drop them from LONG_FUNCTIONS: {stale}"


def test_a_long_function_is_caught():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    tree = ast.parse(f"def f():\n{body}")
    assert long_functions("m", tree) == {"m:f": MAX_FUNCTION_LINES + 1}


def lab_imports(tree: ast.Module, lab: set[str]) -> list[str]:
    """Imports of a module that lives in benchmarks/ or experiments/ (by its name)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in lab]
    return found


def test_the_tests_import_nothing_from_the_benchmarks_or_the_archive():
    """benchmarks/ and experiments/ may change at any time (STYLE 16): what tests share with
    them lives in harness/."""
    root = PACKAGE.parents[1]
    lab = {"benchmarks", "experiments"} | {
        p.stem for folder in ("benchmarks", "experiments") for p in (root / folder).rglob("*.py")
    }
    found = {
        str(p.relative_to(root)): bad
        for p in (root / "tests").rglob("*.py")
        if (bad := lab_imports(ast.parse(p.read_text(encoding="utf-8")), lab))
    }
    assert not found, found
    assert lab_imports(ast.parse("from decode_bench import machine_cpu\n"), lab)
