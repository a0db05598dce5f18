"""Label-smoothed cross-entropy (section 5.4), with padding carrying no loss and no mass."""

from __future__ import annotations

import torch
from torch import Tensor


def label_smoothed_loss(
    logits: Tensor, target: Tensor, epsilon: float, pad_id: int
) -> tuple[Tensor, Tensor]:
    """Summed loss against q = 1 - eps on the target and eps / (V - 2) on every other token
    except padding (which gets none); padding positions contribute nothing.

    Computed in float32 whatever the logits' precision. (torch's CrossEntropyLoss with both
    label_smoothing and ignore_index once let padding leak into the loss; this is explicit.)

    Args:
        logits: (B, T, V) scores.
        target: (B, T) gold ids, `pad_id` where there is no token.
        epsilon: label smoothing, 0 for plain cross-entropy.

    Returns:
        (smoothed loss, negative log-likelihood), each summed over the real tokens.
    """
    V = logits.shape[-1]
    lprobs = torch.log_softmax(logits.float(), dim=-1)  # (B, T, V)
    real = target != pad_id  # (B, T)
    gold = lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    nll = -gold
    # -sum of log-probabilities over tokens other than the target and padding
    others = -(lprobs.sum(dim=-1) - gold - lprobs[..., pad_id])  # (B, T)
    loss = (1.0 - epsilon) * nll + epsilon / (V - 2) * others
    return loss[real].sum(), nll[real].sum()
