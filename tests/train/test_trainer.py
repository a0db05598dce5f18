"""The Trainer itself: its bf16 path against an fp32 reference, and a run that must learn."""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from aiayn import layout
from aiayn.cli import main
from aiayn.config import RECIPES, TrainConfig, preset
from aiayn.data.data_dir import DataDir
from aiayn.train.distributed import Distributed
from aiayn.train.metrics import read_metrics
from aiayn.train.run_dir import create_run
from aiayn.train.step_stats import StopFlags
from aiayn.train.trainer import Trainer
from tests.conftest import TINY_RUN


def make_trainer(tiny_data, root, precision: str) -> Trainer:
    data = DataDir.open(tiny_data)
    model_cfg = preset("tiny", vocab_size=data.meta.vocab_size, dropout=0.0)
    train_cfg = TrainConfig(max_tokens=256, precision=precision, seed=3)
    run = create_run(root, data, model_cfg, train_cfg)
    return Trainer(model_cfg, train_cfg, run, Distributed.from_env("cpu"), progress=False)


def reference_gradients(trainer: Trainer, batch) -> dict[str, torch.Tensor]:
    """The gradient of the same loss by plain autograd in fp32: the full (B, T, V) logits,
    log-softmax, the smoothed target distribution written out, padding masked."""
    model, eps, pad = trainer.model, trainer.cfg.label_smoothing, trainer.model.cfg.pad_id
    model.zero_grad(set_to_none=True)
    logp = F.log_softmax(model(batch.src, batch.tgt_in).float(), dim=-1)  # (B, T, V)
    V = logp.shape[-1]
    q = torch.full_like(logp, eps / (V - 2))
    q[..., pad] = 0.0
    q.scatter_(-1, batch.tgt_out[..., None], 1.0 - eps)
    real = batch.tgt_out != pad  # (B, T)
    loss = -(q * logp).sum(-1)[real].sum() / real.sum()
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}


def trainer_gradients(trainer: Trainer, batch) -> dict[str, torch.Tensor]:
    """What one update of the Trainer computes: its precision, its loss, its backward."""
    trainer.model.zero_grad(set_to_none=True)
    trainer.net.train()
    trainer._forward_backward(batch, float(batch.n_tgt_tokens), torch.device("cpu"))
    return {n: p.grad.clone() for n, p in trainer.model.named_parameters()}


def relative_error(a: dict, b: dict) -> float:
    flat_a = torch.cat([a[n].flatten() for n in a])
    flat_b = torch.cat([b[n].flatten() for n in a])
    return float((flat_a - flat_b).norm() / flat_b.norm())


@pytest.mark.parametrize(("precision", "tolerance"), [("fp32", 1e-5), ("bf16", 3e-2)])
def test_the_trainers_gradient_equals_an_fp32_autograd_reference(
    tiny_data, tmp_path, precision, tolerance
):
    """fp32: the hand-written loss backward and the real-positions-only projection are exact.
    bf16 autocast: within 3% (bf16 keeps 8 bits of mantissa; the error measured is ~0.5%)."""
    trainer = make_trainer(tiny_data, tmp_path / precision, precision)
    batch = next(trainer.batches())[0]
    assert (batch.tgt_out == 0).any()  # padding is present, so its masking is tested
    ours = trainer_gradients(trainer, batch)
    reference = reference_gradients(trainer, batch)
    error = relative_error(ours, reference)
    assert error < tolerance, f"{precision}: relative gradient error {error:.2e}"
    if precision == "bf16":
        assert error > 1e-6  # it did run in bf16: the result is not bitwise the fp32 one


def test_an_update_sums_the_stats_of_all_processes_in_one_all_reduce(
    tiny_data, tmp_path, monkeypatch
):
    """Two processes with the same batch, simulated by an all-reduce that doubles what it is
    given: the loss per token is one process's, the tokens and flags are summed, and the
    statistics and flags travel together (one all-reduce besides the tokens' own)."""
    trainer = make_trainer(tiny_data, tmp_path / "run", "fp32")
    batch = next(trainer.batches())[0]
    one = trainer.update([batch], StopFlags(save_due=True))
    assert one.flags == StopFlags(save_due=True) and one.tokens == batch.n_tgt_tokens
    assert math.isfinite(one.loss) and trainer.state.step == 1
    reduced: list[torch.Tensor] = []

    def twice(tensor: torch.Tensor) -> None:
        reduced.append(tensor.clone())
        tensor.mul_(2)

    monkeypatch.setattr(torch.distributed, "all_reduce", twice)
    trainer.dist = Distributed(rank=0, world_size=2)  # no DDP wrapper: one batch needs no no_sync
    twins = trainer.update([batch], StopFlags(signal=True))
    assert [t.numel() for t in reduced] == [1, 7]  # the tokens first: the backward divides by them
    assert twins.tokens == 2 * batch.n_tgt_tokens and twins.non_finite == 0
    assert twins.flags == StopFlags(signal=True)
    assert trainer.state.tokens_seen == 3 * batch.n_tgt_tokens


