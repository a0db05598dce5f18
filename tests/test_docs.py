"""What README.md, docs/*.md, benchmarks/README.md and experiments/ show still works as shown.

Every command in a ```bash, ```sh or ```console block is checked without running it: `aiayn ...`
(also `.venv/bin/aiayn`, `python -m aiayn`, `torchrun ... -m aiayn`) is parsed by the real
command-line parser, `make X` names a Makefile target, `python -m M` a module, `python F.py` a
file, `pip install ".[E]"` an extra of pyproject.toml. Every relative link, anchor included,
resolves; every ```python block compiles, and what it imports from aiayn exists (a block fenced
```python no-run is only compiled). No training runs: it takes seconds.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import importlib
import io
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from aiayn.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks/README.md",
    *sorted((ROOT / "experiments").rglob("README.md")),  # the finished studies
]
GUIDES = [p for p in PAGES if p.parent.name == "docs"]
SHELLS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^```([\w-]*)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
SEPARATORS = {"|", "||", "&&", ";", "&"}
REDIRECTS = {"<", ">", ">>", "<<", ">&", "&>", "<&"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the block's first line of content, 1-based
    lang: str
    flags: str  # what follows the language on the fence line, e.g. "no-run"
    text: str


@dataclass(frozen=True)
class Command:
    page: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.text}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text.count("\n", 0, m.start(3)) + 1, m.group(1), m.group(2), m.group(3))
        for m in FENCE.finditer(text)
    ]


def commands(block: Block) -> list[Command]:
    """The block's command lines, `\\` continuations joined; in a console block only the lines
    after a `$ ` prompt (the rest is output)."""
    found: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        line = line.strip()
        if block.lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line and not line.startswith("#"):
            found.append(Command(block.page, block.line + start, line))
    return found


def every_block() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def every_command() -> list[Command]:
    return [c for b in every_block() if b.lang in SHELLS for c in commands(b)]


def segments(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at pipes, `&&`, `;`), without redirections,
    leading `VAR=value` assignments or a `#` comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found, current, tokens = [], [], list(lexer)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in SEPARATORS:
            found.append(current)
            current = []
        elif token in REDIRECTS:
            i += 1  # and its target
        elif not current and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", token):
            pass  # an environment variable for the command
        else:
            current.append(token)
        i += 1
    return [c for c in [*found, current] if c]


def checker(argv: list[str]) -> Callable[[list[str]], str | None] | None:
    """The check for this simple command, or None for a program not checked here (echo, curl,
    pytest...). A check returns what is wrong, or None."""
    program = Path(argv[0]).name
    module = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else None
    if program == "aiayn":
        return lambda argv: aiayn_problem(argv[1:])
    if program in {"python", "python3", "torchrun"} and module == "aiayn":
        return lambda argv: aiayn_problem(argv[argv.index("-m") + 2 :])
    if program in {"python", "python3"} and module and module.split(".")[0] in OURS:
        return lambda argv: None if module_file(module) else f"no module {module}"
    if program in {"python", "python3"} and module is None and argv[1:2] != ["-c"]:
        script = argv[1] if len(argv) > 1 else "(no script)"
        return lambda argv: None if (ROOT / script).is_file() else f"no file {script}"
    if program == "make":
        return make_problem
    if program == "pip" and "install" in argv:
        return extras_problem
    return None


OURS = {"tests", "benchmarks", "docs", "harness", "experiments"}


def module_file(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def strict_parser() -> argparse.ArgumentParser:
    """aiayn's parser, refusing abbreviated options: a page shows every option's full name."""
    parser = build_parser()
    parsers = [parser]
    while parsers:
        one = parsers.pop()
        one.allow_abbrev = False
        for action in one._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return parser


def aiayn_problem(args: list[str]) -> str | None:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            strict_parser().parse_args(args)
    except SystemExit:
        said = err.getvalue().strip().splitlines()
        return f"aiayn's parser refuses it: {said[-1] if said else 'no message'}"
    return None


def make_problem(argv: list[str]) -> str | None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, re.M))
    missing = [t for t in argv[1:] if not t.startswith("-") and t not in targets]
    return f"no Makefile target {missing} (have {sorted(targets)})" if missing else None


def extras_problem(argv: list[str]) -> str | None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]")[1].split("\n[")[0]
    known = set(re.findall(r"^([\w-]+)\s*=", section, re.M))
    for arg in argv:
        if match := re.fullmatch(r"\.\[([\w,-]+)\]", arg):
            unknown = set(match.group(1).split(",")) - known
            if unknown:
                return f"no extra {sorted(unknown)} in pyproject.toml (have {sorted(known)})"
    return None


def problem(argv: list[str]) -> str | None:
    while Path(argv[0]).name in {"time", "sudo"} and len(argv) > 1:  # what runs the command
        argv = [a for i, a in enumerate(argv[1:]) if i or not a.startswith("-")]
    check = checker(argv)
    return check(argv) if check else None


COMMANDS = every_command()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c.page.name}:{c.line}")
def test_command_is_real(command):
    for argv in segments(command.text):
        why = problem(argv)
        assert why is None, f"{command.where()}\n  {why}"


def test_commands_were_found():
    """The checker sees the commands (a changed fence or prompt would hide them all)."""
    checked = [c for c in COMMANDS if any(checker(a) for a in segments(c.text))]
    assert len(checked) >= 40, [c.where() for c in checked]
    for guide in ("data", "training", "translation", "export", "vision", "reliability", "gpu"):
        assert any(c.page.stem == guide for c in checked), f"docs/{guide}.md shows no command"


def test_every_subcommand_is_shown():
    """Each `aiayn` subcommand appears in some page, its arguments checked above."""
    shown = set()
    for command in COMMANDS:
        for argv in segments(command.text):
            if Path(argv[0]).name != "aiayn" and "-m" in argv:
                argv = argv[argv.index("-m") + 1 :]  # python -m aiayn ..., torchrun ... -m aiayn
            if Path(argv[0]).name == "aiayn" and len(argv) > 1:
                shown.add(argv[1])
    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(subcommands) <= shown, f"no page shows: {sorted(set(subcommands) - shown)}"


def test_the_checker_catches_a_wrong_command():
    assert problem(["aiayn", "train", "--out", "runs/x", "--warmpu", "10"])
    assert problem(["aiayn", "translate"])  # --model is required
    assert problem(["python", "-m", "aiayn", "serve", "--modle", "runs/demo"])
    assert problem(["make", "tests"])
    assert problem(["/usr/bin/time", "-v", "make", "dmeo"])
    assert problem([".venv/bin/pip", "install", "-e", ".[serv]"])
    assert problem(["python", "benchmarks/no_such_bench.py"])
    assert problem(["python", "-m", "tests.no_such_module"])
    assert problem(["aiayn", "train", "--out", "runs/x", "--max-minute", "5"])  # abbreviated
    assert problem(["aiayn", "train", "--out", "runs/x"]) is None
    assert segments("echo hi | X=1 aiayn translate --model m < in.txt  # note") == [
        ["echo", "hi"],
        ["aiayn", "translate", "--model", "m"],
    ]


PYTHON = [b for b in every_block() if b.lang == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: f"{b.page.name}:{b.line}")
def test_python_block_compiles_and_imports_what_exists(block):
    where = f"{block.page.relative_to(ROOT)}:{block.line}"
    try:
        tree = ast.parse(block.text)
        compile(tree, where, "exec")
    except SyntaxError as err:
        pytest.fail(f"{where}: {err}")
    if "no-run" in block.flags:
        return
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "aiayn":
            for alias in node.names:
                names[alias.asname or alias.name] = imported(node.module, alias.name, where)
    for node in ast.walk(tree):  # keywords of config dataclasses are their fields
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            made = names.get(node.func.id)
            if isinstance(made, type) and dataclasses.is_dataclass(made):
                fields = {f.name for f in dataclasses.fields(made)}
                wrong = {k.arg for k in node.keywords if k.arg} - fields
                assert not wrong, f"{where}: {made.__name__} has no field {sorted(wrong)}"


def imported(module: str, name: str, where: str) -> object:
    """What `from module import name` gives: an attribute, or a submodule."""
    found = importlib.import_module(module)
    if hasattr(found, name):
        return getattr(found, name)
    try:
        return importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{module}.{name}":
            raise  # the submodule is there, and needs something that is not
        pytest.fail(f"{where}: {module} has no {name}")


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated one numbered."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n, unique = 0, slug
        while unique in found:
            n += 1
            unique = f"{slug}-{n}"
        found.add(unique)
    return found


def links() -> list[tuple[Path, int, str]]:
    found = []
    for page in PAGES:
        text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text("utf-8"))
        for m in LINK.finditer(text):
            found.append((page, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


LINKS = [link for link in links() if not re.match(r"[a-z]+:", link[2])]


@pytest.mark.parametrize("link", LINKS, ids=lambda link: f"{link[0].name}:{link[1]}")
def test_link_resolves(link):
    page, line, target = link
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    where = f"{page.relative_to(ROOT)}:{line}: ({target})"
    assert file.exists(), f"{where}: no such file"
    if anchor:
        assert file.suffix == ".md", f"{where}: an anchor into a file that is not Markdown"
        assert anchor in anchors(file), f"{where}: no heading gives #{anchor}"


PATH = re.compile(r"`((?:src|tests|benchmarks|experiments|harness|docs)/[\w./-]*)`")


def paths() -> list[tuple[Path, int, str]]:
    """Every repository path the pages name in backquotes, but for placeholders (`TASK`)."""
    found = []
    for page in PAGES:
        text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text("utf-8"))
        for m in PATH.finditer(text):
            if not re.search(r"[A-Z]{3,}", m.group(1)):
                found.append((page, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


@pytest.mark.parametrize("named", paths(), ids=lambda n: f"{n[0].name}:{n[1]}:{n[2]}")
def test_named_path_exists(named):
    page, line, path = named
    assert (ROOT / path).exists(), f"{page.relative_to(ROOT)}:{line}: no {path} in the repository"


def test_bad_input_cases_counted_right():
    from tests.bad_input.suite import CASES

    text = (ROOT / "docs/reliability.md").read_text(encoding="utf-8")
    said = [int(n) for n in re.findall(r"(\d+) cases", text)]
    assert said == [len(CASES)], f"docs/reliability.md says {said} cases; there are {len(CASES)}"


def test_guides_exist():
    names = {p.stem for p in GUIDES}
    wanted = {"data", "training", "translation", "export", "vision", "reliability", "gpu"}
    assert wanted | {"architecture"} <= names, sorted(wanted - names)


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move detail to docs/"


def test_benchmarks_readme_holds_current_figures_only():
    """Earlier runs and finished studies live in experiments/, one line each in the page."""
    lines = (ROOT / "benchmarks/README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 700, f"benchmarks/README.md has {lines} lines: archive in experiments/"
