"""The decoder's key/value caches: explicit state that incremental decoding passes in and returns.

`KVCache`: self-attention keys/values live in buffers preallocated to the length limit; each
step writes its keys/values in place after the P cached ones (no `torch.cat` of the whole past
per step), and a beam reorder copies only the P filled positions of the chosen rows.

`FixedKVCache`: every tensor keeps its shape from step to step, so one compiled decoder step
serves every position (`aiayn.decode.compiled`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

from aiayn.model.masks import decoder_mask


@dataclass(frozen=True)
class KVCache:
    """Keys/values of past target steps and of the source, one entry per decoder layer.

    Self-attention keys/values are written in place into buffers with room for `capacity`
    steps (they grow, by doubling, if a decode goes past it); cross-attention keys/values are
    projected from the memory once per source (by `Transformer.init_cache`) and reused.

    A cache is state that moves forward: after decoding from it or reordering it, use the one
    returned (the buffers are shared, and later steps write into them).
    """

    self_k: tuple[Tensor, ...]  # per layer (B, H, capacity, Dh); positions < length are filled
    self_v: tuple[Tensor, ...]  # per layer (B, H, capacity, Dh)
    cross_k: tuple[Tensor, ...]  # per layer (B, H, S, Dh)
    cross_v: tuple[Tensor, ...]  # per layer (B, H, S, Dh)
    src_mask: Tensor  # (B, 1, 1, S), True = real source token
    group: int = 1  # hypotheses per source: self rows = B * group (beams share their source)
    length: int = 0  # P, the number of target steps already decoded

    @property
    def capacity(self) -> int:
        """How many target steps the buffers hold before they must grow."""
        return self.self_k[0].shape[2]

    @property
    def batch_size(self) -> int:
        """The rows (sentences, or hypotheses of K per sentence) the cache holds."""
        return self.src_mask.shape[0] * self.group

    @property
    def position(self) -> int:
        """The position of the next target step: P."""
        return self.length

    def self_mask(self, n_new: int) -> tuple[Tensor | None, bool]:
        """Self-attention masking for n_new steps after the P cached ones (`decoder_mask`)."""
        return decoder_mask(n_new, self.length, self.src_mask.device)

    def keys(self, layer: int) -> Tensor:
        """The filled self-attention keys of one layer: (B, H, P, Dh), a view."""
        return self.self_k[layer][:, :, : self.length]

    def values(self, layer: int) -> Tensor:
        """The filled self-attention values of one layer: (B, H, P, Dh), a view."""
        return self.self_v[layer][:, :, : self.length]

    def reserve(self, n_new: int) -> KVCache:
        """A cache with room for `n_new` more steps: this one, or one with larger buffers."""
        if self.length + n_new <= self.capacity:
            return self
        capacity = max(2 * self.capacity, self.length + n_new)
        rows = torch.arange(self.batch_size, device=self.src_mask.device)
        return self._take(rows, capacity)

    def write(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write T new steps' keys/values of a layer after the P cached ones (in place; call
        `reserve(T)` first); return the layer's keys and values so far: (B, H, P+T, Dh) views."""
        P, T = self.length, k.shape[2]
        self.self_k[layer][:, :, P : P + T] = k  # cast to the cache's precision if need be
        self.self_v[layer][:, :, P : P + T] = v
        return self.self_k[layer][:, :, : P + T], self.self_v[layer][:, :, : P + T]

    def advanced(self, n_new: int) -> KVCache:
        """The cache after `write`s of n_new steps to every layer."""
        return replace(self, length=self.length + n_new)

    def expand(self, group: int) -> KVCache:
        """Room for `group` hypotheses per source (a beam): self-attention rows are repeated,
        while the cross-attention keys/values stay one per source, shared by its beams."""
        if self.group != 1:
            raise ValueError("expand a cache once, before beam search")
        rows = torch.arange(self.batch_size, device=self.src_mask.device)
        return replace(self._take(rows.repeat_interleave(group), self.capacity), group=group)

    def reorder(self, indices: Tensor, sources: Tensor | None = None) -> KVCache:
        """Select (and repeat) rows, e.g. the surviving hypotheses of a beam search.

        Args:
            indices: (B',) long row indices into the current rows (B' may differ).
            sources: with `group` > 1, the sources kept, (B'/group,); None when the beams only
                moved within their sources. With group 1 the sources follow `indices`.

        Returns:
            A cache with B' rows.
        """
        indices = indices.to(self.src_mask.device)
        if len(indices) and not 0 <= int(indices.min()) <= int(indices.max()) < self.batch_size:
            raise IndexError(f"reorder indices must lie in [0, {self.batch_size})")
        if self.group == 1:
            sources = indices
        cache = self._take(indices, self.capacity)
        if sources is None:
            return cache
        sources = sources.to(self.src_mask.device)

        def pick(tensors: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            return tuple(t.index_select(0, sources) for t in tensors)  # each (B'/group, ...)

        return replace(
            cache,
            cross_k=pick(self.cross_k),
            cross_v=pick(self.cross_v),
            src_mask=self.src_mask.index_select(0, sources),  # (B'/group, 1, 1, S)
        )

    def _take(self, rows: Tensor, capacity: int) -> KVCache:
        """New self-attention buffers holding the given rows' P filled steps (only those are
        copied) and room for `capacity` steps; the cross-attention entries are unchanged."""

        def take(buffers: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            out = []
            for buffer in buffers:
                _, H, _, Dh = buffer.shape
                new = buffer.new_empty(len(rows), H, capacity, Dh)  # (B', H, capacity, Dh)
                if self.length:
                    filled = buffer[:, :, : self.length]
                    if filled.requires_grad and torch.is_grad_enabled():  # autograd: no out=
                        new[:, :, : self.length] = filled.index_select(0, rows)
                    else:
                        torch.index_select(filled, 0, rows, out=new[:, :, : self.length])
                out.append(new)
            return tuple(out)

        return replace(self, self_k=take(self.self_k), self_v=take(self.self_v))


def empty_self_kv(
    like: Tensor, n_layers: int, capacity: int, rows: int | None = None, zeros: bool = False
) -> tuple[Tensor, ...]:
    """Self-attention buffers for `capacity` steps, shaped like a cross one: (B, H, cap, Dh),
    or with `rows` rows; uninitialized, or zero-filled."""
    B, H, _, Dh = like.shape
    make = like.new_zeros if zeros else like.new_empty
    return tuple(make(B if rows is None else rows, H, capacity, Dh) for _ in range(n_layers))


@dataclass(frozen=True)
class FixedKVCache:
    """A key/value cache whose tensors keep their shapes from step to step, one step at a time.

    Self-attention keys/values live in zero-filled buffers of a fixed capacity C. A step writes
    its keys/values at `position`, a (1,) tensor rather than an int, and attends over all C
    positions with those after its own masked: the step runs the same code on the same shapes
    at every position, so a compiled step is made once and reused. (Zero-filled, because a
    masked position's weight is 0, and 0 times a stale NaN would be NaN.)

    With `history`, a row's past may live in other rows' buffers: position p of row b is read
    from row history[b, p]. A step writes each row's keys/values into its own buffers, at P
    only, so what a row wrote is never overwritten; a beam that takes over another's past then
    changes a (B, C) table of row numbers instead of copying keys and values.
    """

    self_k: tuple[Tensor, ...]  # per layer (B, H, C, Dh); positions < P filled
    self_v: tuple[Tensor, ...]  # per layer (B, H, C, Dh)
    cross_k: tuple[Tensor, ...]  # per layer (B / group, H, S, Dh)
    cross_v: tuple[Tensor, ...]  # per layer (B / group, H, S, Dh)
    src_mask: Tensor  # (B / group, 1, 1, S), True = real source token
    position: Tensor  # (1,) long: P, the position of the step being decoded
    group: int = 1  # hypotheses per source
    history: Tensor | None = None  # (B, C) long, for p < P; None: each row's past is its own

    @property
    def capacity(self) -> int:
        return self.self_k[0].shape[2]

    @property
    def batch_size(self) -> int:
        return self.self_k[0].shape[0]

    def self_mask(self, n_new: int) -> tuple[Tensor, bool]:
        """The keys the new step may see: positions <= P of the buffer, (C,)."""
        if n_new != 1:
            raise ValueError(f"a FixedKVCache decodes one step at a time, not {n_new}")
        key_pos = torch.arange(self.capacity, device=self.position.device)  # (C,)
        return key_pos <= self.position, False

    def reserve(self, n_new: int) -> FixedKVCache:
        """The same cache: its capacity is fixed (the decoder must stay within it)."""
        return self

    def write(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write one step's keys/values, (B, H, 1, Dh), at P in place; return the layer's whole
        buffers, (B, H, C, Dh), to attend over under `self_mask`."""
        keys, values = self.self_k[layer], self.self_v[layer]
        keys.index_copy_(2, self.position, k.to(keys.dtype))
        values.index_copy_(2, self.position, v.to(values.dtype))
        if self.history is None:
            return keys, values
        B, C = self.history.shape
        positions = torch.arange(C, device=keys.device)  # (C,)
        own = torch.arange(B, device=keys.device)[:, None]  # (B, 1)
        rows = torch.where(positions < self.position, self.history, own)  # (B, C)
        # (B, C, H, Dh) -> (B, H, C, Dh): position p of row b from row rows[b, p]
        return keys[rows, :, positions].transpose(1, 2), values[rows, :, positions].transpose(1, 2)

    def advanced(self, n_new: int) -> FixedKVCache:
        """The cache after `write`s of n_new steps to every layer."""
        return replace(self, position=self.position + n_new)
