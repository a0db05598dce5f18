"""The learning rate of section 5.3: linear warmup, then decay with the inverse square root."""

from __future__ import annotations


def learning_rate(step: int, d_model: int, warmup: int = 4000, scale: float = 1.0) -> float:
    """lrate = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), for step >= 1.

    It rises linearly for `warmup` steps, peaks at scale * (d_model * warmup)^-0.5, then falls.
    """
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
