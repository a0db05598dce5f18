"""Multilingual batches: directions drawn with temperature sampling into token-budget
batches, resumable and sharded; bilingual batches exactly as before."""

import hashlib

import numpy as np
import pytest

from aiayn.data.batches.directions import (
    TemperatureBatchSampler,
    batch_sampler,
    draw_epoch,
    epoch_counts,
    temperature_shares,
)
from aiayn.data.batches.sampler import TokenBatchSampler


def multilingual(sizes=(6000, 600, 60), seed=0):
    """Lengths and directions of pairs of len(sizes) directions of very different sizes."""
    rng = np.random.default_rng(seed)
    directions = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(directions)
    src = rng.integers(1, 60, len(directions))
    tgt = np.clip(src + rng.integers(-8, 8, len(directions)), 1, 70)
    return src, tgt, directions


def test_shares_follow_the_temperature():
    n = np.array([10_000, 1_000, 100, 0])
    assert np.allclose(temperature_shares(n, 1.0), [10 / 11.1, 1 / 11.1, 0.1 / 11.1, 0])
    # 10000^0.2 : 1000^0.2 : 100^0.2 = 6.310 : 3.981 : 2.512
    assert np.allclose(temperature_shares(n, 5.0), [0.4928, 0.3109, 0.1962, 0], atol=1e-4)
    assert np.allclose(temperature_shares(n, 1e6)[:3], 1 / 3, atol=1e-4)  # toward uniform
    counts = epoch_counts(temperature_shares(n, 5.0), 11_100)
    assert counts.sum() == 11_100 and np.abs(counts - 11_100 * temperature_shares(n, 5.0)).max() < 1


@pytest.mark.parametrize("temperature", [1.0, 5.0])
def test_direction_shares_of_the_batches_approach_the_temperature_distribution(temperature):
    src, tgt, directions = multilingual()
    sampler = TemperatureBatchSampler(src, tgt, directions, 3, 600, temperature, seed=1)
    wanted = temperature_shares(np.bincount(directions), temperature)
    seen = np.zeros(3)
    errors = []
    for _ in range(4):  # epochs
        for batch in sampler:
            seen += np.bincount(directions[batch], minlength=3)
            errors.append(np.abs(seen / seen.sum() - wanted).max())
    assert errors[-1] < 1e-3  # whole epochs: the shares themselves
    assert max(errors[len(errors) // 2 :]) < 0.02  # already close after a few batches
    # and not the data's own proportions (6000 : 600 : 60), unless T = 1
    proportional = np.bincount(directions) / len(directions)
    assert (np.abs(seen / seen.sum() - proportional).max() < 1e-3) == (temperature == 1.0)


def test_each_epoch_draws_whole_passes_then_fresh_pairs_within_the_budget():
    src, tgt, directions = multilingual()
    sampler = TemperatureBatchSampler(src, tgt, directions, 3, 600, 5.0, seed=1)
    epochs = [np.concatenate(list(sampler)) for _ in range(2)]
    small = np.flatnonzero(directions == 2)  # 60 pairs, upsampled: every one at least once
    big = np.flatnonzero(directions == 0)  # 6000 pairs, subsampled: other ones next epoch
    for drawn in epochs:
        assert np.isin(small, drawn).all()
        assert np.bincount(directions[drawn], minlength=3).tolist() == sampler.wanted.tolist()
    first, second = (set(np.intersect1d(e, big).tolist()) for e in epochs)
    assert first != second
    for batch in sampler.epoch_batches(5):
        assert len(batch) * max(src[batch].max() + 1, tgt[batch].max() + 1) <= 600


def test_draw_epoch_holds_exactly_the_wanted_pairs_of_each_direction():
    directions = np.array([0, 1, 0, 2, 1, 0, 0])
    rng = np.random.default_rng(3)
    drawn = draw_epoch(directions, np.array([2, 5, 0]), rng)  # 4 pairs -> 2; 2 pairs -> 5
    assert np.bincount(directions[drawn], minlength=3).tolist() == [2, 5, 0]
    assert len(set(drawn[directions[drawn] == 0].tolist())) == 2  # without replacement
    assert set(drawn[directions[drawn] == 1].tolist()) == {1, 4}  # both passes, then one more


def test_a_restored_sampler_continues_with_the_same_batches_and_refuses_another_temperature():
    src, tgt, directions = multilingual()
    make = lambda t=5.0: TemperatureBatchSampler(src, tgt, directions, 3, 600, t, seed=4)  # noqa: E731
    full = make()
    expected = [b.tolist() for _ in range(2) for b in full]
    part = make()
    stream = iter(part)
    taken = [next(stream).tolist() for _ in range(7)]
    state = part.state_dict()
    assert state["temperature"] == 5.0
    resumed = make()
    resumed.load_state_dict(state)
    rest = [b.tolist() for b in resumed] + [b.tolist() for b in resumed]
    assert taken + rest == expected
    with pytest.raises(ValueError, match=r"resume with --set sampling_temperature=5\.0"):
        make(2.0).load_state_dict(state)
    with pytest.raises(ValueError, match="not bilingual data"):  # multilingual -> bilingual
        TokenBatchSampler(src, tgt, 600, seed=4).load_state_dict(state)


def test_ranks_share_an_epoch_and_accumulation_divides_it():
    src, tgt, directions = multilingual()
    ranks = [
        TemperatureBatchSampler(
            src, tgt, directions, 3, 600, seed=2, rank=r, world_size=2, multiple_of=6
        )
        for r in range(2)
    ]
    mine = [list(s) for s in ranks]
    assert len(mine[0]) == len(mine[1]) and (len(mine[0]) * 2) % 6 == 0
    together = np.sort(np.concatenate(mine[0] + mine[1]))
    assert np.array_equal(together, np.sort(np.concatenate(ranks[0].epoch_batches(0))))


# sha256 (first 16 hex digits) of two epochs of bilingual batches, computed with the sampler
# as it was before multilingual data (main at e9f0b49): bilingual batches must not change.
BEFORE = [
    (dict(max_tokens=512, seed=1), "845743c13665d510"),
    (
        dict(max_tokens=1000, seed=3, world_size=2, rank=1, multiple_of=4, pad_to=8),
        "872f6f52e0ffdaff",
    ),
    (dict(max_tokens=700, shuffle=False), "60bfa13692fb0f1e"),
]


@pytest.mark.parametrize(("options", "digest"), BEFORE)
def test_bilingual_batches_are_exactly_those_of_before(options, digest):
    rng = np.random.default_rng(0)
    src = rng.integers(1, 80, 1000)
    tgt = np.clip(src + rng.integers(-10, 10, 1000), 1, 90)
    options = dict(options)
    sampler = batch_sampler(src, tgt, None, 0, options.pop("max_tokens"), 5.0, **options)
    assert type(sampler) is TokenBatchSampler
    h = hashlib.sha256()
    for _ in range(2):
        for batch in sampler:
            h.update(np.asarray(batch, np.int64).tobytes())
            h.update(b"|")
    assert h.hexdigest()[:16] == digest
    assert "temperature" not in sampler.state_dict()  # state.json as before
