"""`aiayn translate --dry-run`: a `Translator` whose every translation is its source, so that
a document's way through its reader, the sentence splitter, the tag placement and its writer
can be checked without a search (the output must be the input again).

It reads the model's SentencePiece model (no weights): sentences are measured in the model's
pieces, so `--max-input-tokens` and `--too-long` act as they would in the real translation.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.attention_maps import Attention
from aiayn.decode.controls.words import Controls
from aiayn.engines.base import Alternative, Translation

WORD_START = "▁"  # each word one piece of the maps below, as SentencePiece marks a word start


class CopyTranslator:
    """Every line translates to itself; each word is aligned to itself."""

    default_search = DecodeConfig()
    search_origin = "none: --dry-run copies every sentence"

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        refuse(controls)
        return list(lines)

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        refuse(controls)
        ids = self.tokenizer.encode(lines)
        return [[Translation(line, 0.0, x)] for line, x in zip(lines, ids, strict=True)]

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        refuse(controls)
        return [Alternative(line.split()[0], Translation(line, 0.0, []))] if line.split() else []

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        """Word j attends to word j: the maps of a copy, one piece per word."""
        source = [WORD_START + w for w in line.split()]
        target = [WORD_START + w for w in found.text.split()]
        cross = np.eye(len(target) + 1, len(source) + 1, dtype=np.float32)  # (T, S) with </s>
        cross[-1, -1] = 1.0
        return Attention(
            found.text, [*source, "</s>"], ["<s>", *target], [*target, "</s>"], [], [], [cross]
        )

    def warm_up(self, beams: Iterable[int]) -> None:
        """Nothing to build."""


def refuse(controls: Controls | None) -> None:
    if controls:
        raise ValueError(
            "--dry-run copies every sentence and cannot follow --target-prefix, --glossary or "
            "--suppress; drop one of them"
        )
