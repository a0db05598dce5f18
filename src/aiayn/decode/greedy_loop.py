"""Greedy decoding as one compiled call: the whole search, not only its step (`--compile`).

A compiled step (`decode.compiled`) still leaves the search in Python: at batch 1 each step's
bookkeeping (the rules, the argmax, the output written, the shortlist's spread to the full
vocabulary, the next step's arguments) costs more than the step itself. `GreedyLoop` is that
search as a `torch.while_loop`, exported and compiled ahead of time with the decoder inside:
one call decodes every step of a batch. Its cache is carried through the loop and written out
of place (`CarriedKVCache`): a loop's body may change nothing it was given.

It decodes what `token_by_token` decodes with `most_probable` (greedy), with the same rules (the
length limit, min_len, the guards against repeats and stutter: one loop per setting of them) and
the same scores, over the model's own output layer or a shortlist's cut of it: rows that finish
stay in the batch to its end, emitting eos, so it takes batches of up to `LOOP_ROWS` sentences.
Controls, sampling, beams and larger batches take the step by step path; a deadline is checked
before and after the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch._higher_order_ops import while_loop
from torch.export import Dim

from aiayn.config import ModelConfig
from aiayn.decode import int8_kernel
from aiayn.decode.compile_cache import LARGEST
from aiayn.decode.rules import FORCED_EOS_SCORE, block_repeats_in, block_stutter_in
from aiayn.model import FixedKVCache, Transformer

# The most sentences a loop decodes at once: its rows that finish stay to the batch's end, where
# the step by step search drops them, so past a few rows the steps win (the student of
# benchmarks' student section, one thread, pieces/s loop against steps: 5,040 / 3,298 at 1,
# 5,899 / 5,223 at 4, 5,309 / 5,886 at 8, 3,244 / 5,418 at 32)
LOOP_ROWS = 4


@dataclass(frozen=True)
class LoopCut:
    """A shortlist's cut of the output layer as a loop takes it (`decode.shortlisted`)."""

    vocab: Tensor  # (V',) ascending piece ids
    own: Tensor  # (B, V') bool, the pieces each row may emit
    weight: Tensor  # (V', D) float, or int8 with `scale` (packed: as `int8_kernel.pack` lays it)
    scale: Tensor | None  # (V',) the int8 rows' scales
    bias: Tensor | None  # (V',)
    packed: bool = False  # int8 rows multiplied by `int8_kernel`

    @property
    def kind(self) -> str:
        """What `GreedyLoop` projects with: "float", "int8" (weight-only) or "packed"."""
        return "float" if self.scale is None else "packed" if self.packed else "int8"

    def inputs(self) -> tuple[Tensor, ...]:
        """`GreedyLoop.forward`'s vocab, own, weight, scale, bias (zeros where it has none)."""
        dtype = self.weight.dtype if self.scale is None else self.scale.dtype  # the logits'
        scale = torch.empty(0, dtype=dtype) if self.scale is None else self.scale
        bias = torch.zeros(len(self.vocab), dtype=dtype) if self.bias is None else self.bias
        return (self.vocab, self.own, self.weight, scale, bias)


