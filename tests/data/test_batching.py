"""Token-budget batches: within budget, each pair once per epoch, sharded, resumable."""

import itertools

import numpy as np
import pytest

from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.sources import DataError


def lengths(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(1, 80, n)
    tgt = np.clip(src + rng.integers(-10, 10, n), 1, 90)
    return src, tgt


def padded_cost(batch, src, tgt):
    """Sentences x longest (+1 for eos/bos), for each side: what the budget bounds."""
    return len(batch) * (src[batch].max() + 1), len(batch) * (tgt[batch].max() + 1)


@pytest.mark.parametrize("max_tokens", [100, 512, 3000])
def test_no_batch_exceeds_the_budget_and_each_pair_comes_once(max_tokens):
    src, tgt = lengths()
    sampler = TokenBatchSampler(src, tgt, max_tokens, seed=1)
    for _ in range(2):  # two epochs
        batches = list(sampler)
        for b in batches:
            assert max(padded_cost(b, src, tgt)) <= max_tokens
        seen = np.concatenate(batches)
        assert len(seen) == len(src) and set(seen.tolist()) == set(range(len(src)))
    assert sampler.epoch == 2


def test_batches_are_full_and_length_bucketed():
    src, tgt = lengths()
    batches = TokenBatchSampler(src, tgt, 2000, seed=1).epoch_batches(0)
    real = sum(int(tgt[b].sum() + len(b)) for b in batches)
    padded = sum(padded_cost(b, src, tgt)[1] for b in batches)
    assert real / padded > 0.8  # sorted by length: little padding
    assert len(batches) < 1.3 * (src.sum() + len(src)) / 2000


def test_each_epoch_is_reshuffled_and_reproducible():
    src, tgt = lengths()
    a = TokenBatchSampler(src, tgt, 1000, seed=1)
    b = TokenBatchSampler(src, tgt, 1000, seed=1)
    first, second = a.epoch_batches(0), a.epoch_batches(1)
    assert [x.tolist() for x in first] != [x.tolist() for x in second]
    assert [x.tolist() for x in first] == [x.tolist() for x in b.epoch_batches(0)]
    other_seed = TokenBatchSampler(src, tgt, 1000, seed=2).epoch_batches(0)
    assert [x.tolist() for x in first] != [x.tolist() for x in other_seed]


def test_unshuffled_batches_follow_length_order():
    src, tgt = lengths()
    batches = TokenBatchSampler(src, tgt, 1000, shuffle=False).epoch_batches(0)
    firsts = [src[b].min() for b in batches]
    assert firsts == sorted(firsts)


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_ranks_get_disjoint_equal_shards_that_cover_the_data(world_size):
    src, tgt = lengths(n=997)
    samplers = [
        TokenBatchSampler(src, tgt, 700, seed=5, rank=r, world_size=world_size)
        for r in range(world_size)
    ]
    shards = [list(s) for s in samplers]
    assert len({len(shard) for shard in shards}) == 1  # the same number of steps everywhere
    indices = [np.concatenate(shard) for shard in shards]
    for a, b in itertools.combinations(indices, 2):
        assert not set(a.tolist()) & set(b.tolist())
    assert sorted(np.concatenate(indices).tolist()) == list(range(997))
    for shard in shards:
        assert all(max(padded_cost(b, src, tgt)) <= 700 for b in shard)


def test_restoring_the_state_continues_with_exactly_the_next_batch():
    src, tgt = lengths()
    reference = TokenBatchSampler(src, tgt, 800, seed=9, rank=1, world_size=2)
    expected = list(itertools.chain(reference, reference))  # two epochs, uninterrupted
    sampler = TokenBatchSampler(src, tgt, 800, seed=9, rank=1, world_size=2)
    consumed = list(itertools.islice(iter(sampler), 7))
    state = sampler.state_dict()
    assert state == {"epoch": 0, "position": 7, "seed": 9}
    restored = TokenBatchSampler(src, tgt, 800, seed=9, rank=1, world_size=2)
    restored.load_state_dict(state)
    rest = list(itertools.chain(restored, restored))
    assert len(consumed) + len(rest) == len(expected)
    for got, want in zip(consumed + rest, expected, strict=True):
        assert got.tolist() == want.tolist()


def test_a_sentence_longer_than_the_budget_is_a_clear_error():
    with pytest.raises(DataError, match=r"longer than the token budget 50.*raise --max-tokens"):
        TokenBatchSampler(np.array([10, 60]), np.array([10, 10]), 50)
    sampler = TokenBatchSampler(np.array([10]), np.array([10]), 50, seed=3)
    with pytest.raises(ValueError, match="seed 4, this sampler 3"):
        sampler.load_state_dict({"epoch": 0, "position": 0, "seed": 4})
    with pytest.raises(ValueError, match="position 99 is outside epoch 0's 1 batches"):
        sampler.load_state_dict({"epoch": 0, "position": 99, "seed": 3})


def test_batches_that_ranks_cannot_share_fail_at_construction():
    with pytest.raises(DataError, match="cannot share 3 batches across 2"):
        TokenBatchSampler(np.array([40, 40, 40]), np.array([40, 40, 40]), 50, world_size=2)


def test_pad_to_rounds_the_costs_and_keeps_the_budget():
    rng = np.random.default_rng(0)
    src = rng.integers(1, 60, 3000)
    tgt = np.clip(src + rng.integers(-4, 5, 3000), 1, None)  # a translation's length follows
    plain = TokenBatchSampler(src, tgt, 1000, seed=1)
    padded = TokenBatchSampler(src, tgt, 1000, seed=1, pad_to=8)
    assert (padded.src_cost % 8 == 0).all() and (padded.tgt_cost % 8 == 0).all()
    assert (padded.src_cost >= plain.src_cost).all() and (
        padded.src_cost - plain.src_cost < 8
    ).all()
    shapes = set()
    for batch in padded.epoch_batches(0):
        longest = max(padded.src_cost[batch].max(), padded.tgt_cost[batch].max())
        assert len(batch) * longest <= 1000
        shapes.add((len(batch), padded.src_cost[batch].max(), padded.tgt_cost[batch].max()))
    plain_shapes = {
        (len(b), plain.src_cost[b].max(), plain.tgt_cost[b].max()) for b in plain.epoch_batches(0)
    }
    assert len(shapes) < len(plain_shapes) / 2  # the point of it: far fewer distinct shapes
    with pytest.raises(ValueError, match="pad_to"):
        TokenBatchSampler(src, tgt, 1000, pad_to=0)
