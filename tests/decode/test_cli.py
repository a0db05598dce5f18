"""`aiayn translate` and `aiayn evaluate` with beam search, on a run trained for a few steps."""

import pytest

from aiayn.cli import main
from tests.train.conftest import TINY_RUN, tiny_data  # noqa: F401 (a fixture)


@pytest.fixture(scope="module")
def run(tiny_data, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("decode-run") / "run"
    assert main(["train", "--data", str(tiny_data), "--out", str(out), *TINY_RUN,
                 "--max-steps", "6"]) == 0  # fmt: skip
    return out


def test_nbest_output(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\n\nThe old man reads a book.\n")
    assert main(["translate", "--model", str(run), "--input", str(src), "--nbest", "3",
                 "--max-len-b", "5"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    fields = [line.split(" ||| ") for line in lines]
    assert all(len(f) == 3 for f in fields)
    assert [f[0] for f in fields] == ["0", "0", "0", "1", "2", "2", "2"]  # the empty line: one
    for sentence in ("0", "2"):
        scores = [float(f[2]) for f in fields if f[0] == sentence]
        assert scores == sorted(scores, reverse=True)


def test_beam_and_greedy_from_the_command_line(run, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("The dog sees a cat.\nThe old man reads a book.\n")
    outputs = {}
    for beam in ("1", "4"):
        assert main(["translate", "--model", str(run), "--input", str(src), "--beam", beam,
                     "--output", str(tmp_path / f"b{beam}.txt")]) == 0  # fmt: skip
        outputs[beam] = (tmp_path / f"b{beam}.txt").read_text().splitlines()
    assert len(outputs["1"]) == len(outputs["4"]) == 2
    assert main(["translate", "--model", str(run), "--input", str(src), "--nbest", "5",
                 "--beam", "4"]) == 2  # fmt: skip
    assert "need 1 <= --nbest (5) <= --beam (4)" in capsys.readouterr().err


def test_evaluate_reports_the_search(run, tiny_data, capsys):  # noqa: F811
    assert main(["evaluate", "--model", str(run), "--data", str(tiny_data), "--beam", "2",
                 "--length-penalty", "power", "--alpha", "1.0"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "beam 2, power alpha 1.0" in out and "BLEU" in out and "chrF" in out
