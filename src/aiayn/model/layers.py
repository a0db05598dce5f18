"""Encoder and decoder layers (paper section 3.1) and their parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from aiayn.model.attention import MultiHeadAttention
from aiayn.model.cache import FixedKVCache, KVCache
from aiayn.model.dropout import Dropout

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "swish": F.silu,
}
Layer = TypeVar("Layer", bound=nn.Module)  # the class of a stack's layers (`layers_of`)


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied at every position (section 3.3);
    with `activation_dropout`, the inner activations are dropped out in training."""

    def __init__(
        self, d_model: int, d_ff: int, activation: str = "relu", activation_dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.activation = _ACTIVATIONS[activation]
        # none at 0: the paper's FFN, with not even a call in its way
        self.inner_dropout = Dropout(activation_dropout) if activation_dropout else None

    def forward(self, x: Tensor) -> Tensor:
        """(B, L, D) -> (B, L, D), position by position."""
        h = self.activation(self.w_1(x))  # (B, L, F)
        return self.w_2(h if self.inner_dropout is None else self.inner_dropout(h))


class Residual(nn.Module):
    """The connection around each sub-layer, with its LayerNorm and dropout.

    Post-norm (the paper): LayerNorm(x + Dropout(Sublayer(x))).
    Pre-norm (option):     x + Dropout(Sublayer(LayerNorm(x))).
    Call `enter` on the sub-layer's input and `exit` with its output.
    """

    def __init__(self, d_model: int, dropout: float, norm_first: bool, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first

    def enter(self, x: Tensor) -> Tensor:
        """The sub-layer's input: LayerNorm(x) in pre-norm, x itself in post-norm."""
        return self.norm(x) if self.norm_first else x

    def exit(self, x: Tensor, sublayer_out: Tensor) -> Tensor:
        """Add the dropped-out sub-layer output to x; normalize the sum in post-norm."""
        y = x + self.dropout(sublayer_out)
        return y if self.norm_first else self.norm(y)


@dataclass(frozen=True)
class LayerSpec:
    """Plain sizes shared by encoder and decoder layers.

    The builder (`Transformer`) fills it from the config; it bundles the flat arguments that
    every layer takes alike, and makes their sub-modules.
    """

    d_model: int
    d_ff: int
    n_heads: int
    dropout: float
    attention_dropout: float
    norm_first: bool
    norm_eps: float
    activation: str
    activation_dropout: float = 0.0

    def residual(self) -> Residual:
        return Residual(self.d_model, self.dropout, self.norm_first, self.norm_eps)

    def attention(self) -> MultiHeadAttention:
        return MultiHeadAttention(self.d_model, self.n_heads, self.attention_dropout)

    def feed_forward(self) -> FeedForward:
        return FeedForward(self.d_model, self.d_ff, self.activation, self.activation_dropout)


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward net; each inside a residual connection."""

    def __init__(self, spec: LayerSpec) -> None:
        super().__init__()
        self.self_attn = spec.attention()
        self.self_attn_residual = spec.residual()
        self.ffn = spec.feed_forward()
        self.ffn_residual = spec.residual()

    def forward(
        self,
        x: Tensor,
        src_mask: Tensor | None,
        need_weights: bool = False,
        pos: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """(B, S, D) -> (B, S, D), and the (B, H, S, S) self-attention weights if asked.

        `pos` (B or 1, S, D), when given, is added to the queries' and keys' input (not the
        values'), as DETR does in every layer; without it the layer is the paper's.
        """
        h = self.self_attn_residual.enter(x)
        q, k, v = self.self_attn.project_qkv(h)  # 3 x (B, H, S, Dh)
        if pos is not None:
            q = q + self.self_attn.project_position(pos, "q")  # (B, H, S, Dh)
            k = k + self.self_attn.project_position(pos, "k")  # (B, H, S, Dh)
        a, weights = self.self_attn.attend(q, k, v, mask=src_mask, need_weights=need_weights)
        x = self.self_attn_residual.exit(x, a)
        x = self.ffn_residual.exit(x, self.ffn(self.ffn_residual.enter(x)))
        return x, weights


@dataclass(frozen=True)
class DecoderLayerOutput:
    x: Tensor  # (B, T, D)
    self_weights: Tensor | None  # (B, H, T, P+T) when asked
    cross_weights: Tensor | None  # (B, H, T, S) when asked


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the memory, then the feed-forward net."""

    def __init__(self, spec: LayerSpec) -> None:
        super().__init__()
        self.self_attn = spec.attention()
        self.self_attn_residual = spec.residual()
        self.cross_attn = spec.attention()
        self.cross_attn_residual = spec.residual()
        self.ffn = spec.feed_forward()
        self.ffn_residual = spec.residual()

    def forward(
        self,
        x: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor | None,
        cache: KVCache | FixedKVCache | None = None,
        index: int = 0,
        tgt_mask: Tensor | None = None,
        is_causal: bool = True,
        need_weights: bool = False,
        query_pos: Tensor | None = None,
    ) -> DecoderLayerOutput:
        """One decoder layer over T new target steps.

        Args:
            x: (B, T, D) the new steps.
            cross_k, cross_v: (B, H, S, Dh) the memory's keys/values for this layer.
            src_mask: (B, 1, 1, S), True = real source token.
            cache, index: the cache holding the P earlier steps (this is its layer `index`): the
                new keys/values are written into it, in place; or None.
            tgt_mask, is_causal: decoder self-attention masking, from the cache's `self_mask`
                (`masks.decoder_mask`; over a fixed cache's whole buffer, (C,)).
            query_pos: (B or 1, T, D) DETR's object queries, added to the self-attention's
                queries and keys and to the cross-attention's queries; None in the paper.
        """
        h = self.self_attn_residual.enter(x)
        q, k, v = self.self_attn.project_qkv(h)  # 3 x (B, H, T, Dh)
        if query_pos is not None:
            q = q + self.self_attn.project_position(query_pos, "q")  # (B, H, T, Dh)
            k = k + self.self_attn.project_position(query_pos, "k")  # (B, H, T, Dh)
        if cache is not None:  # it keeps the precision it was made in (e.g. bf16 under autocast)
            k, v = cache.write(index, k, v)  # (B, H, P+T, Dh) each
        a, self_weights = self.self_attn.attend(q, k, v, tgt_mask, is_causal, need_weights)
        x = self.self_attn_residual.exit(x, a)

        q = self.cross_attn.project_q(self.cross_attn_residual.enter(x))  # (B, H, T, Dh)
        if query_pos is not None:
            q = q + self.cross_attn.project_position(query_pos, "q")  # (B, H, T, Dh)
        a, cross_weights = self._cross_attend(q, cross_k, cross_v, src_mask, need_weights)
        x = self.cross_attn_residual.exit(x, a)
        x = self.ffn_residual.exit(x, self.ffn(self.ffn_residual.enter(x)))
        return DecoderLayerOutput(x, self_weights, cross_weights)

    def _cross_attend(
        self,
        q: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor | None,
        need_weights: bool,
    ) -> tuple[Tensor, Tensor | None]:
        """Cross-attention; when K hypotheses share each source (beam search), their queries
        attend together to that source's one copy of the keys/values."""
        K = q.shape[0] // cross_k.shape[0]
        if K == 1:
            return self.cross_attn.attend(q, cross_k, cross_v, src_mask, need_weights=need_weights)
        if torch.compiler.is_compiling():  # a compiled step (`decode.compiled`): each row's
            # query against its source's keys repeated, which inductor fuses into the products
            # (no copy); regrouping the queries would cost a copy and a library bmm call
            k, v = cross_k.repeat_interleave(K, 0), cross_v.repeat_interleave(K, 0)
            mask = None if src_mask is None else src_mask.repeat_interleave(K, 0)
            return self.cross_attn.attend(q, k, v, mask, need_weights=need_weights)
        BK, H, T, Dh = q.shape
        grouped = q.view(BK // K, K, H, T, Dh).transpose(1, 2).reshape(BK // K, H, K * T, Dh)
        a, w = self.cross_attn.attend(
            grouped, cross_k, cross_v, src_mask, need_weights=need_weights
        )
        a = a.reshape(BK, T, -1)  # (B, K*T, D) -> (B*K, T, D)
        if w is not None:  # (B, H, K*T, S) -> (B*K, H, T, S)
            w = w.view(BK // K, H, K, T, -1).transpose(1, 2).reshape(BK, H, T, -1)
        return a, w


def layers_of(stack: nn.ModuleList, kind: type[Layer]) -> list[Layer]:
    """A stack's layers as the class they were built as (a ModuleList types its items only as
    nn.Module); a layer of another class is a TypeError naming it."""
    layers: list[Layer] = []
    for i, layer in enumerate(stack):
        if not isinstance(layer, kind):
            raise TypeError(f"layer {i} is a {type(layer).__name__}, not a {kind.__name__}")
        layers.append(layer)
    return layers
