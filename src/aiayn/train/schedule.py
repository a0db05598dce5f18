"""The optimizer and learning rate of section 5.3: Adam; linear warmup, then decay with the
inverse square root."""

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


def learning_rate(step: int, d_model: int, warmup: int = 4000, scale: float = 1.0) -> float:
    """lrate = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), for step >= 1.

    It rises linearly for `warmup` steps, peaks at scale * (d_model * warmup)^-0.5, then falls.
    """
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
