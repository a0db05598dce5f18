"""Scaled dot-product and multi-head attention (paper section 3.2)."""

from __future__ import annotations

import contextlib
import math
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from aiayn.model.masks import causal_mask

# On a CPU, attention for at most this many queries takes the explicit path, not the fused kernel:
# a decoding step has one query, and there the kernel's set-up costs 3-5x the arithmetic
# (profiled in bf16, beam 4 x batch 32); longer queries (training, encoding) keep the kernel.
FEW_QUERIES = 8

# On a CPU, a bf16 (or fp16) attention that autograd records takes the explicit path too: the
# fused kernel's backward is about 4x slower there, and PyTorch's own matrix-product fallback
# computes in float32 (copies of Q, K, V and the scores), 2.3x slower than the explicit path's
# bf16 products with a float32 softmax (forward and backward of a real batch's attention).
REDUCED = (torch.bfloat16, torch.float16)

# On CUDA, the fused kernels aiayn lets PyTorch choose from. Not cuDNN's: in bf16 it builds an
# execution plan for every new shape, and real batches and decoding steps bring new shapes all
# the time (on an H100, beam search over 20 new source lengths took 37 s in bf16 with it and
# 2.9 s without; fp32, which never picks it, 3.0 s). Flash and memory-efficient attention serve
# any shape at once.
CUDA_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
    need_weights: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """softmax(Q K^T / sqrt(d_k)) V, with masked scores set to -inf.

    The fast path is PyTorch's fused kernel; `need_weights=True` takes an explicit path that also
    returns the attention weights (for plots), as do decoding steps (a few queries) on a CPU.
    Both compute the same function.

    Args:
        q: (B, H, T, Dh) queries.
        k, v: (B, H, S, Dh) keys and values.
        mask: boolean, True = may attend, broadcastable to (B, H, T, S); or None.
        is_causal: query t sees keys <= t (square attention only; exclusive with `mask`).
        dropout_p: dropout on the attention weights (0 in eval).
        need_weights: also return the weights.

    Returns:
        (B, H, T, Dh) output and, if asked, (B, H, T, S) weights.
    """
    if not need_weights and not _explicit_on_cpu(q):
        cuda = q.device.type == "cuda"
        with sdpa_kernel(CUDA_BACKENDS) if cuda else contextlib.nullcontext():
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal
            )  # (B, H, T, Dh)
        return out, None
    # The explicit path: for the weights, and where the fused kernel is slow on a CPU.
    if is_causal:
        mask = causal_mask(q.shape[-2], k.shape[-2] - q.shape[-2], q.device)  # (T, S)
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # (B, H, T, S); scaled first
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)  # (B, H, T, S)
    if mask is not None:  # a query with no key to see (an all-padding source) gets no weight
        sees = mask.any(dim=-1, keepdim=True)  # (B, 1|H, 1|T, 1): small
        if torch.compiler.is_compiling() or not bool(sees.all()):
            weights = weights.masked_fill(~sees, 0.0)
    out = F.dropout(weights, p=dropout_p) @ v  # (B, H, T, Dh)
    return out, weights if need_weights else None


def _explicit_on_cpu(q: Tensor) -> bool:
    """Whether attention on these queries is faster on the explicit path: on a CPU, a decoding
    step's few queries, or a reduced-precision attention that autograd records (training)."""
    if q.device.type != "cpu":
        return False
    training = q.dtype in REDUCED and q.requires_grad and torch.is_grad_enabled()
    return q.shape[-2] <= FEW_QUERIES or training


class RowsLinear(Protocol):
    """A linear layer other than `nn.Linear` (a quantized one) that computes a slice of its
    outputs, as `linear_rows` does for `nn.Linear`."""

    def rows(self, x: Tensor, start: int, stop: int) -> Tensor: ...


def linear_rows(linear: nn.Linear | RowsLinear, x: Tensor, start: int, stop: int) -> Tensor:
    """Outputs start..stop-1 of a linear layer: x W[start:stop]^T + b[start:stop], (..., stop -
    start). For a stacked projection's parts; a layer other than `nn.Linear` (a quantized one)
    provides this as its `rows` method."""
    if isinstance(linear, nn.Linear):
        bias = None if linear.bias is None else linear.bias[start:stop]
        return F.linear(x, linear.weight[start:stop], bias)
    return linear.rows(x, start, stop)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O with head_i = Attention(Q W_i^Q, ...).

    W^Q, W^K and W^V are stored stacked as one (3D, D) matrix, so self-attention projects with a
    single matrix product, and cross-attention uses its Q rows on the decoder and its K/V rows
    on the memory (once per source, via the cache). The caller projects, then `attend`s.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.d_model = d_model
        self.dropout = dropout
        self.w_qkv = nn.Linear(d_model, 3 * d_model)  # rows: W^Q, W^K, W^V
        self.w_o = nn.Linear(d_model, d_model)

    def _split_heads(self, x: Tensor) -> Tensor:
        B, L, _ = x.shape
        return x.view(B, L, self.n_heads, -1).transpose(1, 2)  # (B, H, L, Dh)

    def project_qkv(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention projections: (B, L, D) -> three (B, H, L, Dh)."""
        q, k, v = self.w_qkv(x).chunk(3, dim=-1)  # (B, L, 3D) -> 3 x (B, L, D)
        return self._split_heads(q), self._split_heads(k), self._split_heads(v)

    def project_q(self, x: Tensor) -> Tensor:
        """Query projection only: (B, T, D) -> (B, H, T, Dh)."""
        return self._split_heads(linear_rows(self.w_qkv, x, 0, self.d_model))

    def project_kv(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Key and value projections: (B, S, D) -> two (B, H, S, Dh)."""
        kv = linear_rows(self.w_qkv, x, self.d_model, 3 * self.d_model)  # (B, S, 2D)
        k, v = kv.chunk(2, dim=-1)  # 2 x (B, S, D)
        return self._split_heads(k), self._split_heads(v)

    def project_position(self, pos: Tensor, role: str) -> Tensor:
        """W^Q pos (role "q") or W^K pos (role "k"), without the bias: (B, L, D) -> (B, H, L, Dh).

        Added to the projected queries or keys it equals projecting x + pos: DETR's way of giving
        every layer the positions, on queries and keys but never on values.
        """
        start = {"q": 0, "k": self.d_model}[role]
        rows = self.w_qkv.weight[start : start + self.d_model]  # (D, D)
        return self._split_heads(F.linear(pos, rows))

    def attend(
        self,
        q: Tensor,
        k: Tensor,
        v: Tensor,
        mask: Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attention over projected heads, then W^O.

        Returns:
            (B, T, D) output and, if asked, (B, H, T, S) weights.
        """
        dropout_p = self.dropout if self.training else 0.0
        heads, weights = scaled_dot_product_attention(
            q, k, v, mask, is_causal, dropout_p, need_weights
        )  # (B, H, T, Dh)
        B, _, T, _ = heads.shape
        out = heads.transpose(1, 2).reshape(B, T, self.d_model)  # (B, T, D)  heads concatenated
        return self.w_o(out), weights
