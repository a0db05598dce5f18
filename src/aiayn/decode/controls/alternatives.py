"""Alternatives at a position (CTranslate2's `return_alternatives`): the k most likely words
that could come first after a target prefix, each completed by the search.

The first is the search's own best translation after the prefix. The others come from one
teacher-forced pass over the prefix: its most probable next pieces that start a word (a
SentencePiece piece that begins with "▁"), each appended to the prefix and completed by one
batched beam search. A word is the text from the position to the next word start; words are
kept distinct, best first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.beam import Hypothesis, beam_search
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.protocols import DecodingModel

WORD_START = "\u2581"  # SentencePiece's mark of a piece that begins a word
SPARE = 3  # candidate pieces searched per alternative asked (some complete to the same word)


@dataclass(frozen=True)
class Alternative:
    word: str  # the word at the position after the prefix
    hypothesis: Hypothesis  # the whole translation, prefix included


def alternatives(
    model: DecodingModel[Any],
    tokenizer: Tokenizer,
    src: torch.Tensor,
    k: int,
    cfg: DecodeConfig,
    controls: SentenceControls,
) -> list[Alternative]:
    """Up to k alternatives for the one sentence src (1, S), the first the search's best."""
    special = model.cfg
    cfg = replace(cfg, nbest=1)
    best = beam_search(model, src, cfg, [controls])[0][0]
    p = len(controls.prefix)
    tgt_in = torch.tensor([(special.bos_id, *controls.prefix)], device=src.device)
    log_probs = torch.log_softmax(model(src, tgt_in)[0, -1].float(), dim=-1)  # (V,)
    ranked = log_probs.argsort(descending=True).tolist()
    taken = best.tokens[p] if len(best.tokens) > p else None
    ranked = ranked[: max(64, 8 * k)]
    words = [
        i
        for i, piece in zip(ranked, tokenizer.pieces(ranked), strict=True)
        if piece.startswith(WORD_START) and i != taken
    ]
    starts = words[: SPARE * k]
    found = [Alternative(word_at(tokenizer, best.tokens, p), best)]
    if k > 1 and starts:
        steer = [replace(controls, prefix=(*controls.prefix, i)) for i in starts]
        batch = src.expand(len(starts), -1)
        for hyps in beam_search(model, batch, cfg, list(steer)):
            found.append(Alternative(word_at(tokenizer, hyps[0].tokens, p), hyps[0]))
    distinct: dict[str, Alternative] = {}
    for alt in found:
        distinct.setdefault(alt.word, alt)
    return list(distinct.values())[:k]


def word_at(tokenizer: Tokenizer, tokens: list[int], p: int) -> str:
    """The word that starts at piece p: its pieces up to the next word start, as text."""
    pieces = tokenizer.pieces(tokens[p:])
    end = next((j for j in range(1, len(pieces)) if pieces[j].startswith(WORD_START)), len(pieces))
    return tokenizer.join(pieces[:end]).strip()