def test_a_skipped_update_reports_no_loss_and_keeps_its_flags(tiny_data, tmp_path):
    trainer = make_trainer(tiny_data, tmp_path / "run", "fp32")
    with torch.no_grad():
        next(trainer.model.parameters()).fill_(math.nan)  # every loss is now nan
    stats = trainer.update([next(trainer.batches())[0]], StopFlags(out_of_time=True))
    assert math.isnan(stats.loss) and stats.non_finite == 1
    assert stats.flags == StopFlags(out_of_time=True)  # the loop must still stop
    assert (trainer.state.step, trainer.state.bad_steps_in_a_row) == (0, 1)


def test_batches_are_padded_to_a_multiple_of_pad_to(tiny_data, tmp_path):
    trainer = make_trainer(tiny_data, tmp_path / "run", "fp32")
    epoch = [trainer.train_data.collate(i, trainer.cfg.pad_to) for i in trainer.sampler]
    lengths = {n for b in epoch for n in (b.src.shape[1], b.tgt_in.shape[1])}
    assert all(n % trainer.cfg.pad_to == 0 for n in lengths)
    for batch in epoch:  # the padded batches keep within the token budget
        assert batch.src.numel() <= trainer.cfg.max_tokens
        assert batch.tgt_in.numel() <= trainer.cfg.max_tokens


def test_a_trainer_run_reaches_a_stated_validation_loss(tiny_data, tmp_path):
    """The synthetic word-for-word corpus is learnable: 300 updates of the tiny model take the
    validation loss (label-smoothed, per token) from ln(64) = 4.2 to below 2.0 (1.56-1.67 measured
    over seeds 1-4; a broken gradient, schedule or batching stays above 3). lr_scale=2 was tried
    and is unstable here: one seed in three stalled at 3.5."""
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), *TINY_RUN]
    args += ["--max-steps", "300", "--set", "warmup=40", "lr_scale=1", "dropout=0.0"]
    assert main(args) == 0
    valid = [r for r in read_metrics(out) if r["kind"] == "valid"]
    assert valid and math.isfinite(valid[-1]["loss"])
    assert valid[-1]["loss"] < 2.0, valid[-1]


def test_a_run_closes_with_the_average_of_its_last_checkpoints(tiny_data, tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), *TINY_RUN, "--max-steps", "6"]
    assert main([*args, "--set", "save_every=2", "average_last=3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    averaged = [r for r in read_metrics(out) if r["kind"] == "averaged"]
    assert len(averaged) == 1 and averaged[0]["checkpoints"] == [2, 4, 6]
    assert summary["averaged_bleu"] == averaged[0]["bleu"]
    assert 0 <= summary["close_minutes"] <= summary["minutes"]  # the close: part of the run
    weights = [load_file(str(layout.step_dir(out, s) / "model.safetensors")) for s in (2, 4, 6)]
    mean = load_file(str(out / "checkpoints" / "averaged" / "model.safetensors"))
    for name, value in mean.items():
        expected = sum(w[name].double() for w in weights) / 3
        torch.testing.assert_close(value.double(), expected, rtol=1e-6, atol=1e-7)


def test_the_short_recipe_sets_its_values_and_flags_still_win(tiny_data, tmp_path):
    out = tmp_path / "run"
    args = ["train", "--data", str(tiny_data), "--out", str(out), "--recipe", "short"]
    args += [*TINY_RUN, "--max-steps", "2", "--precision", "fp32"]
    assert main(args) == 0
    saved = json.loads((out / "run.json").read_text())["train"]
    short = RECIPES["short"]
    assert (saved["average_last"], saved["lr_scale"]) == (short.average_last, short.lr_scale)
    assert saved["precision"] == "fp32" and saved["max_steps"] == 2  # the flags override it


def test_average_last_must_fit_the_kept_checkpoints():
    with pytest.raises(ValueError, match=r"average_last=6 .* keep_last=5"):
        TrainConfig(average_last=6)
