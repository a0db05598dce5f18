"""The decoder's key/value cache: explicit state that incremental decoding passes in and returns."""

from __future__ import annotations

from dataclasses import dataclass, replace

from torch import Tensor


@dataclass(frozen=True)
class KVCache:
    """Keys/values of past target steps and of the source, one entry per decoder layer.

    Self-attention keys/values grow by one step per decoded token; cross-attention keys/values
    are projected from the memory once per source (by `Transformer.init_cache`) and reused.
    """

    self_k: tuple[Tensor, ...]  # per layer (B, H, P, Dh)
    self_v: tuple[Tensor, ...]  # per layer (B, H, P, Dh)
    cross_k: tuple[Tensor, ...]  # per layer (B, H, S, Dh)
    cross_v: tuple[Tensor, ...]  # per layer (B, H, S, Dh)
    src_mask: Tensor  # (B, 1, 1, S), True = real source token
    group: int = 1  # hypotheses per source: self rows = B * group (beams share their source)

    @property
    def length(self) -> int:
        """P, the number of target steps already decoded."""
        return self.self_k[0].shape[2]

    @property
    def batch_size(self) -> int:
        """The rows (sentences, or hypotheses of K per sentence) the cache holds."""
        return self.src_mask.shape[0] * self.group

    def expand(self, group: int) -> KVCache:
        """Room for `group` hypotheses per source (a beam): self-attention rows are repeated,
        while the cross-attention keys/values stay one per source, shared by its beams."""
        if self.group != 1:
            raise ValueError("expand a cache once, before beam search")

        def repeat(tensors: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            return tuple(t.repeat_interleave(group, dim=0) for t in tensors)  # (B*K, ...)

        return replace(self, self_k=repeat(self.self_k), self_v=repeat(self.self_v), group=group)

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

        def pick(tensors: tuple[Tensor, ...], rows: Tensor) -> tuple[Tensor, ...]:
            return tuple(t.index_select(0, rows) for t in tensors)  # each (B', ...)

        cache = replace(self, self_k=pick(self.self_k, indices), self_v=pick(self.self_v, indices))
        if sources is None:
            return cache
        sources = sources.to(self.src_mask.device)
        return replace(
            cache,
            cross_k=pick(self.cross_k, sources),
            cross_v=pick(self.cross_v, sources),
            src_mask=self.src_mask.index_select(0, sources),  # (B'/group, 1, 1, S)
        )

    def extended(self, new_k: list[Tensor], new_v: list[Tensor]) -> KVCache:
        """A cache whose self-attention keys/values are replaced by the given (longer) ones."""
        return replace(self, self_k=tuple(new_k), self_v=tuple(new_v))


def empty_self_kv(like: Tensor, n_layers: int) -> tuple[Tensor, ...]:
    """Zero-length self-attention keys or values shaped like a cross one: (B, H, 0, Dh) each."""
    B, H, _, Dh = like.shape
    return tuple(like.new_empty(B, H, 0, Dh) for _ in range(n_layers))
