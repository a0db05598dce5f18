"""`aiayn prepare` end to end on corpora the tests make."""

import json

import numpy as np
import pytest

from aiayn.cli import main
from aiayn.data.batches.dataset import ParallelData
from aiayn.data.clean import DUPLICATE, EMPTY, HELD_OUT_SOURCE, CleanOptions, source_key
from aiayn.data.data_dir import DataMeta
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.pipeline import prepare
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer
from tests.data.conftest import make_bible_db, synthetic_pairs, write_tsv

SMALL = dict(valid_size=40, test_size=40, vocab_size=120, progress=False)


def read_lines(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def tsv_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tsv")
    pairs = [*synthetic_pairs(600), ("", "leer"), ("Same.", "Gleich."), ("Same.", "Gleich.")]
    corpus = write_tsv(tmp / "corpus.tsv", pairs)
    result = prepare(PrepareOptions(out=tmp / "data", corpus=str(corpus), **SMALL))
    return tmp / "data", result


def test_splits_are_disjoint_by_source(tsv_dir):
    out, result = tsv_dir
    train = {source_key(s) for s in read_lines(out / "train.src.txt")}
    for split in ("valid", "test"):
        held = {source_key(s) for s in read_lines(out / f"{split}.src.txt")}
        assert held and not held & train
    assert not {source_key(s) for s in read_lines(out / "valid.src.txt")} & {
        source_key(s) for s in read_lines(out / "test.src.txt")
    }
    sizes = result["split"]["sizes"]
    assert sum(sizes.values()) == result["cleaning"]["kept"]


def test_report_counts_every_pair(tsv_dir):
    out, result = tsv_dir
    cleaning = result["cleaning"]
    assert cleaning["read"] == 603
    assert cleaning["dropped"][EMPTY] == 1
    assert cleaning["dropped"][DUPLICATE] >= 1
    assert cleaning["read"] == cleaning["kept"] + sum(cleaning["dropped"].values())
    text = (out / "report.txt").read_text()
    for needle in (
        "pairs read: 603",
        "dropped (empty side): 1",
        "splits (seed 1",
        "vocabulary: 120",
    ):
        assert needle in text
    assert json.loads((out / "report.json").read_text())["tokens"]["train"]["src"] > 0


def test_binarized_ids_decode_to_the_text(tsv_dir):
    out, _ = tsv_dir
    tok = Tokenizer(out)
    assert tok.vocab_size == 120 == DataMeta.load(out).vocab_size
    for split in ("train", "valid", "test"):
        data = ParallelData(out, split)
        src_text, tgt_text = (
            read_lines(out / f"{split}.src.txt"),
            read_lines(out / f"{split}.tgt.txt"),
        )
        assert len(data) == len(src_text) == len(tgt_text)
        for i in (0, len(data) // 2, len(data) - 1):
            src, tgt = data.pair(i)
            assert tok.decode([src.tolist()]) == [src_text[i]]  # round trip
            assert tok.decode([tgt.tolist()]) == [tgt_text[i]]
    assert np.asarray(ParallelData(out, "train").src_ids).dtype == np.uint16


def test_same_seed_same_directory(tsv_dir, tmp_path):
    out, _ = tsv_dir
    corpus = out.parent / "corpus.tsv"
    prepare(PrepareOptions(out=tmp_path, corpus=str(corpus), **SMALL))
    for name in ("train.src.txt", "valid.tgt.txt", "test.src.ids"):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes()


def test_two_files_and_given_held_out_files(tmp_path):
    pairs = synthetic_pairs(400, seed=1)
    (tmp_path / "s.txt").write_text("".join(s + "\n" for s, _ in pairs))
    (tmp_path / "t.txt").write_text("".join(t + "\n" for _, t in pairs))
    given = pairs[:30]  # these sources also occur in the main corpus: they must leave training
    valid = write_tsv(tmp_path / "valid.tsv", given)
    result = prepare(
        PrepareOptions(
            out=tmp_path / "data",
            src_file=tmp_path / "s.txt",
            tgt_file=tmp_path / "t.txt",
            valid_files=(valid,),
            **SMALL,
        )
    )
    out = tmp_path / "data"
    assert read_lines(out / "valid.src.txt") == list(dict.fromkeys(s for s, _ in given))
    assert result["cleaning"]["dropped"][HELD_OUT_SOURCE] >= 20  # the rest went to test
    train = {source_key(s) for s in read_lines(out / "train.src.txt")}
    assert not train & {source_key(s) for s, _ in given}


def test_bible_holds_out_whole_chapters(tmp_path):
    db = make_bible_db(tmp_path / "bible.db")
    result = prepare(
        PrepareOptions(
            out=tmp_path / "data",
            bible_db=db,
            valid_size=40,
            test_size=40,
            vocab_size=120,
            progress=False,
        )
    )
    out = tmp_path / "data"
    groups = result["split"]["held_out_groups"]
    assert len(groups["valid"]) == 2 and len(groups["test"]) == 2  # 20 verses per chapter
    assert not set(groups["valid"]) & set(groups["test"])
    # 14 training chapters each end with the held-out chapters' last source sentence
    assert result["cleaning"]["dropped"][HELD_OUT_SOURCE] == 14
    assert result["split"]["sizes"] == {"train": 266, "valid": 40, "test": 40}
    train = read_lines(out / "train.src.txt")
    assert "And God spoke, saying," not in train
    assert DataMeta.load(out).n_refs == {"valid": 2, "test": 2}
    assert len(read_lines(out / "test.ref1.txt")) == 40
    assert read_lines(out / "test.ref1.txt")[0].startswith("Das Wort Gottes")
    assert "held out by chapters" in (out / "report.txt").read_text()


def test_cli_prepare_and_its_errors(tmp_path, capsys):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(300, seed=2))
    args = [
        "prepare",
        "--corpus",
        str(corpus),
        "--out",
        str(tmp_path / "d"),
        "--no-progress",
        "--vocab-size",
        "100",
        "--valid-size",
        "20",
        "--test-size",
        "20",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "pairs read: 300" in out and "ready:" in out
    lines = corpus.read_text().splitlines(keepends=True)
    (tmp_path / "bad.tsv").write_text("".join(lines[:150]) + "no tab\n" + "".join(lines[150:]))
    assert main([*args[:1], "--corpus", str(tmp_path / "bad.tsv"), *args[3:]]) == 2
    assert "bad.tsv, line 151: expected 2 tab-separated columns" in capsys.readouterr().err


def test_too_big_a_vocabulary_is_a_clear_error(tmp_path):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(200, seed=3))
    with pytest.raises(
        DataError, match=r"Vocabulary size too high.*; choose a smaller --vocab-size"
    ):
        prepare(
            PrepareOptions(
                out=tmp_path / "d", corpus=str(corpus), **{**SMALL, "vocab_size": 50_000}
            )
        )


def test_held_out_sizes_must_leave_training_data(tmp_path):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(50, seed=4))
    with pytest.raises(DataError, match="would leave too little for training"):
        prepare(PrepareOptions(out=tmp_path / "d", corpus=str(corpus), **SMALL))


