"""The small-data recipe: a new run on few training pairs takes smaller batches, and says so;
a size the user named, a larger corpus and a fine-tuning run keep the recipe's."""

import json

import pytest

from aiayn.cli import main
from aiayn.config import RECIPES
from aiayn.config.train import SMALL_DATA_MAX_TOKENS, SMALL_DATA_PAIRS, for_corpus
from aiayn.data.prepare.bpe import default_vocab_size
from tests.conftest import TINY_RUN


def test_few_pairs_take_the_small_data_batches_and_nothing_else():
    cfg, note = for_corpus(RECIPES["short"], 5_000, named=set())
    assert cfg == RECIPES["short"].replace(max_tokens=SMALL_DATA_MAX_TOKENS)
    assert "small-data recipe: 5,000 training pairs" in note and "--max-tokens 4096" in note


@pytest.mark.parametrize(
    ("pairs", "named", "asked"),
    [
        (SMALL_DATA_PAIRS + 1, set(), RECIPES["short"]),  # enough pairs
        (5_000, {"max_tokens"}, RECIPES["short"]),  # the size asked for by name
        (5_000, set(), RECIPES["short"].replace(max_tokens=512)),  # no larger already
    ],
)
def test_otherwise_the_batches_are_left_as_asked(pairs, named, asked):
    assert for_corpus(asked, pairs, named) == (asked, None)


def test_the_bound_itself_is_small_data():
    assert for_corpus(RECIPES["paper"], SMALL_DATA_PAIRS, set())[0].max_tokens == 1024


@pytest.mark.parametrize(
    ("pairs", "pieces"),
    [
        (400, 2_000),
        (5_000, 2_000),
        (5_001, 4_000),
        (15_000, 4_000),
        (28_700, 8_000),
        (10**6, 32_000),
    ],
)
def test_prepare_chooses_fewer_pieces_for_fewer_pairs(pairs, pieces):
    assert default_vocab_size(pairs) == pieces


def run_json(out):
    return json.loads((out / "run.json").read_text())


@pytest.mark.parametrize(
    ("extra", "tokens"),
    [
        ([], SMALL_DATA_MAX_TOKENS),
        (["--max-tokens", "4096"], 4096),
        (["--set", "max_tokens=2000"], 2000),
    ],
)
def test_train_records_and_says_the_batches_it_chose(tiny_data, tmp_path, capsys, extra, tokens):
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), "--recipe", "short"]
    tiny = [a for a in TINY_RUN if a not in ("--max-tokens", "160")]  # the recipe's own size
    assert main([*args, *tiny, "--max-steps", "1", "--device", "cpu", *extra]) == 0
    assert run_json(out)["train"]["max_tokens"] == tokens
    pairs = json.loads((tiny_data / "meta.json").read_text())["sizes"]["train"]
    said = f"small-data recipe: {pairs:,} training pairs" in capsys.readouterr().err
    assert said == (tokens == SMALL_DATA_MAX_TOKENS)


def test_a_fine_tuning_run_keeps_its_recipes_batches(tiny_data, tmp_path, capsys):
    base, tuned = tmp_path / "base", tmp_path / "tuned"
    args = ["--data", str(tiny_data), "--max-steps", "1", "--device", "cpu"]
    assert main(["train", "--out", str(base), "--recipe", "short", *TINY_RUN, *args]) == 0
    tiny = [a for a in TINY_RUN if a not in ("--max-tokens", "160", "--preset", "tiny")]
    tune = ["train", "--out", str(tuned), "--init", str(base), "--recipe", "finetune"]
    assert main([*tune, *tiny, *args]) == 0
    assert run_json(tuned)["train"]["max_tokens"] == RECIPES["finetune"].max_tokens
    assert "small-data recipe" not in capsys.readouterr().err
