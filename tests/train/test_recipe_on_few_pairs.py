"""Few training pairs do not switch the recipe: a new run keeps the recipe's batches (or the size
named) and prepare's vocabulary has at least 8,000 pieces below 50,000 pairs, where the text holds
them; issue 56's learning curve at equal work measured the small-data switch losing on verses."""

import json

import pytest

from aiayn.cli import main
from aiayn.config import RECIPES
from aiayn.data.prepare.bpe import default_vocab_size
from tests.conftest import TINY_RUN


@pytest.mark.parametrize(
    ("pairs", "pieces"),
    [
        (400, 8_000),
        (5_000, 8_000),
        (15_000, 8_000),
        (28_700, 8_000),
        (49_999, 8_000),
        (50_000, 16_000),
        (10**6, 32_000),
    ],
)
def test_prepare_chooses_its_vocabulary_by_size_from_8000_pieces(pairs, pieces):
    assert default_vocab_size(pairs) == pieces


def run_json(out):
    return json.loads((out / "run.json").read_text())


@pytest.mark.parametrize(
    ("extra", "tokens"),
    [
        ([], RECIPES["short"].max_tokens),
        (["--max-tokens", "1024"], 1024),
        (["--set", "max_tokens=2000"], 2000),
    ],
)
def test_a_run_on_few_pairs_keeps_the_batches_asked(tiny_data, tmp_path, capsys, extra, tokens):
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), "--recipe", "short"]
    tiny = [a for a in TINY_RUN if a not in ("--max-tokens", "160")]  # the recipe's own size
    assert main([*args, *tiny, "--max-steps", "1", "--device", "cpu", *extra]) == 0
    assert run_json(out)["train"]["max_tokens"] == tokens
    assert run_json(out)["train"]["max_steps"] == 1
    assert "small-data" not in capsys.readouterr().err
