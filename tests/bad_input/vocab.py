"""Bad `aiayn prepare --vocab MODEL` requests: a clear error naming the model, the file or the
option and what to do, before any work, and a data directory already there left as it was."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from aiayn import layout
from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, copy, cut, digest


def model_with(change: Callable[[Fixtures, Path], None]) -> Callable[[Fixtures, Path], Path]:
    """A copy of the tiny run's model directory, changed."""

    def make(f: Fixtures, tmp: Path) -> Path:
        model = copy(layout.model_dir(f.run), tmp / "model")
        change(f, model)
        return model

    return make


def other_tokenizer(f: Fixtures, model: Path) -> None:
    shutil.copyfile(f.big_data / layout.TOKENIZER_FILE, model / layout.TOKENIZER_FILE)


def no_tokenizer(f: Fixtures, model: Path) -> None:
    (model / layout.TOKENIZER_FILE).unlink()


def cut_tokenizer(f: Fixtures, model: Path) -> None:
    cut(model / layout.TOKENIZER_FILE, 100)


def prepare_vocab(
    *argv: str, model: Callable[[Fixtures, Path], Path] | None = None
) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn prepare --out DATA --vocab MODEL ...` over a copy of good data, which must stay as
    it was; MODEL is the tiny run, or what `model` makes; TSV the good corpus, DATA the data."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        source = model(f, tmp) if model is not None else f.run
        before = digest(data), digest(source)
        synthetic = tmp / "synthetic.tsv"  # another corpus file, for --synthetic
        synthetic.write_bytes(f.corpus.read_bytes())
        names = {"TSV": str(f.corpus), "DATA": str(f.data), "SYNTHETIC": str(synthetic)}
        argv_ = ["prepare", "--out", str(data), "--vocab", str(source), "--no-progress"]
        out = aiayn([*argv_, *(names.get(a, a) for a in argv)])
        kept = (digest(data), digest(source)) == before
        return Outcome(out.code, out.message, kept, out.traceback)

    return case


def prepare_vocab_data(f: Fixtures, tmp: Path) -> Outcome:
    """`--vocab DATA`: a data directory, which holds an spm.model but is no model."""
    data = copy(f.data, tmp / "data")
    before = digest(data)
    out = aiayn(["prepare", "--out", str(tmp / "new"), "--vocab", str(data), "--corpus",
                 str(f.corpus), "--no-progress"])  # fmt: skip
    return Outcome(out.code, out.message, digest(data) == before, out.traceback)


CASES = [
    Case(
        "prepare --vocab DATA (a data directory, not a model)",
        prepare_vocab_data,
        2,
        ("--vocab", "no model here", "give a run directory"),
    ),
    Case(
        "prepare --vocab RUN --vocab-size 100 --case-copies 0.1",
        prepare_vocab("--corpus", "TSV", "--vocab-size", "100", "--case-copies", "0.1"),
        2,
        ("--vocab", "--vocab-size, --case-copies cannot apply", "drop them"),
    ),
    Case(
        "prepare --vocab RUN --case-markup all",
        prepare_vocab("--corpus", "TSV", "--case-markup", "all"),
        2,
        ("--case-markup cannot apply", "its case markup", "drop it, or drop --vocab"),
    ),
    Case(
        "prepare --vocab RUN --langs en,de (the model has no <2en>, <2de>)",
        prepare_vocab("--langs", "en,de"),
        2,
        ("has no language tag <2en>, <2de>", "spm.model", "drop them from --langs"),
    ),
    Case(
        "prepare --vocab MODEL whose spm.model is another model's (100 pieces, config 64)",
        prepare_vocab("--corpus", "TSV", model=model_with(other_tokenizer)),
        2,
        ("spm.model has 100 pieces", "config.json has vocab_size=64", "ids would not be"),
    ),
    Case(
        "prepare --vocab MODEL without spm.model",
        prepare_vocab("--corpus", "TSV", model=model_with(no_tokenizer)),
        2,
        ("--vocab", "spm.model is missing", "not a whole model directory"),
    ),
    Case(
        "prepare --vocab MODEL with a cut spm.model",
        prepare_vocab("--corpus", "TSV", model=model_with(cut_tokenizer)),
        2,
        ("spm.model: not a SentencePiece model", "damaged or cut short"),
    ),
    Case(
        "prepare --vocab RUN --synthetic TSV (the model has no <BT> piece)",
        prepare_vocab("--corpus", "TSV", "--synthetic", "SYNTHETIC"),
        2,
        ("has no piece <BT>", "--synthetic", "--no-bt-tag"),
    ),
]
