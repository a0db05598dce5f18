import subprocess
import sys

from aiayn import __version__
from aiayn.cli import main


def test_version_and_help_from_python_m():
    run = subprocess.run(
        [sys.executable, "-m", "aiayn", "--version"], capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == f"aiayn {__version__}"
    run = subprocess.run(
        [sys.executable, "-m", "aiayn", "--help"], capture_output=True, text=True, check=True
    )
    assert "Attention Is All You Need" in run.stdout and "params" in run.stdout


def test_params_reports_beside_the_paper(capsys):
    assert main(["params", "--preset", "base"]) == 0
    out = capsys.readouterr().out
    assert "63,082,496" in out and "65M" in out


def test_bad_values_are_an_error_not_a_traceback(capsys):
    assert main(["params", "--preset", "base", "--vocab-size", "0"]) == 2
    assert "vocab_size must be positive" in capsys.readouterr().err


def test_each_subcommand_has_its_module_and_imports_no_other():
    """One module per subcommand, listed in cli.COMMANDS; what they share is in
    commands/options/, so no command module imports another (function-local imports count)."""
    import ast
    from pathlib import Path

    import aiayn.commands
    from aiayn.cli import COMMANDS, build_parser
    from tests.test_layers import imported

    folder = Path(aiayn.commands.__file__).parent
    names = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert names == {m.__name__.rsplit(".", 1)[1] for m in COMMANDS}
    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert {n.removesuffix("_") for n in names} == set(subcommands)
    for name in sorted(names):
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        others = {
            n
            for n in imported(tree)
            if n.startswith("aiayn.commands") and not n.startswith("aiayn.commands.options")
        }
        assert not others, f"commands/{name}.py imports {sorted(others)}: use commands/options/"


def test_an_old_flag_spelling_works_and_says_the_new_one(capsys):
    """STYLE rule 18: a renamed flag's old spelling does what the new one does, for a release,
    with a warning on stderr naming the new spelling."""
    from aiayn.cli import build_parser

    parser = build_parser()
    renamed = [
        (["translate", "--model", "m", "--source-lang", "de"], "src_lang", "de", "--src-lang"),
        (["translate", "--model", "m", "--prefix", "p.txt"], "target_prefix", "p.txt", None),
        (["evaluate", "--model", "m", "--src", "s.txt"], "src_file", "s.txt", "--src-file"),
        (["evaluate", "--model", "m", "--ref", "a", "b"], "ref_file", ["a", "b"], "--ref-file"),
    ]
    for argv, dest, value, new in renamed:
        args = parser.parse_args(argv)
        got = getattr(args, dest)
        assert (list(map(str, got)) if isinstance(got, list) else str(got)) == value, argv
        err = capsys.readouterr().err
        assert f"aiayn {argv[0]}: warning: {argv[3]} is now {new or '--target-prefix'}" in err
    assert parser.parse_args(["translate", "--model", "m", "--src-lang", "auto"]).src_lang == "auto"
    assert capsys.readouterr().err == ""
    help_text = parser._subparsers._group_actions[0].choices["translate"].format_help()
    assert "--source-lang" not in help_text and "--src-lang" in help_text
