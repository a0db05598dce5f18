"""The cache a compiled decoder step decodes on (`decode.compiled`, `decode.cuda_graphs`):
`FixedKVCache`'s buffers of a fixed capacity, and the search's reorders of them."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor

from aiayn.model.cache import empty_self_kv


@dataclass(frozen=True)
class StepCache:
    """The cache `CompiledModel` decodes on: `FixedKVCache`'s tensors and the step count.

    With a beam, a reorder only changes `history`, the table of which row holds each position
    of each row's past (see `FixedKVCache`); dropping rows (finished sentences) makes smaller
    buffers holding the kept rows' P filled positions.
    """

    self_k: tuple[Tensor, ...]  # per layer (B, H, C, Dh), zero-filled; positions < P filled
    self_v: tuple[Tensor, ...]  # per layer (B, H, C, Dh)
    cross_k: Tensor  # (N, B / group, H, S, Dh): stacked, so the step takes few tensors
    cross_v: Tensor  # (N, B / group, H, S, Dh)
    src_mask: Tensor  # (B / group, 1, 1, S), True = real source token
    group: int = 1  # hypotheses per source
    length: int = 0  # P, the target steps decoded
    history: Tensor | None = None  # (B, C) long, with a beam: the row holding each step

    @property
    def batch_size(self) -> int:
        return self.self_k[0].shape[0]

    @property
    def capacity(self) -> int:
        return self.self_k[0].shape[2]

    def expand(self, group: int) -> StepCache:
        """Room for `group` hypotheses per source (a beam), before the first step."""
        if self.group != 1 or self.length:
            raise ValueError("expand a cache once, before the first step")
        return self._take(torch.arange(self.batch_size).repeat_interleave(group), group=group)

    def written(self) -> StepCache:
        """The cache after a step: each row's step P is in its own buffers."""
        if self.history is not None:
            self.history[:, self.length] = torch.arange(self.batch_size, device=self.history.device)
        return replace(self, length=self.length + 1)

    def reorder(self, indices: Tensor, sources: Tensor | None = None) -> StepCache:
        """As `KVCache.reorder`: the rows become `indices` of the current ones (with `group` >
        1, `sources` names the sources kept; None when the beams only moved within theirs)."""
        indices = indices.to(self.src_mask.device)
        if self.history is not None and sources is None:  # the same sources: a new table
            return replace(self, history=self.history.index_select(0, indices))
        cache = self._take(indices)
        kept = indices if self.group == 1 else sources
        assert kept is not None
        kept = kept.to(self.src_mask.device)
        return replace(
            cache,
            cross_k=self.cross_k.index_select(1, kept),
            cross_v=self.cross_v.index_select(1, kept),
            src_mask=self.src_mask.index_select(0, kept),
        )

    def _take(self, rows: Tensor, group: int | None = None) -> StepCache:
        """New zero-filled buffers holding the given rows' P filled positions, each row's past
        in its own buffers (gathered through `history`, if any)."""
        rows = rows.to(self.src_mask.device)
        P, C, B = self.length, self.capacity, len(rows)
        positions = torch.arange(P, device=rows.device)  # (P,)
        if self.history is not None:
            past = self.history.index_select(0, rows)[:, :P]  # (B', P)
        else:
            past = rows[:, None].expand(B, P)

        def take(buffers: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            new = empty_self_kv(buffers[0], len(buffers), C, B, zeros=True)
            for old, fresh in zip(buffers, new, strict=True):
                if P:
                    fresh[:, :, :P] = old[past, :, positions].transpose(1, 2)  # (B', H, P, Dh)
            return new

        group = self.group if group is None else group
        history = None  # each row's past is now in its own buffers
        if group > 1:
            history = torch.arange(B, device=rows.device)[:, None].expand(B, C).contiguous()
        return replace(
            self, self_k=take(self.self_k), self_v=take(self.self_v), group=group, history=history
        )
