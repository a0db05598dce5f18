"""Subword sampling (subword_sampling.py): each epoch's pieces a pure function of (seed, epoch),
another segmentation of the same text, drawn ahead; at alpha 0, the prepared pieces exactly."""

import threading

import numpy as np
import pytest
import sentencepiece as spm

from aiayn.data.batches.dataset import ParallelData
from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.batches.subword_sampling import CHUNK_LINES, SubwordSampling, chunk_seed
from aiayn.data.bpe_dropout import dropout_merges
from aiayn.data.data_dir import DataDir
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer
from tests.data.conftest import prepared_tsv, synthetic_pairs, write_tsv


def sampling(data, alpha=0.1, seed=1, max_tokens=4096, sides="source", pad_to=8) -> SubwordSampling:
    files = DataDir.open(data)
    texts = (files.text("train", "src"), files.text("train", "tgt"))
    pairs = ParallelData(files, "train")
    return SubwordSampling(
        alpha, seed, texts, Tokenizer(files.tokenizer), pairs, max_tokens, pad_to, sides
    )


def ids(data: ParallelData, side: int) -> list[list[int]]:
    return [data.pair(i)[side].tolist() for i in range(len(data))]


@pytest.fixture(scope="module")
def markup_data(tmp_path_factory):
    """A data directory prepared with `--case-markup all`: capitals as marker pieces."""
    root = tmp_path_factory.mktemp("sampling-markup")
    corpus = write_tsv(root / "c.tsv", synthetic_pairs(300, seed=4))
    return prepared_tsv(corpus, root / "data", case_markup="all")


def test_an_epochs_pieces_are_a_function_of_seed_and_epoch(tiny_data):
    made = sampling(tiny_data)
    first = ids(made.draw(3), 0)
    assert ids(sampling(tiny_data).draw(3), 0) == first  # another object, the same draw
    assert ids(made.draw(4), 0) != first
    assert ids(sampling(tiny_data, seed=2).draw(3), 0) != first
    assert chunk_seed(1, 3, 0, 0) != chunk_seed(1, 3, 1, 0) != chunk_seed(1, 3, 0, 1)


def test_the_draw_does_not_depend_on_the_thread_or_what_ran_before(tiny_data):
    made = sampling(tiny_data)
    here = ids(made.draw(2), 0)
    made.draw(7)  # SentencePiece's generator moved on
    there = []
    worker = threading.Thread(target=lambda: there.append(ids(made.draw(2), 0)))
    worker.start()
    worker.join()
    assert there == [here]


def test_the_next_epoch_is_drawn_ahead_in_another_process_and_is_the_same_draw(tiny_data):
    """The worker is a process of its own (spawned): the draw is the same there as here, as a
    resumed run, another process, needs (SentencePiece's own sampling is not)."""
    made = sampling(tiny_data)
    assert ids(made.epoch(0), 0) == ids(made.draw(0), 0)
    ahead = made._ahead
    assert ahead is not None and ahead[0] == 1  # under way while epoch 0 is trained
    assert ids(made.epoch(1), 0) == ids(made.draw(1), 0)
    assert ids(made.epoch(5), 0) == ids(made.draw(5), 0)  # a resumed run's epoch


@pytest.mark.parametrize("kind", ["plain", "case markup"])
def test_sampled_pieces_spell_the_same_text_in_another_segmentation(kind, tiny_data, markup_data):
    data = tiny_data if kind == "plain" else markup_data
    made = sampling(data, alpha=0.3, sides="both")
    tokenizer, prepared = made.tokenizer, made.data
    for epoch in range(2):
        drawn = made.draw(epoch)
        for side in (0, 1):
            sampled, own = ids(drawn, side), ids(prepared, side)
            assert tokenizer.decode(sampled) == tokenizer.decode(own)
            changed = sum(a != b for a, b in zip(sampled, own, strict=True))
            assert changed > len(own) / 4, (epoch, side)
            assert sum(map(len, sampled)) > sum(map(len, own))  # merges left out
    assert tokenizer.case_markup == ("all" if kind == "case markup" else "")


@pytest.mark.parametrize("kind", ["plain", "case markup"])
def test_at_alpha_zero_the_pieces_are_the_prepared_ones_exactly(kind, tiny_data, markup_data):
    made = sampling(tiny_data if kind == "plain" else markup_data, alpha=0.0, sides="both")
    drawn = made.draw(0)
    for side in (0, 1):
        assert ids(drawn, side) == ids(made.data, side)


def test_with_sides_source_the_targets_are_the_prepared_ones(tiny_data):
    made = sampling(tiny_data, alpha=0.3)
    drawn = made.epoch(0)
    assert ids(drawn, 1) == ids(made.data, 1)
    assert drawn.tgt_ids is made.data.tgt_ids  # not even copied
    assert ids(drawn, 0) != ids(made.data, 0)
    assert made.state_settings() == {"subword_sampling": 0.3}
    both = sampling(tiny_data, alpha=0.3, sides="both")
    assert both.state_settings() == {"subword_sampling": 0.3, "subword_sides": "both"}
    assert ids(both.epoch(0), 0) == ids(drawn, 0)  # the same sources either way


