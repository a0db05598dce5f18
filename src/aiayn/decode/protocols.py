"""What the searches need of a model and of its key/value cache, declared once.

Greedy decoding, beam search and sampling drive any model that offers these: the `Transformer`
itself, `CompiledModel` (its decoder step compiled ahead of time) and `OnnxModel` (its exported
graphs run by ONNX Runtime), each with its own cache (`KVCache`, `StepCache`, `KVCache`). The
type checker holds every stand-in to these protocols (`make lint`), so none needs to know which
of them it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

from torch import Tensor

from aiayn.config import ModelConfig
from aiayn.model.outputs import Decoded

Self_ = TypeVar("Self_", bound="DecoderCache")


class DecoderCache(Protocol):
    """A decoder's state between steps: passed in, returned advanced, never changed behind the
    caller's back (use the cache a call returns)."""

    @property
    def batch_size(self) -> int:
        """The rows it holds: sentences, or hypotheses of `group` per sentence."""
        ...

    def expand(self: Self_, group: int) -> Self_:
        """Room for `group` hypotheses per source (a beam), before the first step."""
        ...

    def reorder(self: Self_, indices: Tensor, sources: Tensor | None = None) -> Self_:
        """The rows `indices` (B',) of the current ones; with a beam, `sources` names the sources
        kept (None when beams only moved within theirs)."""
        ...


CacheT = TypeVar("CacheT", bound=DecoderCache)


class DecodingModel(Protocol[CacheT]):
    """The part of `Transformer` that decoding uses."""

    @property
    def cfg(self) -> ModelConfig:
        """Its shape and special ids (pad, bos, eos)."""
        ...

    def parameters(self) -> Iterator[Tensor]:
        """Where its tensors live: decoding puts its inputs on the first one's device."""
        ...

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass: (B, S) source, (B, T) decoder input -> (B, T, V) logits
        (scoring a found output)."""
        ...

    def encode(self, src: Tensor) -> Any:
        """(B, S) source ids -> whatever `init_cache` takes."""
        ...

    def init_cache(self, encoded: Any, capacity: int = ...) -> CacheT:
        """An empty cache for decoding from `encoded`, with room for `capacity` steps."""
        ...

    def decode(self, tgt: Tensor, *, cache: CacheT) -> Decoded[CacheT]:
        """(B, 1) ids after the cached steps -> (B, 1, V) logits and the advanced cache."""
        ...
