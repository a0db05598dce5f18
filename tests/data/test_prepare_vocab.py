"""`aiayn prepare --vocab MODEL`: a corpus encoded with a model's own SentencePiece model and
ids (its spm.model copied byte for byte, the ids those of `Tokenizer(MODEL).encode`), the
unknown pieces counted per side, a fine-tuning run that starts on it; an imported Marian model's
target side segmented with its target.spm; `--langs` with a model that has the tags."""

from __future__ import annotations

import importlib
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from aiayn import Transformer, layout, preset
from aiayn.cli import main
from aiayn.data.data_dir import DataDir
from aiayn.data.multilingual.options import MultiOptions
from aiayn.data.multilingual.pipeline import prepare_multilingual
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from aiayn.data.prepare.vocab import unknown_positions
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import UNK_ID, Tokenizer
from aiayn.interop.marian import import_marian
from aiayn.layout import SIDES, SPLITS
from aiayn.train.metrics import read_metrics
from tests.data.conftest import make_bible_db, synthetic_pairs, write_tsv
from tests.interop.test_marian import marian_dir
from tests.train.test_finetune import finetune

# Lines the tiny vocabulary cannot spell: Ω in 8 sources, ψ in every one of 40 targets.
UNKNOWN = [
    (f"The {'Ωmega' if i < 8 else 'old'} dog {i}.", f"Der ψ Hund ψψ {i}.") for i in range(40)
]


def prepared(corpus: Path, out: Path, vocab: Path) -> DataDir:
    sizes = {"valid_size": 15, "test_size": 15}
    prepare(PrepareOptions(out=out, corpus=str(corpus), vocab=vocab, progress=False, **sizes))
    return DataDir.open(out)


def ids_of(data: DataDir, split: str, side: str) -> list[list[int]]:
    ids, offsets = load_ids(data.ids(split, side), data.meta.vocab_size)
    return [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)]


@pytest.fixture(scope="module")
def data(tiny_run, tmp_path_factory) -> DataDir:
    tmp = tmp_path_factory.mktemp("vocab")
    corpus = write_tsv(tmp / "corpus.tsv", synthetic_pairs(160, seed=5) + UNKNOWN)
    return prepared(corpus, tmp / "data", tiny_run)


def test_the_models_spm_model_and_ids(data, tiny_run):
    model = layout.model_dir(tiny_run)
    assert data.tokenizer.read_bytes() == (model / layout.TOKENIZER_FILE).read_bytes()
    assert not data.target_tokenizer.exists()  # one tokenizer for both sides
    tokenizer = Tokenizer(model)
    for split in SPLITS:
        for side in SIDES:
            assert ids_of(data, split, side) == tokenizer.encode(data.lines(split, side))
    assert data.meta.vocab_size == tokenizer.vocab_size
    assert data.meta.vocab_from == str(model.resolve())