def test_clean_options_reach_the_filter(tmp_path):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(300, seed=5))
    result = prepare(
        PrepareOptions(
            out=tmp_path / "d", corpus=str(corpus), clean=CleanOptions(max_words=5), **SMALL
        )
    )
    assert result["cleaning"]["dropped"]["too long"] > 50


def test_collate_pads_and_shifts(tsv_dir):
    out, _ = tsv_dir
    data = ParallelData(out, "valid")
    batch = data.collate(np.array([3, 0, 5]))
    for row, i in enumerate([3, 0, 5]):
        src, tgt = data.pair(i)
        n, m = len(src), len(tgt)
        assert batch.src[row, :n].tolist() == src.tolist() and batch.src[row, n] == 2  # eos
        assert (batch.src[row, n + 1 :] == 0).all()  # padding after
        assert batch.tgt_in[row, 0] == 1 and batch.tgt_in[row, 1 : m + 1].tolist() == tgt.tolist()
        assert batch.tgt_out[row, :m].tolist() == tgt.tolist() and batch.tgt_out[row, m] == 2
    assert batch.n_tgt_tokens == sum(len(data.pair(i)[1]) + 1 for i in [3, 0, 5])


def test_bpe_sample_is_seeded(tmp_path):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(800, seed=6))
    options = dict(corpus=str(corpus), bpe_sentences=300, **SMALL)  # samples 300 of ~1500
    prepare(PrepareOptions(out=tmp_path / "a", **options))
    prepare(PrepareOptions(out=tmp_path / "b", **options))

    def pieces(name):  # the model file also records its own path, so compare the pieces
        return (tmp_path / name / "spm.vocab").read_text()

    assert pieces("a") == pieces("b")
    prepare(PrepareOptions(out=tmp_path / "c", **{**options, "seed": 2}))
    assert pieces("a") != pieces("c")


