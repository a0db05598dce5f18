"""Label-smoothed cross-entropy (section 5.4), with padding carrying no loss and no mass.

The smoothed target distribution q puts 1 - eps on the gold token and eps / (V - 2) on every
other token except padding, which gets none. The loss is -sum_v q_v log p_v over real
positions. Its gradient with respect to the logits is simply p - q, so a hand-written
backward computes it in one pass over (N, V) instead of the several (N, V) temporaries
(log-probabilities, zero-filled scatter targets) that autograd would make: on a CPU this is a
large share of a small model's step. (torch's CrossEntropyLoss with both label_smoothing and
ignore_index once let padding leak into the loss; here it is explicit and tested.)
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def label_smoothed_loss(
    logits: Tensor, target: Tensor, epsilon: float, pad_id: int
) -> tuple[Tensor, Tensor]:
    """Summed smoothed loss and summed negative log-likelihood over the real target tokens.

    Computed in float32 whatever the logits' precision.

    Args:
        logits: (B, T, V) scores.
        target: (B, T) gold ids, `pad_id` where there is no token.
        epsilon: label smoothing, 0 for plain cross-entropy.

    Returns:
        (smoothed loss, negative log-likelihood), each a scalar summed over real tokens.
    """
    V = logits.shape[-1]
    return _SmoothedCrossEntropy.apply(
        logits.reshape(-1, V), target.reshape(-1), epsilon, pad_id
    )  # (N, V) with N = B*T


CHUNK_ELEMENTS = 1 << 22  # float32 temporaries of at most 16 MB: reused, not page-faulted


def _smoothed_terms(
    gold: Tensor, pad: Tensor, total: Tensor, epsilon: float, V: int
) -> tuple[Tensor, Tensor]:
    """Per-row (smoothed loss, nll) from log p(gold), log p(pad) and the sum of log p over the
    vocabulary: -sum q log p with q = 1 - eps on the gold token, eps / (V - 2) on every other
    token but padding (none there)."""
    others = gold + pad - total  # -(the sum of log p over every token but gold and pad)
    return (1.0 - epsilon) * -gold + epsilon / (V - 2) * others, -gold


def _chunks(n_rows: int, V: int) -> list[slice]:
    step = max(1, CHUNK_ELEMENTS // V)
    return [slice(i, i + step) for i in range(0, n_rows, step)]


class _SmoothedCrossEntropy(torch.autograd.Function):
    """Forward and backward over row chunks, so no (N, V) float32 copy is ever made."""

    @staticmethod
    def forward(ctx, logits: Tensor, target: Tensor, epsilon: float, pad_id: int):
        N, V = logits.shape
        lse = torch.empty(N, device=logits.device)  # (N,) log of the softmax normalizer
        loss = torch.empty(N, device=logits.device)
        nll = torch.empty(N, device=logits.device)
        for rows in _chunks(N, V):
            x = logits[rows].float()  # (n, V)
            lse[rows] = torch.logsumexp(x, dim=-1)
            gold = x.gather(-1, target[rows, None]).squeeze(-1) - lse[rows]  # log p(gold)
            total = x.sum(dim=-1) - V * lse[rows]  # sum of log p over the vocabulary
            pad = x[:, pad_id] - lse[rows]
            loss[rows], nll[rows] = _smoothed_terms(gold, pad, total, epsilon, V)
        real = (target != pad_id).float()  # (N,)
        ctx.save_for_backward(logits, target, lse, real)
        ctx.epsilon, ctx.pad_id = epsilon, pad_id
        return (loss * real).sum(), (nll * real).sum()

    @staticmethod
    def backward(ctx, grad_loss: Tensor, grad_nll: Tensor):
        logits, target, lse, real = ctx.saved_tensors
        eps, pad = ctx.epsilon, ctx.pad_id
        N, V = logits.shape
        smooth = eps / (V - 2)
        gold_q = grad_loss * (1.0 - eps - smooth) + grad_nll
        grad = torch.empty_like(logits)  # (N, V) in the logits' precision
        for rows in _chunks(N, V):
            # d loss / d x = p - q and d nll / d x = p - onehot(gold), weighted:
            g = torch.exp(logits[rows].float() - lse[rows, None])  # (n, V) p
            g.mul_(grad_loss + grad_nll).sub_(grad_loss * smooth)  # q: eps/(V-2) everywhere,
            g[:, pad] += grad_loss * smooth  # but none on padding,
            index = torch.arange(g.shape[0], device=g.device)
            g[index, target[rows]] -= gold_q  # and 1 - eps on the gold token
            g.mul_(real[rows, None])  # padding positions get no gradient
            grad[rows] = g
        return grad, None, None, None


def projected_smoothed_loss(
    states: Tensor, weight: Tensor, target: Tensor, epsilon: float, pad_id: int
) -> tuple[Tensor, Tensor]:
    """The pre-softmax projection and `label_smoothed_loss` in one pass over row chunks.

    Equal to `label_smoothed_loss(states @ weight.T, target, ...)`, but no (N, V) tensor is
    ever made: each chunk of rows is projected, scored and differentiated while it is small
    enough to stay in cache, and the gradients with respect to `states` and `weight` are
    accumulated in the forward pass (backward only scales them). On a 2-core CPU in bf16 the
    (N, V) logits, their float32 copies and their gradient were the largest tensors of a step
    and a fifth of its time. Under autocast the products run in the autocast dtype, the
    softmax in float32, as in the unfused path. The nll is returned without a gradient.

    Args:
        states: (N, D) decoder outputs at real target positions.
        weight: (V, D) the output projection (the shared embedding when tied).
        target: (N,) gold ids; positions with `pad_id` carry no loss.

    Returns:
        (smoothed loss, negative log-likelihood), each a float32 scalar summed over tokens.
    """
    device = states.device.type
    autocast = torch.is_autocast_enabled(device)
    dtype = torch.get_autocast_dtype(device) if autocast else weight.dtype
    return _ProjectedSmoothedCrossEntropy.apply(states, weight, target, epsilon, pad_id, dtype)


# exp(x) as exp2(x log2(e)): on a CPU, torch's float32 `exp` (and the one inside `log_softmax`) is
# about 4x slower than its `exp2` (2M elements on a 2-core AVX-512 EPYC), and the
# softmax over the vocabulary was the loss's largest elementwise cost. Rounding x log2(e) moves
# exp's result by a relative |x| 2^-24, far below the bf16 gradient's 2^-9.
LOG2_E = 1.0 / math.log(2.0)

# (rows, V) float32 blocks, reused chunk after chunk: 8 MB when the products run in a 16-bit
# dtype; 16 MB in float32, whose products lose speed on few rows (on a 2-core EPYC,
# (262, 256) x (256, 8000) runs at 146 GFLOP/s against 167 on 524 rows; the loss's forward and
# backward on 3,768 tokens took 265 ms instead of 287). Bfloat16 products do not gain from more.
PROJECTED_CHUNK_ELEMENTS = 1 << 21
FLOAT32_CHUNK_FACTOR = 2
# On a GPU each chunk costs kernel launches and a host sync, and memory is plentiful: blocks of
# up to 256M elements (1 GiB in float32), so a 25,000-token batch with a 37,000-piece vocabulary
# takes 4 chunks instead of the CPU's 441.
GPU_CHUNK_ELEMENTS = 1 << 28


def chunk_rows(V: int, dtype: torch.dtype, device: torch.device) -> int:
    """Rows of one (rows, V) block of the fused loss, for the device it runs on."""
    if device.type != "cpu":
        return max(1, GPU_CHUNK_ELEMENTS // V)
    factor = FLOAT32_CHUNK_FACTOR if torch.finfo(dtype).bits >= 32 else 1
    return max(1, factor * PROJECTED_CHUNK_ELEMENTS // V)


class _ProjectedSmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, states, weight, target, epsilon, pad_id, dtype):
        N, V = states.shape[0], weight.shape[0]
        w = weight.to(dtype)  # (V, D)
        want_grad = ctx.needs_input_grad[0] or ctx.needs_input_grad[1]
        grad_states = torch.empty_like(states) if want_grad else None  # (N, D)
        grad_weight = torch.zeros_like(weight) if want_grad else None  # (V, D)
        smooth = epsilon / (V - 2)
        loss = states.new_zeros((), dtype=torch.float32)
        nll = states.new_zeros((), dtype=torch.float32)
        step = chunk_rows(V, dtype, states.device)
        padding_rows = bool((target == pad_id).any())  # none in training: states are real
        precise = torch.promote_types(dtype, torch.float32)  # the softmax's precision
        for start in range(0, N, step):
            rows = slice(start, start + step)
            h = states[rows].to(dtype)  # (n, D)
            gold_ids = target[rows, None]  # (n, 1)
            real = (gold_ids != pad_id).to(torch.float32)  # (n, 1)
            z = (h @ w.t()).to(precise)  # (n, V) logits
            gold_z, pad_z = z.gather(-1, gold_ids), z[:, pad_id, None].clone()  # (n, 1) each
            total_z = z.sum(-1, keepdim=True)
            m = z.amax(-1, keepdim=True)
            p = z.sub_(m).mul_(LOG2_E).exp2_()  # exp(z - m), in place (see `LOG2_E`)
            s = p.sum(-1, keepdim=True)
            lse = m + s.log()  # (n, 1) log of the softmax normalizer
            row_loss, row_nll = _smoothed_terms(
                gold_z - lse, pad_z - lse, total_z - V * lse, epsilon, V
            )
            loss += (row_loss * real).sum()
            nll += (row_nll * real).sum()
            if not want_grad:
                continue
            # d loss / d logits = p - q: q is smooth everywhere but padding (0) and gold.
            g = p.mul_(s.reciprocal_())  # (n, V) p, in place
            g[:, pad_id] += smooth
            g.scatter_add_(-1, gold_ids, torch.full_like(gold_z, -(1.0 - epsilon - smooth)))
            g.sub_(smooth)
            if padding_rows:  # they get no gradient
                g[gold_ids.squeeze(-1) == pad_id] = 0.0
            g = g.to(dtype)
            grad_states[rows] = g @ w  # (n, D)
            grad_weight += (g.t() @ h).to(weight.dtype)  # (V, D)
        ctx.save_for_backward(grad_states, grad_weight)
        ctx.mark_non_differentiable(nll)
        return loss, nll

    @staticmethod
    def backward(ctx, grad_loss, _grad_nll):
        grad_states, grad_weight = ctx.saved_tensors
        return grad_states * grad_loss, grad_weight * grad_loss, None, None, None, None
