"""`torch.nn.TransformerEncoder`, `TransformerDecoder` and `Transformer`, plus what they lack:
incremental decoding on a key/value cache (`init_cache`, `step`) and attention weights on
request (`need_weights=True`).

The cache is `aiayn.model.KVCache`: self-attention keys/values grow by the steps decoded,
cross-attention keys/values are projected from the memory once, and `reorder` serves beams.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from aiayn.model import KVCache
from aiayn.model.cache import empty_self_kv
from aiayn.model.layers import layers_of
from aiayn.model.masks import causal_mask
from aiayn.nn.multihead_attention import attention_mask
from aiayn.nn.torch_layers import KV, TransformerDecoderLayer, TransformerEncoderLayer, in_proj_rows


def _clones(layer: nn.Module, n: int) -> nn.ModuleList:
    return nn.ModuleList(copy.deepcopy(layer) for _ in range(n))


def _to_batch_first(batch_first: bool, *xs: Tensor) -> tuple[Tensor, ...]:
    return xs if batch_first else tuple(x.transpose(0, 1) for x in xs)


class TransformerEncoder(nn.Module):
    """A stack of `num_layers` copies of `encoder_layer`, then `norm` if given."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: nn.Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.batch_first = encoder_layer.batch_first

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
        *,
        need_weights: bool = False,
    ):
        """(S, B, D) or (B, S, D) -> the same; with `need_weights` also each layer's
        (B, H, S, S) self-attention weights."""
        (x,) = _to_batch_first(self.batch_first, src)
        B, S, _ = x.shape
        layers = layers_of(self.layers, TransformerEncoderLayer)
        H = layers[0].self_attn.num_heads
        merged = attention_mask(mask, src_key_padding_mask, bool(is_causal), B, H, S, S)
        weights = []
        for layer in layers:
            x, w = layer.block(x, merged, need_weights)  # (B, S, D)
            weights.append(w)
        if self.norm is not None:
            x = self.norm(x)
        (out,) = _to_batch_first(self.batch_first, x)
        return (out, tuple(weights)) if need_weights else out


class TransformerDecoder(nn.Module):
    """A stack of `num_layers` copies of `decoder_layer`, then `norm` if given."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: nn.Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.batch_first = decoder_layer.batch_first

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
        *,
        need_weights: bool = False,
    ):
        """(T, B, D) target and (S, B, D) memory (batch first when batch_first) -> (T, B, D);
        with `need_weights` also each layer's ((B, H, T, T), (B, H, T, S)) weights."""
        x, mem = _to_batch_first(self.batch_first, tgt, memory)
        (B, T, _), S = x.shape, mem.shape[1]
        layers = layers_of(self.layers, TransformerDecoderLayer)
        H = layers[0].self_attn.num_heads
        self_mask = attention_mask(tgt_mask, tgt_key_padding_mask, bool(tgt_is_causal), B, H, T, T)
        cross_mask = attention_mask(
            memory_mask, memory_key_padding_mask, memory_is_causal, B, H, T, S
        )
        weights = []
        for layer in layers:
            cross_k, cross_v = layer.multihead_attn.project(mem, in_proj_rows(KV, mem.shape[-1]))
            x, _, _, w = layer.block(
                x, cross_k, cross_v, self_mask, cross_mask, None, None, need_weights
            )
            weights.append(w)
        return self._finish(x, weights, need_weights)

    def _finish(self, x: Tensor, weights: list, need_weights: bool):
        if self.norm is not None:
            x = self.norm(x)
        (out,) = _to_batch_first(self.batch_first, x)
        return (out, tuple(weights)) if need_weights else out

    def init_cache(self, memory: Tensor, memory_key_padding_mask: Tensor | None = None) -> KVCache:
        """An empty cache for decoding over `memory`: each layer's cross-attention keys/values
        are projected here, once.

        Args:
            memory: (S, B, D), or (B, S, D) when batch_first.
            memory_key_padding_mask: (B, S) boolean, True = padding (PyTorch's convention).
        """
        (mem,) = _to_batch_first(self.batch_first, memory)
        B, S, D = mem.shape
        layers = layers_of(self.layers, TransformerDecoderLayer)
        cross = [layer.multihead_attn.project(mem, in_proj_rows(KV, D)) for layer in layers]
        cross_k = tuple(kv[0] for kv in cross)  # per layer (B, H, S, Dh)
        cross_v = tuple(kv[1] for kv in cross)
        keep = torch.ones(B, S, dtype=torch.bool, device=mem.device)
        if memory_key_padding_mask is not None:
            keep = ~memory_key_padding_mask.bool()
        return KVCache(
            self_k=empty_self_kv(cross_k[0], len(cross), 0),  # grown by each step
            self_v=empty_self_kv(cross_v[0], len(cross), 0),
            cross_k=cross_k,
            cross_v=cross_v,
            src_mask=keep[:, None, None, :],  # (B, 1, 1, S), True = may attend
        )

    def step(self, tgt: Tensor, cache: KVCache, *, need_weights: bool = False):
        """Decode T new target positions after the P in `cache`, each seeing itself and those
        before it: the same result as the full forward pass with a causal mask, at the cost
        of the new positions only.

        Args:
            tgt: (T, B, D), or (B, T, D) when batch_first: the new positions' inputs.
            cache: from `init_cache`, then from the previous step.

        Returns:
            (output like tgt, the extended cache), and each layer's weights if asked.
        """
        (x,) = _to_batch_first(self.batch_first, tgt)
        T, P = x.shape[1], cache.length
        self_mask = None if T == 1 else causal_mask(T, P, x.device)  # (T, P+T)
        new_k, new_v, weights = [], [], []
        for i, layer in enumerate(layers_of(self.layers, TransformerDecoderLayer)):
            x, k, v, w = layer.block(
                x,
                cache.cross_k[i],
                cache.cross_v[i],
                self_mask,
                cache.src_mask,
                cache.keys(i),
                cache.values(i),
                need_weights,
            )
            new_k.append(k)
            new_v.append(v)
            weights.append(w)
        out = self._finish(x, weights, need_weights)
        # The past and new keys/values, (B, H, P+T, Dh) per layer, are the new cache's.
        cache = replace(cache, self_k=tuple(new_k), self_v=tuple(new_v), length=P + T)
        return (out[0], cache, out[1]) if need_weights else (out, cache)


class Transformer(nn.Module):
    """`torch.nn.Transformer`: encoder and decoder stacks, each ending with a LayerNorm."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation=F.relu,
        custom_encoder: nn.Module | None = None,
        custom_decoder: nn.Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(*layer_args, **kw),
            num_encoder_layers,
            nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
        )
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(*layer_args, **kw),
            num_decoder_layers,
            nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
        )
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """(S, B, D) source and (T, B, D) target (batch first when batch_first) -> (T, B, D)."""
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """PyTorch's float causal mask: -inf above the diagonal, 0 elsewhere, (sz, sz)."""
        allowed = causal_mask(sz, 0, device)  # (sz, sz), True = may attend
        return torch.zeros(sz, sz, device=device, dtype=dtype or torch.float32).masked_fill(
            ~allowed, float("-inf")
        )
