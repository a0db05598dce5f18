"""Decoding over a batch's shortlist: the output projection cut to its pieces (`Shortlist`).

`Shortlisting` holds a model's output layer and its shortlist; per batch, `for_batch` gives a
`ShortlistModel`, a `DecodingModel` whose steps project the decoder state onto the batch's
V' pieces only (the weight rows sliced once per batch) and normalize, row by row, over the
sentence's own candidates among them (`RowsCache` carries which through the search's reorders).
Marian and CTranslate2 normalize over the batch's union, so there a sentence's translation
depends on its batch mates; here it is the one it gets alone. The log-probabilities come back
as a full (R, V) row with -inf outside the shortlist, so the searches, their rules and the
controls (a suppressed piece, the glossary's glue) run unchanged on the model's own ids: nothing
is mapped back, and a piece outside the shortlist can never be chosen. What the shortlist saves
is the projection's D x V product and its softmax; the -inf row is one fill.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from aiayn.config import DecodeConfig, ModelConfig
from aiayn.decode import int8_kernel
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.greedy_loop import LoopCut
from aiayn.decode.precision import Int8Linear
from aiayn.decode.shortlist import Shortlist, read_shortlist
from aiayn.decode.token_by_token import Walked
from aiayn.model import Encoded, Transformer
from aiayn.model.outputs import Decoded


@dataclass(frozen=True)
class CutLayer:
    """The output projection's rows of V' pieces: float (V', D), or int8 with per-row scales."""

    weight: Tensor  # (V', D) float, or int8 with `scale`
    bias: Tensor | None  # (V',)
    scale: Tensor | None = None  # (V',): the int8 rows' scales (`Int8Linear`)
    packed: Tensor | None = None  # the int8 rows packed for `int8_kernel`, where it runs

    def __call__(self, h: Tensor) -> Tensor:
        """(..., D) decoder states -> (..., V') logits."""
        if self.scale is None:
            return F.linear(h.to(self.weight.dtype), self.weight, self.bias)  # (..., V')
        flat = h.reshape(-1, h.shape[-1])  # (M, D)
        if self.packed is not None:
            y = int8_kernel.int8_mm(flat, self.packed, self.scale)  # (M, V')
        else:
            y = torch._weight_int8pack_mm(flat, self.weight, self.scale)  # (M, V')
        y = y if self.bias is None else y + self.bias
        return y.view(*h.shape[:-1], -1)  # (..., V')


def output_rows(model: Transformer) -> CutLayer:
    """The model's whole output projection as rows to cut: its own layer, the tied embedding
    matrix, an `Int8Linear`, or a dynamic int8 layer (dequantized once: a cut is small)."""
    layer = model.out_proj
    if layer is None:  # tied: the shared embedding matrix (section 3.4)
        return CutLayer(model.src_embed.weight, None)
    if isinstance(layer, Int8Linear):
        return CutLayer(layer.weight, layer.bias, layer.scale, layer.packed)
    if isinstance(layer, nn.Linear):
        return CutLayer(layer.weight, layer.bias)
    # torch.ao's dynamic quantized Linear: weight() and bias() are methods
    return CutLayer(layer.weight().dequantize(), layer.bias())


def cut(rows: CutLayer, vocab: Tensor) -> CutLayer:
    """The rows of the pieces `vocab` (V',)."""
    vocab = vocab.to(rows.weight.device)
    weight = rows.weight.index_select(0, vocab)
    return CutLayer(
        weight,
        None if rows.bias is None else rows.bias.index_select(0, vocab),
        None if rows.scale is None else rows.scale.index_select(0, vocab),
        None if rows.packed is None else int8_kernel.pack(weight),
    )


def control_pieces(controls: SentenceControls | None) -> list[int]:
    """The pieces a sentence's controls must be able to emit: its prefix and its terms."""
    if controls is None:
        return []
    return [*controls.prefix, *(p for term in controls.terms for p in term)]


class StatesModel(Protocol):
    """What a shortlist decodes with: a model whose step can stop before its output layer
    (`Transformer`, `CompiledModel`)."""

    def encode(self, src: Tensor) -> Any: ...

    def init_cache(self, encoded: Any, capacity: int = ...) -> Any: ...

    def decode_states(self, tgt: Tensor, *, cache: Any) -> Decoded[Any]: ...


@dataclass(frozen=True)
class RowsCache:
    """A model's cache and the shortlisted pieces each of its rows may emit, reordered with it
    (a beam's expansion and reorders, finished sentences leaving)."""

    inner: Any  # the model's own cache
    own: Tensor  # (rows, V') bool

    @property
    def batch_size(self) -> int:
        return self.inner.batch_size

    def expand(self, group: int) -> RowsCache:
        return RowsCache(self.inner.expand(group), self.own.repeat_interleave(group, dim=0))

    def reorder(self, indices: Tensor, sources: Tensor | None = None) -> RowsCache:
        own = self.own.index_select(0, indices.to(self.own.device))
        return RowsCache(self.inner.reorder(indices, sources), own)


class ShortlistModel:
    """A model decoding over the pieces `vocab` only (see the module docstring).

    Args:
        model: what runs the steps (the `Transformer`, or its `CompiledModel`).
        base: the `Transformer` itself (the teacher-forced pass, its config).
        layer: the output layer cut to `vocab`.
        vocab: (V',) ascending piece ids.
        own: (B, V') bool, the pieces of `vocab` each source row may emit.
    """

    def __init__(
        self, model: StatesModel, base: Transformer, layer: CutLayer, vocab: Tensor, own: Tensor
    ):
        self.model = model
        self.base = base
        self.layer = layer
        self.vocab = vocab
        self.own = own
        # every row may emit every piece of vocab (one sentence alone): no mask to apply; rows
        # only ever become copies or subsets of these, so it holds for the whole search
        self.unmasked = bool(own.all())

    @property
    def cfg(self) -> ModelConfig:
        return self.base.cfg

    def parameters(self) -> Iterator[Tensor]:
        return self.base.parameters()

    def encode(self, src: Tensor) -> Encoded:
        return self.model.encode(src)

    def init_cache(self, encoded: Encoded, capacity: int = 16) -> RowsCache:
        return RowsCache(self.model.init_cache(encoded, capacity=capacity), self.own)

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass: (B, T, V) log-probabilities over the shortlist."""
        states = self.base(src, tgt_in, project=False)
        assert isinstance(states, Tensor)
        return self.spread(states, self.own)

    def decode(self, tgt: Tensor, *, cache: RowsCache) -> Decoded[RowsCache]:
        """(B, 1) ids after the cached steps -> (B, 1, V) log-probabilities (-inf outside the
        row's shortlist) and the advanced cache."""
        decoded = self.model.decode_states(tgt, cache=cache.inner)
        assert decoded.states is not None
        logits = self.spread(decoded.states, cache.own)
        return Decoded(logits=logits, cache=RowsCache(decoded.cache, cache.own), normalized=True)

    def greedy(self, src: Tensor, cfg: DecodeConfig, scored: bool) -> Walked | None:
        """Greedy decoding in one compiled call over the cut (`CompiledModel.greedy`); None
        where the model runs its steps one by one."""
        if not isinstance(self.model, CompiledModel):
            return None
        return self.model.greedy(src, cfg, scored, self.loop_cut())

    def loop_cut(self) -> LoopCut:
        """The cut as the compiled greedy loop takes it: int8 rows packed where they are."""
        layer, packed = self.layer, self.layer.packed
        weight = layer.weight if packed is None else packed
        return LoopCut(self.vocab, self.own, weight, layer.scale, layer.bias, packed is not None)

    def spread(self, states: Tensor, own: Tensor) -> Tensor:
        """(B, T, D) states, (B, V') each row's pieces -> (B, T, V) float32 log-probabilities
        normalized over the row's own pieces, -inf at every other piece."""
        logits = self.layer(states)  # (B, T, V')
        if not self.unmasked:
            logits = logits.masked_fill(~own[:, None, :], -torch.inf)
        log_probs = torch.log_softmax(logits, dim=-1, dtype=torch.float32)  # (B, T, V')
        full = log_probs.new_full((*log_probs.shape[:-1], self.cfg.vocab_size), -torch.inf)
        return full.index_copy_(-1, self.vocab, log_probs)  # (B, T, V)


class Shortlisting:
    """A model and its shortlist: `for_batch` cuts the output layer to a batch's pieces.
    model: what runs the steps; base: the `Transformer` (itself, or the compiled one's)."""

    def __init__(self, model: StatesModel, base: Transformer, shortlist: Shortlist) -> None:
        self.model = model
        self.base = base
        self.shortlist = shortlist
        self.rows = output_rows(base)

    def for_batch(self, src: Tensor, controls: list[SentenceControls | None]) -> ShortlistModel:
        """The model over src's (B, S) shortlist, with the pieces of each row's controls."""
        extra = [control_pieces(c) for c in controls]
        allowed = self.shortlist.per_row(src, self.base.cfg.eos_id, self.base.cfg.pad_id, extra)
        vocab = allowed.any(dim=0).nonzero().squeeze(1)  # (V',) the batch's union, ascending
        own = allowed[:, vocab]  # (B, V')
        return ShortlistModel(self.model, self.base, cut(self.rows, vocab), vocab, own)


def open_shortlist(directory: Path, model: StatesModel, base: Transformer) -> Shortlisting | None:
    """The model's shortlist as stored in its directory (None: it has none); an error when
    the file is damaged or made for another vocabulary (`read_shortlist`)."""
    shortlist = read_shortlist(directory, base.cfg.vocab_size)
    return None if shortlist is None else Shortlisting(model, base, shortlist)
