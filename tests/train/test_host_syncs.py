"""An update reads its losses and its gradient norm on the host once, not after every batch:
on a GPU each read waits for the device (`train.step_stats.UpdateSums`)."""

from __future__ import annotations

import math

import torch
from torch.profiler import ProfilerActivity, profile

from aiayn.train.step_stats import StopFlags, UpdateSums
from tests.train.test_trainer import make_trainer


def reads(trainer, batches) -> int:
    """Host reads of a tensor's value (`aten::_local_scalar_dense`) during one update."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        trainer.update(batches, StopFlags())
    return sum(e.count for e in prof.key_averages() if e.key == "aten::_local_scalar_dense")


def test_the_losses_and_norm_are_read_once_per_update_not_per_batch(
    tiny_data, tmp_path, monkeypatch
):
    now = make_trainer(tiny_data, tmp_path / "now", "fp32")
    monkeypatch.setenv("AIAYN_SYNC_EACH_BATCH", "1")  # the loop as it was: a read per batch
    before = make_trainer(tiny_data, tmp_path / "before", "fp32")
    batch = next(now.batches())[0]
    one, two = reads(now, [batch]), reads(now, [batch, batch])
    one_before, two_before = reads(before, [batch]), reads(before, [batch, batch])
    assert one_before - one == 3  # each batch's loss and nll, and the norm's check
    assert (two_before - one_before) - (two - one) == 2  # a batch more: two reads more before
    assert now.state.step == before.state.step == 2


def test_update_sums_are_the_host_sums_bit_for_bit_with_the_flags():
    losses = torch.tensor([1.1, 2.3, 0.7]), torch.tensor([0.9, 2.0, 0.5])  # float32
    sums = UpdateSums()
    for loss, nll in zip(*losses, strict=True):
        sums.add(loss, nll)
    local = sums.local(12.0, StopFlags(save_due=True))
    assert local.shape == (7,) and local.dtype == torch.float64
    stats, bad_norm = sums.read(local, torch.tensor(3.5))
    assert stats.loss_sum == 0.0 + float(losses[0][0]) + float(losses[0][1]) + float(losses[0][2])
    assert stats.nll_sum == sum(float(x) for x in losses[1])
    assert (stats.tokens, stats.non_finite, bad_norm) == (12.0, 0, False)
    assert stats.flags == StopFlags(save_due=True)


def test_a_non_finite_loss_is_counted_and_a_non_finite_norm_flagged():
    sums = UpdateSums()
    sums.add(torch.tensor(math.inf), torch.tensor(1.0))
    stats, bad_norm = sums.read(sums.local(3.0, StopFlags()), torch.tensor(2.0))
    assert stats.non_finite == 1 and math.isinf(stats.loss_sum) and not bad_norm
    finite = UpdateSums()
    finite.add(torch.tensor(1.0), torch.tensor(1.0))
    stats, bad_norm = finite.read(finite.local(3.0, StopFlags()), torch.tensor(math.nan))
    assert stats.non_finite == 0 and bad_norm
