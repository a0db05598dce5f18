"""Word alignments read from cross-attention (fairseq's `--print-alignment`): each target
piece is aligned to the source piece it attends to most, in one layer (the heads' mean or one
head), and pieces are merged to words. Also the Moses `i-j` format and the alignment error rate
(Och & Ney 2003) they are measured by.

Which layer and head: `alignment.json` beside the model where `benchmarks/alignment_bench.py
--store` wrote one (chosen by AER on the validation split), else the last layer's mean of the
heads, the best on the demo model's validation pairs (benchmarks/README.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aiayn.decode.attention_maps import Attention

WORD_START = "▁"  # SentencePiece's mark of a piece that begins a word
CHOICE_FILE = "alignment.json"


@dataclass(frozen=True)
class Choice:
    """Where alignments are read: a decoder layer (negative: from the last) and a head (None:
    the mean of the heads)."""

    layer: int = -1
    head: int | None = None
    origin: str = "the last layer, mean of the heads"


def read_choice(directory: Path | None) -> Choice:
    """The layer/head stored beside the model, else the default."""
    path = None if directory is None else Path(directory) / CHOICE_FILE
    if path is None or not path.is_file():
        return Choice()
    stored = json.loads(path.read_text())
    return Choice(int(stored["layer"]), stored.get("head"), f"chosen on validation ({path})")


def piece_words(pieces: list[str]) -> np.ndarray:
    """The word index of each piece (a piece starting with ▁ begins a new word)."""
    starts = np.array([p.startswith(WORD_START) for p in pieces], dtype=np.int64)
    if len(starts):
        starts[0] = 1
    return np.cumsum(starts) - 1


def to_words(index: np.ndarray, n_words: int) -> np.ndarray:
    """Piece-word indices mapped onto `n_words` whitespace words (they agree but for rare
    normalizations, where the mapping is proportional)."""
    n_pieces = int(index.max()) + 1 if len(index) else 0
    if n_pieces == n_words or n_pieces == 0:
        return index
    return np.minimum(index * n_words // n_pieces, n_words - 1)


def word_pairs(
    maps: Attention, n_source: int, n_target: int, choice: Choice = Choice()
) -> set[tuple[int, int]]:
    """(source word, target word) pairs of one sentence pair from its attention maps.

    Args:
        maps: from `Translator.attention` with the head `choice` names.
        n_source, n_target: the sentence's and the translation's whitespace words.
    """
    cross = maps.cross[choice.layer][:-1, :-1]  # (T, S) without </s> on either side
    if cross.size == 0 or n_source == 0 or n_target == 0:
        return set()
    src = to_words(piece_words(maps.source[:-1]), n_source)
    tgt = to_words(piece_words(maps.target_out[:-1]), n_target)
    best = cross.argmax(axis=1)  # (T,) the source piece each target piece attends to most
    return {(int(i), int(j)) for i, j in zip(src[best], tgt, strict=True)}


def moses(pairs: set[tuple[int, int]]) -> str:
    """'0-0 1-2 ...' sorted by source then target word."""
    return " ".join(f"{i}-{j}" for i, j in sorted(pairs))


def parse_moses(line: str) -> set[tuple[int, int]]:
    return {(int(a), int(b)) for a, b in (p.split("-") for p in line.split())}


def aer(
    found: list[set[tuple[int, int]]],
    sure: list[set[tuple[int, int]]],
    possible: list[set[tuple[int, int]]] | None = None,
) -> float:
    """Alignment error rate: 1 - (|A∩S| + |A∩P|) / (|A| + |S|), summed over sentences; with
    no possible links given, P = S."""
    possible = possible or sure
    a_s = sum(len(a & s) for a, s in zip(found, sure, strict=True))
    a_p = sum(len(a & (p | s)) for a, p, s in zip(found, possible, sure, strict=True))
    total = sum(len(a) for a in found) + sum(len(s) for s in sure)
    return 1.0 - (a_s + a_p) / total if total else 0.0


def aligned_lines(translator, lines: list[str], cfg, choice: Choice = Choice()) -> str:
    """'translation ||| i-j ...' for each line (Marian's `--alignment` output)."""
    out = []
    for line, found in zip(lines, translator.nbest(lines, cfg.replace(nbest=1)), strict=True):
        best = found[0]
        pairs: set[tuple[int, int]] = set()
        if best.tokens:
            maps = translator.attention(line, best, choice.head)
            pairs = word_pairs(maps, len(line.split()), len(best.text.split()), choice)
        out.append(f"{best.text} ||| {moses(pairs)}\n")
    return "".join(out)