def test_batches_follow_the_sampled_lengths_and_stay_in_budget(tiny_data):
    made = sampling(tiny_data, alpha=0.3, sides="both")
    prepared = made.data
    sampler = TokenBatchSampler(
        prepared.src_lengths, prepared.tgt_lengths, 200, seed=1, pad_to=8, epoch_lengths=made
    )
    for epoch in range(2):
        data = made.epoch(epoch)
        seen = []
        for indices in sampler:
            batch = data.collate(indices, 8)
            assert batch.src.numel() <= 200 and batch.tgt_in.numel() <= 200
            want = [data.pair(int(i))[0].tolist() for i in indices]
            assert [row[: len(w)].tolist() for row, w in zip(batch.src, want, strict=True)] == want
            seen.extend(indices.tolist())
        assert sorted(seen) == list(range(len(data)))  # each pair once
    assert sampler.state_dict()["subword_sampling"] == 0.3


def test_a_line_too_long_once_sampled_keeps_its_prepared_pieces(tiny_data):
    prepared = ParallelData(tiny_data, "train")
    budget = int(prepared.src_lengths.max()) + 1  # the longest just fits (eos included)
    made = sampling(tiny_data, alpha=0.5, max_tokens=budget, pad_to=1)
    drawn = ids(made.draw(0), 0)
    lines = DataDir.open(tiny_data).lines("train", "src")
    raw = made.tokenizer.sample(lines, 0.5, chunk_seed(1, 0, 0, 0))  # one chunk: the same draw
    too_long = [len(r) + 1 > budget for r in raw]
    assert 0 < sum(too_long) < len(raw)
    for i, (line, long) in enumerate(zip(raw, too_long, strict=True)):
        assert drawn[i] == (prepared.pair(i)[0].tolist() if long else line), i


def test_resuming_with_another_alpha_or_none_is_refused(tiny_data):
    made = sampling(tiny_data, alpha=0.1)
    lengths = (made.data.src_lengths, made.data.tgt_lengths)
    options = dict(max_tokens=200, seed=1, pad_to=8)
    sampled = TokenBatchSampler(*lengths, **options, epoch_lengths=made)
    without = TokenBatchSampler(*lengths, **options)
    with pytest.raises(ValueError, match=r"one of --set subword_sampling=0\.1, not --set subword_"):
        without.load_state_dict(sampled.state_dict())
    other = TokenBatchSampler(*lengths, **options, epoch_lengths=sampling(tiny_data, alpha=0.2))
    with pytest.raises(ValueError, match=r"resume with --set subword_sampling=0\.2$"):
        sampled.load_state_dict(other.state_dict())
    both = sampling(tiny_data, alpha=0.1, sides="both")
    with pytest.raises(ValueError, match=r"0\.1 subword_sampling_sides=both, not --set"):
        sampled.load_state_dict(
            TokenBatchSampler(*lengths, **options, epoch_lengths=both).state_dict()
        )
    assert "subword_sampling" not in without.state_dict()  # state.json as before


def test_chunks_are_drawn_under_their_own_seeds(tiny_data, monkeypatch):
    """A split longer than a chunk is drawn chunk by chunk; the draw is the same whatever
    else ran before, chunk for chunk."""
    monkeypatch.setattr("aiayn.data.batches.subword_sampling.CHUNK_LINES", 100)
    made = sampling(tiny_data, alpha=0.3)
    drawn = ids(made.draw(0), 0)
    lines = DataDir.open(tiny_data).lines("train", "src")
    second = made.tokenizer.sample(lines[100:200], 0.3, chunk_seed(1, 0, 0, 1))
    assert drawn[100:200] == second
    assert len(lines) > 2 * 100 and CHUNK_LINES >= 10_000


def test_dropout_merges_best_first_and_drops_them_all_at_alpha_near_one():
    scores = {"ab": -1.0, "bc": 0.0}  # bc merges before ab
    rng = np.random.default_rng(0)
    assert dropout_merges(list("abc"), scores, 0.0, rng) == ["a", "bc"]
    assert dropout_merges(list("abab"), scores, 0.0, rng) == ["ab", "ab"]  # leftmost first
    assert dropout_merges(list("abc"), scores, 1 - 1e-12, rng) == ["a", "b", "c"]
    drawn = {tuple(dropout_merges(list("abc"), scores, 0.5, rng)) for _ in range(50)}
    assert drawn == {("a", "bc"), ("ab", "c"), ("a", "b", "c")}  # bc dropped, ab may merge


def test_a_unigram_vocabulary_is_refused_with_what_to_do(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("\n".join(s for s, _ in synthetic_pairs(200)), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(tmp_path / "spm"),
        model_type="unigram",
        vocab_size=60,
        pad_id=0,
        bos_id=1,
        eos_id=2,
        unk_id=3,
        minloglevel=2,
    )
    tokenizer = Tokenizer(tmp_path / "spm.model")
    with pytest.raises(DataError, match=r"not a BPE vocabulary.*set subword_sampling=0"):
        tokenizer.sample(["The dog sees."], 0.1, 1)
