"""Case augmentation (case_augment.py): a seeded fraction of pairs cased on both sides each
epoch, batched by their new lengths; with none, the batches of before, bit for bit."""

import hashlib

import numpy as np
import pytest

from aiayn.data.batches.case_augment import CaseAugment, choose
from aiayn.data.batches.dataset import ParallelData, collate_pairs
from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.casing import title_case, upper_case
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer


def augment(
    data, fraction, seed=1, max_tokens=4096, sides="both", mode="replace"
) -> tuple[CaseAugment, ParallelData]:
    files = DataDir.open(data)
    pairs = ParallelData(files, "train")
    texts = (files.text("train", "src"), files.text("train", "tgt"))
    lengths = (pairs.src_lengths, pairs.tgt_lengths)
    tokenizer = Tokenizer(files.tokenizer)
    made = CaseAugment(fraction, seed, texts, tokenizer, lengths, max_tokens, 8, sides, mode)
    return made, pairs


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.25, 1.0])
def test_the_fraction_is_exact_and_split_half_upper_half_title(fraction):
    chosen, upper = choose(1001, fraction, seed=3, epoch=2)
    assert len(chosen) == round(fraction * 1001) == len(np.unique(chosen))
    assert np.all(np.diff(chosen) > 0) and chosen.max(initial=0) < 1001
    assert upper.sum() == (len(chosen) + 1) // 2


def test_the_choice_is_a_function_of_seed_and_epoch():
    same = [choose(500, 0.2, seed=1, epoch=4) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*same, strict=True))
    for other in (choose(500, 0.2, seed=1, epoch=5), choose(500, 0.2, seed=2, epoch=4)):
        assert not np.array_equal(other[0], same[0][0])


def test_chosen_pairs_are_cased_on_both_sides_and_re_encoded(tiny_data):
    made, pairs = augment(tiny_data, 0.5)
    files, tokenizer = DataDir.open(tiny_data), Tokenizer(DataDir.open(tiny_data).tokenizer)
    src_text, tgt_text = files.lines("train", "src"), files.lines("train", "tgt")
    cased = made.epoch(0)
    assert len(cased.cased) == round(0.5 * len(pairs))
    kinds = []
    for i, (src, tgt) in cased.cased.items():
        ids = [src.tolist(), tgt.tolist()]
        up = tokenizer.encode([upper_case(src_text[i]), upper_case(tgt_text[i])])
        title = tokenizer.encode([title_case(src_text[i]), title_case(tgt_text[i])])
        assert ids in (up, title), i  # both sides the same way
        kinds.append(ids == up)
        assert (cased.src_lengths[i], cased.tgt_lengths[i]) == (len(src), len(tgt))
    assert sum(kinds) == (len(kinds) + 1) // 2
    untouched = np.setdiff1d(np.arange(len(pairs)), list(cased.cased))
    assert np.array_equal(cased.src_lengths[untouched], pairs.src_lengths[untouched])


def test_with_sides_source_only_the_source_is_cased(tiny_data):
    made, pairs = augment(tiny_data, 0.5, sides="source")
    both, _ = augment(tiny_data, 0.5)
    files = DataDir.open(tiny_data)
    tokenizer, src_text = Tokenizer(files.tokenizer), files.lines("train", "src")
    cased, cased_both = made.epoch(0), both.epoch(0)
    assert cased.cased.keys() == cased_both.cased.keys()  # the same draw
    changed = 0
    for i, (src, tgt) in cased.cased.items():
        assert np.array_equal(src, cased_both.cased[i][0])  # cased as with both sides
        changed += src.tolist() != tokenizer.encode([src_text[i]])[0]
        # the target as prepare encoded it: the split's own ids, bit for bit
        assert tgt is None, i
        batch = pairs.collate(np.array([i]), 1, cased.replaced)
        assert batch.tgt_out[0, :-1].tolist() == pairs.pair(i)[1].tolist(), i
        assert batch.src[0, :-1].tolist() == src.tolist(), i
    assert changed > len(cased.cased) / 2  # a line already in title case may stay as it was
    assert np.array_equal(cased.tgt_lengths, pairs.tgt_lengths)


def test_batches_follow_the_cased_lengths_and_stay_in_budget(tiny_data):
    made, pairs = augment(tiny_data, 0.5)
    sampler = TokenBatchSampler(
        pairs.src_lengths, pairs.tgt_lengths, 200, seed=1, pad_to=8, epoch_lengths=made
    )
    for epoch in range(2):
        cased = made.epoch(epoch)
        seen = []
        for indices in sampler:
            batch = pairs.collate(indices, 8, cased.replaced)
            assert batch.src.numel() <= 200 and batch.tgt_in.numel() <= 200
            seen.extend(indices.tolist())
        assert sorted(seen) == list(range(len(pairs)))  # each pair once
    assert sampler.state_dict()["case_augment"] == 0.5