def test_the_unknown_pieces_are_counted_per_side_and_a_high_rate_warned(data, tiny_run):
    report = json.loads(data.report_json.read_text())["vocabulary"]
    tokenizer = Tokenizer(layout.model_dir(tiny_run))
    for side in SIDES:
        encoded = [i for s in SPLITS for line in ids_of(data, s, side) for i in line]
        found = report["unknown"][side]
        assert found["unknown"] == encoded.count(UNK_ID) > 0
        assert found["tokens"] == len(encoded)
        assert all(UNK_ID in tokenizer.encode([w])[0] for w in found["examples"])
    assert "Ωmega" in report["unknown"]["src"]["examples"]
    assert {"ψ", "ψψ"} <= set(report["unknown"]["tgt"]["examples"])
    assert report["unknown"]["src"]["rate"] < 0.01 < report["unknown"]["tgt"]["rate"]
    text = data.report_text.read_text()
    assert "no BPE learned" in text and "unknown pieces, source:" in text
    warnings = [line for line in text.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "of the target side's tokens are unknown" in warnings[0]


def test_a_finetuning_run_starts_on_it(data, tiny_run, tmp_path):
    finetune(tiny_run, data.root, tmp_path / "ft", 1)
    assert [r["step"] for r in read_metrics(tmp_path / "ft") if r["kind"] == "train"] == [1]


def without_pieces(spm_file: Path, gone: set[str]) -> bytes:
    """The SentencePiece model with some pieces taken out: another segmentation of the same
    text, as Marian's target.spm is of its target language."""
    pb = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    proto = pb.ModelProto()
    proto.ParseFromString(spm_file.read_bytes())
    kept = [p for p in proto.pieces if p.piece not in gone]
    assert len(kept) == len(proto.pieces) - len(gone)
    del proto.pieces[:]
    proto.pieces.extend(kept)
    return proto.SerializeToString()


def test_an_imported_marian_models_target_side_is_segmented_with_its_target_spm(
    tiny_data, tmp_path
):
    target_spm = without_pieces(tiny_data / "spm.model", {"und", "ein"})
    marian_dir(tiny_data, tmp_path / "marian", target_spm=target_spm)
    model = import_marian(tmp_path / "marian", tmp_path / "imported")
    source, target = (Tokenizer(model / f) for f in (layout.TOKENIZER_FILE, "spm.tgt.model"))
    assert source.pieces(range(source.vocab_size)) == target.pieces(range(target.vocab_size))
    corpus = write_tsv(tmp_path / "corpus.tsv", synthetic_pairs(160, seed=5))
    data = prepared(corpus, tmp_path / "data", model)
    assert data.target_tokenizer.read_bytes() == (model / "spm.tgt.model").read_bytes()
    lines = data.lines("train", "tgt")
    assert ids_of(data, "train", "tgt") == target.encode(lines) != source.encode(lines)
    assert ids_of(data, "train", "src") == source.encode(data.lines("train", "src"))
    assert source.decode(ids_of(data, "train", "tgt")) == lines  # spm.model decodes it
    text = data.report_text.read_text()
    assert "source segmented with spm.model, target with spm.tgt.model" in text
    finetune(model, data.root, tmp_path / "ft", 1)  # the pieces are the model's


def test_one_segmentation_for_both_sides_writes_no_second_tokenizer(tiny_data, tmp_path):
    marian_dir(tiny_data, tmp_path / "marian")  # target.spm is source.spm
    model = import_marian(tmp_path / "marian", tmp_path / "imported")
    assert not (model / "spm.tgt.model").exists()


def test_langs_with_a_model_that_has_their_tags(tmp_path, capsys):
    db = make_bible_db(tmp_path / "bible.db", n_books=2, n_chapters=5, n_verses=12)
    sizes = dict(valid_size=12, test_size=12, progress=False)
    first = tmp_path / "first"
    langs = ("de", "en")
    prepare_multilingual(MultiOptions(out=first, langs=langs, bible_db=db, vocab_size=90, **sizes))
    model = tmp_path / "model"  # a model of that vocabulary (random weights do)
    Transformer(preset("tiny", vocab_size=DataDir.open(first).meta.vocab_size)).save(model)
    shutil.copyfile(first / layout.TOKENIZER_FILE, model / layout.TOKENIZER_FILE)
    argv = ["prepare", "--langs", "de,en", "--bible-db", str(db), "--vocab", str(model)]
    small = ["--valid-size", "12", "--test-size", "12", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "again"), *small]) == 0
    assert "no BPE learned" in capsys.readouterr().out
    again = DataDir.open(tmp_path / "again")
    for split in SPLITS:
        for side in SIDES:  # the same split and pieces: the same ids
            assert ids_of(again, split, side) == ids_of(DataDir.open(first), split, side)
    assert again.meta.vocab_from == str(model.resolve())


def test_unknown_positions_are_found_across_chunks():
    ids = np.array([5, UNK_ID, 7, UNK_ID, UNK_ID, 9, UNK_ID], np.uint16)
    assert unknown_positions(ids, chunk=2).tolist() == [1, 3, 4, 6]
    assert unknown_positions(ids[:0]).tolist() == []