def test_given_test_files_are_kept_whole_and_apart(tmp_path):
    pairs = synthetic_pairs(500, seed=7)
    corpus = write_tsv(tmp_path / "c.tsv", pairs)
    odd = [("Short.", "Ein viel, viel, viel, viel längerer Satz als das Original."), *pairs[:20]]
    test = write_tsv(tmp_path / "test.tsv", [*odd, odd[1]])  # a ratio outlier and a repeat
    result = prepare(
        PrepareOptions(out=tmp_path / "d", corpus=str(corpus), test_files=(test,), **SMALL)
    )
    assert read_lines(tmp_path / "d" / "test.src.txt") == [s for s, _ in [*odd, odd[1]]]
    assert result["given"]["test"]["dropped"] == {}
    valid = {source_key(s) for s in read_lines(tmp_path / "d" / "valid.src.txt")}
    assert not valid & {source_key(s) for s, _ in odd}


def test_wrong_encodings_are_named(tmp_path):
    pairs = synthetic_pairs(300, seed=8)
    text = "".join(f"{s}\t{t}\n" for s, t in pairs)
    (tmp_path / "utf16.tsv").write_bytes(text.encode("utf-16"))
    with pytest.raises(DataError, match=r"utf16\.tsv:1: the file is UTF-16.*iconv"):
        prepare(PrepareOptions(out=tmp_path / "a", corpus=str(tmp_path / "utf16.tsv"), **SMALL))
    latin = "".join(f"{s}\t{t} süß\n" for s, t in pairs)
    (tmp_path / "latin1.tsv").write_bytes(latin.encode("latin-1"))
    with pytest.raises(DataError, match=r"300 of 300 lines are not UTF-8 .*LATIN1"):
        prepare(PrepareOptions(out=tmp_path / "b", corpus=str(tmp_path / "latin1.tsv"), **SMALL))


def test_a_failed_rerun_leaves_the_previous_directory_as_it_was(tsv_dir, tmp_path):
    out, _ = tsv_dir
    corpus = out.parent / "corpus.tsv"
    prepare(PrepareOptions(out=tmp_path / "d", corpus=str(corpus), **SMALL))
    before = {p.name: p.read_bytes() for p in (tmp_path / "d").iterdir()}
    with pytest.raises(DataError):
        prepare(
            PrepareOptions(
                out=tmp_path / "d", corpus=str(corpus), **{**SMALL, "vocab_size": 50_000}
            )
        )
    assert {p.name: p.read_bytes() for p in (tmp_path / "d").iterdir()} == before
    assert len(ParallelData(tmp_path / "d", "train")) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # nothing left beside it


def test_prepare_will_not_replace_a_directory_that_is_not_its_own(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match=r"holds files but no meta\.json"):
        prepare(PrepareOptions(out=tmp_path, corpus=str(tmp_path / "notes.txt"), **SMALL))
    assert (tmp_path / "notes.txt").read_text() == "mine"
