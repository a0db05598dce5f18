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