@dataclass(frozen=True)
class CarriedKVCache(FixedKVCache):
    """A `FixedKVCache` written out of place: each layer's new buffers are kept in `new_k` and
    `new_v` (by layer) for the loop to carry to its next step."""

    new_k: dict[int, Tensor] = field(default_factory=dict)
    new_v: dict[int, Tensor] = field(default_factory=dict)

    def write(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """One step's keys/values (B, H, 1, Dh) at P, into new (B, H, C, Dh) buffers."""
        keys = self.self_k[layer].index_copy(2, self.position, k.to(self.self_k[layer].dtype))
        values = self.self_v[layer].index_copy(2, self.position, v.to(self.self_v[layer].dtype))
        self.new_k[layer], self.new_v[layer] = keys, values
        return keys, values


class GreedyLoop(nn.Module):
    """The greedy search over a fixed cache, the function that is compiled.

    Args:
        model: the model in its decoding precision.
        cut: None projects with the model's own output layer; "float", "int8" or "packed" with
            a shortlist's cut rows given to `forward` (`LoopCut.kind`).
        guards: (no_repeat_ngram, stutter_guard) as `DecodeConfig` has them (0: off).
    """

    def __init__(
        self, model: Transformer, cut: str | None = None, guards: tuple[int, int] = (0, 0)
    ) -> None:
        super().__init__()
        self.model = model
        self.cut = cut
        self.guards = guards

    def forward(
        self,
        self_k: list[Tensor],
        self_v: list[Tensor],
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor,
        limit: Tensor,
        min_len: Tensor,
        vocab: Tensor,
        own: Tensor,
        weight: Tensor,
        scale: Tensor,
        bias: Tensor,
    ) -> tuple[Tensor, Tensor]:
        """Decode until every row emitted eos or reached its limit. Args:
            self_k, self_v: per layer (B, H, C, Dh) zero-filled buffers; C = the longest limit.
            cross_k, cross_v: (N, B, H, S, Dh) the encoder memory's keys and values.
            src_mask: (B, 1, 1, S), True = real source token.
            limit: (B,) long, each row's last allowed step (eos is forced there).
            min_len: (1,) long, eos is barred up to this step.
            vocab: (V',) ascending piece ids the output layer scores (all V without a cut).
            own: (B, V') bool, the pieces of `vocab` each row may emit (with a cut).
            weight, scale, bias: the cut's (V', D) rows, (V',) int8 scales, (V',) bias.

        Returns:
            (B, C) tokens, padding after eos, and (B,) float32 log P(Y|X) summed as
            `token_by_token(scored=True)` sums it.
        """
        eos, N = self.model.cfg.eos_id, len(self_k)
        B, C = self_k[0].shape[0], self_k[0].shape[2]
        columns = torch.arange(C, device=limit.device)[None, :]  # (1, C)

        def going(t: Tensor, token: Tensor, out: Tensor, picks: Tensor, total, done, *kv):
            return (t <= C) & ~done.all()

        def body(t: Tensor, token: Tensor, out: Tensor, picks: Tensor, total, done, *kv):
            memory = tuple(cross_k.unbind(0)), tuple(cross_v.unbind(0))  # per layer
            cache = CarriedKVCache(kv[:N], kv[N:], *memory, src_mask, (t - 1).reshape(1))
            states = self.model.decode_states(token[:, None], cache=cache).states  # (B, 1, D)
            assert states is not None
            logits = self.project(states[:, 0], weight, scale, bias)  # (B, V')
            if self.cut is not None:  # the whole layer: every row may emit every piece
                logits = logits.masked_fill(~own, -torch.inf)
            log_probs = torch.log_softmax(logits, -1, torch.float32)  # (B, V')
            scores = self.rules(log_probs, t, picks, limit, min_len, vocab == eos)  # (B, V')
            best = scores.argmax(-1)  # (B,)
            token = vocab[best].masked_fill(done, eos)  # (B,)
            picked = log_probs.gather(1, best[:, None])[:, 0].clamp(min=FORCED_EOS_SCORE)
            total = total + picked.masked_fill(done, 0.0)
            now = columns == t - 1  # (1, C)
            out = torch.where(now, token[:, None], out)
            picks = torch.where(now, best[:, None], picks)
            new_kv = [cache.new_k[i] for i in range(N)] + [cache.new_v[i] for i in range(N)]
            return (t + 1, token, out, picks, total, done | (token == eos), *new_kv)

        start = first_state(self.model.cfg, B, C, limit.device)
        found = while_loop(going, body, (*start, *self_k, *self_v))
        return found[2], found[4]

    def rules(
        self,
        log_probs: Tensor,
        t: Tensor,
        picks: Tensor,
        limit: Tensor,
        min_len: Tensor,
        is_eos: Tensor,
    ) -> Tensor:
        """(B, V') log-probabilities at step t -> (B, V') scores as `token_by_token` applies
        the rules: eos barred up to min_len, forced at the limit (`rules.apply_rules`), then
        the guards over `picks`, (B, C) the pieces chosen so far as indices into `vocab`
        (the same pieces repeat as the same indices)."""
        scores = log_probs.masked_fill(is_eos & (t <= min_len), -torch.inf)  # (B, V')
        forced = torch.where(is_eos, scores.clamp(min=FORCED_EOS_SCORE), -torch.inf)
        scores = torch.where((limit <= t)[:, None], forced, scores)  # (B, V')
        no_repeat_ngram, stutter_guard = self.guards
        scores = block_repeats_in(scores, picks, t, no_repeat_ngram)
        return block_stutter_in(scores, picks, t, stutter_guard)

    def project(self, states: Tensor, weight: Tensor, scale: Tensor, bias: Tensor) -> Tensor:
        """(B, D) decoder states -> (B, V') logits over `vocab` (as `CutLayer` makes them)."""
        if self.cut is None:
            return self.model.project(states)
        if self.cut == "packed":
            return int8_kernel.int8_mm(states, weight, scale) + bias
        if self.cut == "int8":
            return torch._weight_int8pack_mm(states, weight, scale) + bias
        return F.linear(states.to(weight.dtype), weight, bias)


def first_state(cfg: ModelConfig, B: int, C: int, device: torch.device) -> tuple[Tensor, ...]:
    """The loop's state before step 1: t, the (B,) bos tokens, the (B, C) padded outputs and
    their (B, C) indices into the vocab, the (B,) scores and the (B,) finished rows."""
    return (
        torch.ones((), dtype=torch.long, device=device),
        torch.full((B,), cfg.bos_id, dtype=torch.long, device=device),
        torch.full((B, C), cfg.pad_id, dtype=torch.long, device=device),
        torch.zeros(B, C, dtype=torch.long, device=device),
        torch.zeros(B, dtype=torch.float32, device=device),
        torch.zeros(B, dtype=torch.bool, device=device),
    )


def full_inputs(model: Transformer, rows: int) -> tuple[Tensor, ...]:
    """`GreedyLoop.forward`'s vocab, own, weight, scale, bias without a cut: every piece, and
    the rest empty (unread: every row may emit every piece of the model's own layer)."""
    device = model.src_embed.weight.device
    empty, vocab = torch.empty(0, device=device), torch.arange(model.cfg.vocab_size, device=device)
    return (vocab, torch.ones(rows, 0, dtype=torch.bool, device=device), empty, empty, empty)


def loop_example(loop: GreedyLoop) -> tuple[Any, ...]:
    """Inputs to export the loop with: two sources of three positions, three steps, a cut of
    five pieces (sizes of 0 or 1 would be taken for constants)."""
    cfg, B, S, C, V = loop.model.cfg, 2, 3, 3, 5
    H, Dh, N = cfg.n_heads, cfg.d_model // cfg.n_heads, cfg.n_decoder_layers
    dtype = loop.model.src_embed.weight.dtype
    buffers = [torch.zeros(B, H, C, Dh, dtype=dtype) for _ in range(N)]
    if loop.cut is None:
        cut = full_inputs(loop.model, B)
    else:
        int8 = loop.cut in ("int8", "packed")
        weight = torch.ones(V, cfg.d_model, dtype=torch.int8 if int8 else dtype)
        weight = int8_kernel.pack(weight) if loop.cut == "packed" else weight
        scale = torch.ones(V, dtype=dtype) if int8 else torch.empty(0, dtype=dtype)
        vocab = torch.tensor([cfg.eos_id, *range(cfg.vocab_size - V + 1, cfg.vocab_size)])
        cut = (
            vocab.sort().values,
            torch.ones(B, V, dtype=torch.bool),
            weight,
            scale,
            torch.zeros(V, dtype=dtype),
        )
    return (
        buffers,
        [b.clone() for b in buffers],
        torch.zeros(N, B, H, S, Dh, dtype=dtype),
        torch.zeros(N, B, H, S, Dh, dtype=dtype),
        torch.ones(B, 1, 1, S, dtype=torch.bool),
        torch.full((B,), C, dtype=torch.long),
        torch.zeros(1, dtype=torch.long),
        *cut,
    )


def loop_shapes(loop: GreedyLoop) -> tuple[Any, ...]:
    """The dynamic shapes of `GreedyLoop.forward`'s arguments: rows, capacity, source length
    and, with a cut, its pieces."""
    B, C = (Dim(name, min=1, max=LARGEST) for name in "BC")
    S = Dim.DYNAMIC(min=1, max=LARGEST)
    per_layer = [{0: B, 2: C}] * loop.model.cfg.n_decoder_layers
    memory = {1: B, 3: S}
    if loop.cut is None:
        cut: tuple[Any, ...] = ({}, {0: B}, {}, {}, {})
    else:
        V = Dim("V", min=1, max=LARGEST)
        scale = {0: V} if loop.cut in ("int8", "packed") else {}
        rows = {0: Dim("P", min=1, max=LARGEST)} if loop.cut == "packed" else {0: V}
        cut = ({0: V}, {0: B, 1: V}, rows, scale, {0: V})
    return (per_layer, per_layer, memory, memory, {0: B, 3: S}, {0: B}, {}, *cut)
