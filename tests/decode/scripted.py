"""A model with scripted probabilities: a stand-in for `Transformer` that the searches drive
unchanged, and whose hypotheses and scores can be computed by hand."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from aiayn.config import DecodeConfig, ModelConfig
from aiayn.decode.beam import beam_search
from aiayn.decode.greedy import greedy_decode
from aiayn.decode.protocols import DecodingModel
from aiayn.model.outputs import Decoded

PAD, BOS, EOS, A, B = 0, 1, 2, 3, 4
V = 5

# P(next | prefix). After "b" the sentence probably ends; after "a" it probably goes on.
SCRIPT = {
    (): {A: 0.6, B: 0.4},
    (A,): {EOS: 0.25, A: 0.45, B: 0.30},
    (B,): {EOS: 0.90, A: 0.05, B: 0.05},
}

# The shape is unused; the special ids are those above.
CFG = ModelConfig(
    vocab_size=V, d_model=2, d_ff=2, n_heads=1, n_encoder_layers=1, n_decoder_layers=1
)
assert (CFG.pad_id, CFG.bos_id, CFG.eos_id) == (PAD, BOS, EOS)


def next_probs(prefix: tuple[int, ...]) -> dict[int, float]:
    return SCRIPT.get(prefix, {EOS: 1.0})


def scripted_logits(prefix: Tensor) -> Tensor:
    """(rows, t) outputs so far, bos first -> (rows, V) log-probabilities of the next token."""
    logits = torch.full((prefix.shape[0], V), -math.inf)
    for row, tokens in enumerate(prefix[:, 1:].tolist()):  # without bos
        for token, p in next_probs(tuple(tokens)).items():
            logits[row, token] = math.log(p)
    return logits


@dataclass(frozen=True)
class PrefixCache:
    """What a scripted model needs to remember: each row's output so far."""

    prefix: Tensor  # (rows, t)

    @property
    def batch_size(self) -> int:
        return self.prefix.shape[0]

    def expand(self, group: int) -> PrefixCache:
        return PrefixCache(self.prefix.repeat_interleave(group, dim=0))

    def reorder(self, indices: Tensor, sources: Tensor | None = None) -> PrefixCache:
        return PrefixCache(self.prefix.index_select(0, indices))


class ScriptedModel:
    """The decoding interface of `Transformer`, with log-probabilities from SCRIPT."""

    cfg = CFG

    def parameters(self) -> Iterator[Tensor]:
        yield torch.empty(0)  # the CPU

    def encode(self, src: Tensor) -> Tensor:
        return src

    def init_cache(self, encoded: Tensor, capacity: int = 0) -> PrefixCache:
        return PrefixCache(torch.zeros(encoded.shape[0], 0, dtype=torch.long))

    def decode(self, tgt: Tensor, *, cache: PrefixCache) -> Decoded[PrefixCache]:
        prefix = torch.cat((cache.prefix, tgt), dim=1)
        return Decoded(scripted_logits(prefix)[:, None], PrefixCache(prefix))  # (rows, 1, V)

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass: (B, T) decoder input -> (B, T, V) log-probabilities."""
        steps = [scripted_logits(tgt_in[:, : t + 1]) for t in range(tgt_in.shape[1])]
        return torch.stack(steps, dim=1)


def as_decoding_model(model: ScriptedModel) -> DecodingModel[PrefixCache]:
    """Nothing at run time: `make lint` (mypy) checks that the stand-in keeps the protocol."""
    return model


def first_output(model: DecodingModel, src: Tensor, search: str, cfg: DecodeConfig) -> list[int]:
    """The first sentence's output ids by greedy decoding ("greedy") or beam search ("beam")."""
    if search == "greedy":
        return greedy_decode(model, src, cfg)[0]
    return beam_search(model, src, cfg)[0][0].tokens
