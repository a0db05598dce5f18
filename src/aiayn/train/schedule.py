"""The optimizer and learning rate of section 5.3: Adam; linear warmup, then decay with the
inverse square root (or, for fine-tuning, a constant rate after the warmup)."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor

from aiayn.config import TrainConfig


def adam(params: Iterable[Tensor], cfg: TrainConfig) -> torch.optim.Adam:
    """Adam with the run's betas and epsilon; its learning rate is set at every update
    (`learning_rate`), 0 until the first."""
    return torch.optim.Adam(
        params,
        lr=0.0,
        betas=(cfg.adam_beta1, cfg.adam_beta2),
        eps=cfg.adam_eps,
        fused=True,  # one kernel over all parameters, not a loop of small ops per tensor
    )


def scheduled_rate(step: int, d_model: int, cfg: TrainConfig) -> float:
    """The rate of update `step` (from 1) under a run's settings: the paper's schedule, or
    `lr_peak` in place of its peak, decaying with step^-0.5 or constant after the warmup."""
    warmup, scale = cfg.warmup, cfg.lr_scale
    if cfg.lr_schedule == "inverse_sqrt" and not cfg.lr_peak:
        return learning_rate(step, d_model, warmup, scale)
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    peak = scale * (cfg.lr_peak or (d_model * warmup) ** -0.5)
    after = 1.0 if cfg.lr_schedule == "constant" else (warmup / step) ** 0.5
    return peak * min(step / warmup, after)


def learning_rate(step: int, d_model: int, warmup: int = 4000, scale: float = 1.0) -> float:
    """lrate = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), for step >= 1.

    It rises linearly for `warmup` steps, peaks at scale * (d_model * warmup)^-0.5, then falls.
    """
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