def test_a_pair_too_long_once_cased_keeps_its_ordinary_form(tiny_data):
    files = DataDir.open(tiny_data)
    pairs = ParallelData(files, "train")
    longest = int(max(pairs.src_lengths.max(), pairs.tgt_lengths.max())) + 1
    made, _ = augment(tiny_data, 1.0, max_tokens=-(-longest // 8) * 8)
    cased = made.epoch(0)
    grew = (cased.src_lengths > pairs.src_lengths) | (cased.tgt_lengths > pairs.tgt_lengths)
    assert 0 < len(cased.cased) < len(pairs)
    for i in cased.cased:
        assert max(cased.src_lengths[i], cased.tgt_lengths[i]) + 1 <= -(-longest // 8) * 8
    assert grew.sum() <= len(cased.cased)


def test_resuming_with_another_fraction_is_refused(tiny_data):
    made, pairs = augment(tiny_data, 0.2)
    options = dict(max_tokens=200, seed=1, pad_to=8)
    lengths = (pairs.src_lengths, pairs.tgt_lengths)
    with_cases = TokenBatchSampler(*lengths, **options, epoch_lengths=made)
    without = TokenBatchSampler(*lengths, **options)
    with pytest.raises(ValueError, match=r"one of --set case_augment=0\.2, not --set case_aug"):
        without.load_state_dict(with_cases.state_dict())
    assert "case_augment" not in without.state_dict()  # state.json as before
    source_only = TokenBatchSampler(
        *lengths, **options, epoch_lengths=augment(tiny_data, 0.2, sides="source")[0]
    )
    with pytest.raises(ValueError, match=r"case_augment=0\.2 case_augment_sides=source, not --set"):
        with_cases.load_state_dict(source_only.state_dict())
    assert "case_sides" not in with_cases.state_dict()  # both sides: state.json as before
    added = TokenBatchSampler(
        *lengths, **options, epoch_lengths=augment(tiny_data, 0.2, mode="add")[0]
    )
    with pytest.raises(ValueError, match=r"case_augment=0\.2 case_augment_mode=add, not --set"):
        with_cases.load_state_dict(added.state_dict())
    assert "case_mode" not in with_cases.state_dict()  # replace: state.json as before


def test_added_copies_keep_the_batches_of_none_and_come_apart(tiny_data):
    made, pairs = augment(tiny_data, 0.5, sides="source", mode="add")
    replacing, _ = augment(tiny_data, 0.5, sides="source")
    options = dict(max_tokens=200, seed=1, pad_to=8)
    lengths = (pairs.src_lengths, pairs.tgt_lengths)
    with_copies = TokenBatchSampler(*lengths, **options, epoch_lengths=made)
    without = TokenBatchSampler(*lengths, **options)
    copies = 0
    for epoch in range(2):
        cased = made.epoch(epoch)
        assert cased.cased.keys() == replacing.epoch(epoch).cased.keys()  # the same draw
        assert cased.replaced is None and cased.copied is cased.cased
        assert np.array_equal(cased.src_lengths, pairs.src_lengths)  # batched as at P = 0
        for indices, plain in zip(with_copies, without, strict=True):
            assert np.array_equal(indices, plain)
            extra = [int(i) for i in indices if int(i) in cased.cased]
            made_copies = pairs.copies(indices, cased.copied)
            assert len(made_copies) == len(extra)
            for i, (src, tgt) in zip(extra, made_copies, strict=True):
                assert np.array_equal(src, cased.cased[i][0])  # the cased source
                assert np.array_equal(tgt, pairs.pair(i)[1])  # the pair's own target
            if made_copies:
                batch = collate_pairs(made_copies, 8)
                assert batch.src.shape[0] == len(extra) and batch.src.shape[1] % 8 == 0
                assert batch.n_tgt_tokens == sum(len(t) + 1 for _, t in made_copies)
            copies += len(extra)
    assert copies == 2 * round(0.5 * len(pairs))  # none too long for this budget
    assert with_copies.state_dict()["case_mode"] == "add"
    assert replacing.epoch(0).copied == {}


# sha256 (first 16 hex digits) of two epochs of collated batches, computed with main's code
# before case augmentation (658d9b1): without it, batches must not change by a bit.
BEFORE = "22660b23f009f1ad"


def test_without_case_augment_the_batches_are_those_of_before():
    rng = np.random.default_rng(5)
    src = [rng.integers(4, 300, n).tolist() for n in rng.integers(1, 60, 600)]
    tgt = [rng.integers(4, 300, n).tolist() for n in rng.integers(1, 60, 600)]
    pairs = ParallelData.encoded(src, tgt)
    sampler = TokenBatchSampler(pairs.src_lengths, pairs.tgt_lengths, 700, seed=4, pad_to=8)
    h = hashlib.sha256()
    for _ in range(2):
        for indices in sampler:
            batch = pairs.collate(indices, 8, None)
            for t in (batch.src, batch.tgt_in, batch.tgt_out):
                h.update(t.numpy().tobytes())
                h.update(str(tuple(t.shape)).encode())
    assert h.hexdigest()[:16] == BEFORE
