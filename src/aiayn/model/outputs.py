"""What the Transformer returns: the encoder's output, the decoder's, every attention map."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from torch import Tensor

CacheT = TypeVar("CacheT")  # the cache a decoder step continues: KVCache, FixedKVCache, ...


@dataclass(frozen=True)
class Encoded:
    """The encoder's output: the memory the decoder attends to, and which of it is real."""

    memory: Tensor  # (B, S, D)
    src_mask: Tensor  # (B, 1, 1, S), True = real source token
    self_attention: tuple[Tensor, ...] = ()  # per layer (B, H, S, S), when asked


@dataclass(frozen=True)
class Decoded(Generic[CacheT]):
    """The decoder's output for T new steps (`Transformer.decode` and its variants)."""

    logits: Tensor | None  # (B, T, V); None from `decode_states`
    cache: CacheT | None = None  # the cache after these steps, when one was given
    self_attention: tuple[Tensor, ...] = ()  # per layer (B, H, T, P+T), `decode_with_weights`
    cross_attention: tuple[Tensor, ...] = ()  # per layer (B, H, T, S), `decode_with_weights`
    states: Tensor | None = None  # (B, T, D) or (N, D) decoder states, from `decode_states`
    normalized: bool = False  # logits are float32 log-probabilities already (log_softmax)
    alignment: Tensor | None = None  # (B, H, T, S) cross-attention of `align_layer`, when asked


@dataclass(frozen=True)
class AttentionMaps:
    """Every attention weight of one forward pass, per layer; each (B, H, queries, keys)."""

    encoder: tuple[Tensor, ...]  # (B, H, S, S)
    decoder_self: tuple[Tensor, ...]  # (B, H, T, T)
    cross: tuple[Tensor, ...]  # (B, H, T, S)
