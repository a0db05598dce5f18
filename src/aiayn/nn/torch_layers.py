"""`torch.nn.TransformerEncoderLayer` and `TransformerDecoderLayer`, argument for argument.

Same constructor arguments, forward signatures, masks (PyTorch's: boolean True = masked, float
added) and state_dict keys as `torch.nn`; plus attention weights on request (`need_weights`)
and, in the decoder layer, self-attention keys/values that a cache can keep. Internally every
tensor is batch-first, (B, L, D), and masks are `attention.attention_mask`'s.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from aiayn.nn.multihead_attention import MultiheadAttention, attention_mask

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}
Q, KV, QKV = slice(0, 1), slice(1, 3), slice(0, 3)  # blocks of W^Q|W^K|W^V, in units of D


def in_proj_rows(part: slice, D: int) -> slice:
    return slice(part.start * D, part.stop * D)


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation={activation!r}: choose relu or gelu, or pass a function")
    return _ACTIVATIONS[activation]


class _Sublayers(nn.Module):
    """What both layers share: torch.nn's constructor, the attention, the feed-forward net,
    dropout and the residual connections. Sub-modules are made in torch.nn's order, so that
    state_dict keys come in the same order too."""

    cross_attention = False  # the decoder layer adds cross-attention, a third norm and dropout
    norm1: nn.LayerNorm  # norm{i} and dropout{i}: made by name in __init__, one per sub-layer
    norm2: nn.LayerNorm
    dropout1: nn.Dropout
    dropout2: nn.Dropout

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        n_sublayers = 3 if self.cross_attention else 2
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, **kw)
        if self.cross_attention:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, bias, **kw)
        self.linear1 = nn.Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model, bias=bias, **kw)
        for i in range(1, n_sublayers + 1):  # norm1.. then dropout1..
            self.add_module(f"norm{i}", nn.LayerNorm(d_model, layer_norm_eps, bias=bias, **kw))
        for i in range(1, n_sublayers + 1):
            self.add_module(f"dropout{i}", nn.Dropout(dropout))
        self.activation = _activation(activation)
        self.batch_first, self.norm_first = batch_first, norm_first

    def _residual(self, x: Tensor, norm: nn.LayerNorm, drop: nn.Dropout, sublayer) -> Tensor:
        """Post-norm LayerNorm(x + Dropout(f(x))), or pre-norm x + Dropout(f(LayerNorm(x)))."""
        if self.norm_first:
            return x + drop(sublayer(norm(x)))
        return norm(x + drop(sublayer(x)))

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # (B, L, D)

    def _batch_first(self, *xs: Tensor | None):
        """(L, B, D) -> (B, L, D) unless the layer is already batch-first."""
        return (
            xs if self.batch_first else tuple(None if x is None else x.transpose(0, 1) for x in xs)
        )


class TransformerEncoderLayer(_Sublayers):
    """Self-attention and feed-forward net, as `torch.nn.TransformerEncoderLayer`."""

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
        *,
        need_weights: bool = False,
    ):
        """(S, B, D), or (B, S, D) when batch_first -> the same shape; with `need_weights`
        also the (B, H, S, S) self-attention weights."""
        (x,) = self._batch_first(src)
        B, S, _ = x.shape
        mask = attention_mask(
            src_mask, src_key_padding_mask, is_causal, B, self.self_attn.num_heads, S, S
        )
        x, weights = self.block(x, mask, need_weights)
        (out,) = self._batch_first(x)
        return (out, weights) if need_weights else out

    def block(self, x: Tensor, mask: Tensor | None, need_weights: bool = False):
        """The layer on batch-first (B, S, D) with a mask from `attention_mask`."""
        found = {}

        def self_attention(h: Tensor) -> Tensor:
            q, k, v = self.self_attn.project(h, in_proj_rows(QKV, h.shape[-1]))  # 3 x (B, H, S, Dh)
            a, found["w"] = self.self_attn.attend(q, k, v, mask, need_weights)
            return a

        x = self._residual(x, self.norm1, self.dropout1, self_attention)
        x = self._residual(x, self.norm2, self.dropout2, self._feed_forward)
        return x, found["w"]


class TransformerDecoderLayer(_Sublayers):
    """Masked self-attention, cross-attention and feed-forward net, as
    `torch.nn.TransformerDecoderLayer`."""

    cross_attention = True
    norm3: nn.LayerNorm
    dropout3: nn.Dropout

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
        *,
        need_weights: bool = False,
    ):
        """(T, B, D) target and (S, B, D) memory (batch first when batch_first) -> (T, B, D);
        with `need_weights` also the (B, H, T, T) and (B, H, T, S) weights."""
        x, mem = self._batch_first(tgt, memory)
        (B, T, _), S, H = x.shape, mem.shape[1], self.self_attn.num_heads
        self_mask = attention_mask(tgt_mask, tgt_key_padding_mask, tgt_is_causal, B, H, T, T)
        cross_mask = attention_mask(
            memory_mask, memory_key_padding_mask, memory_is_causal, B, H, T, S
        )
        kv_rows = in_proj_rows(KV, mem.shape[-1])
        cross = self.multihead_attn.project(mem, kv_rows)  # 2 x (B, H, S, Dh)
        x, _, _, weights = self.block(
            x, cross[0], cross[1], self_mask, cross_mask, None, None, need_weights
        )
        (out,) = self._batch_first(x)
        return (out, weights) if need_weights else out

    def block(
        self,
        x: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        self_mask: Tensor | None,
        cross_mask: Tensor | None,
        past_k: Tensor | None,
        past_v: Tensor | None,
        need_weights: bool = False,
    ):
        """The layer on batch-first (B, T, D), continuing (B, H, P, Dh) past keys/values if
        given. Returns x, the (B, H, P+T, Dh) self keys/values, and the weights if asked."""
        found = {}

        def self_attention(h: Tensor) -> Tensor:
            q, k, v = self.self_attn.project(h, in_proj_rows(QKV, h.shape[-1]))  # 3 x (B, H, T, Dh)
            if past_k is not None and past_v is not None:
                k, v = torch.cat((past_k, k), dim=2), torch.cat((past_v, v), dim=2)  # P+T
            found["k"], found["v"] = k, v
            a, found["self"] = self.self_attn.attend(q, k, v, self_mask, need_weights)
            return a

        def cross_attention(h: Tensor) -> Tensor:
            (q,) = self.multihead_attn.project(h, in_proj_rows(Q, h.shape[-1]))  # (B, H, T, Dh)
            a, found["cross"] = self.multihead_attn.attend(
                q, cross_k, cross_v, cross_mask, need_weights
            )
            return a

        x = self._residual(x, self.norm1, self.dropout1, self_attention)
        x = self._residual(x, self.norm2, self.dropout2, cross_attention)
        x = self._residual(x, self.norm3, self.dropout3, self._feed_forward)
        weights = (found["self"], found["cross"]) if need_weights else None
        return x, found["k"], found["v"], weights
