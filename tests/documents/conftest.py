"""A scripted translator for the document tests: each sentence's translation is its words
reversed and upper-cased, and its attention maps say so (target word j attends to source word
n-1-j), so that every placement can be computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from aiayn.config import DecodeConfig
from aiayn.decode.attention_maps import Attention
from aiayn.engines.base import Translation
from tests.conftest import talking_model_dir


class WordTokenizer:
    def encode(self, texts: list[str]) -> list[list[int]]:
        return [[3 + (hash(w) % 50) for w in t.split()] for t in texts]

    def decode(self, ids: list[list[int]]) -> list[str]:
        return [" ".join("w" for _ in x) for x in ids]


def reverse(line: str) -> str:
    return " ".join(reversed(line.upper().split()))


class ReversingTranslator:
    """A `Translator` (the parts documents use) that records what it was asked."""

    default_search = DecodeConfig()
    search_origin = "scripted"

    def __init__(self) -> None:
        self.tokenizer = WordTokenizer()
        self.calls: list[list[str]] = []

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls=None
    ) -> list[str]:
        self.calls.append(list(lines))
        return [reverse(x) for x in lines]

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls=None
    ) -> list[list[Translation]]:
        self.calls.append(list(lines))
        return [[Translation(reverse(x), 0.0, [5] * len(x.split()))] for x in lines]

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        n = len(line.split())
        cross = np.zeros((n + 1, n + 1), dtype=np.float32)  # (T, S) with </s>
        cross[np.arange(n), n - 1 - np.arange(n)] = 1.0
        cross[n, n] = 1.0
        pieces = [f"▁{w}" for w in line.split()]
        out = [f"▁{w}" for w in found.text.split()]
        return Attention(
            found.text, [*pieces, "</s>"], ["<s>", *out], [*out, "</s>"], [], [], [cross, cross]
        )

    def warm_up(self, beams) -> None:
        pass


@pytest.fixture
def scripted() -> ReversingTranslator:
    return ReversingTranslator()


@pytest.fixture(scope="session")
def talking_model(tiny_data, tmp_path_factory):
    """A tiny model of random weights, scrambled so that sentences get outputs of their own
    (a briefly trained one says nothing yet), with the tiny data's SentencePiece model."""
    return talking_model_dir(tmp_path_factory.mktemp("documents") / "model", tiny_data, seed=2)
