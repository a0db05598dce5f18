"""What every translator offers, whatever runs it: the `Translator` protocol and its results.

`aiayn.open_translator` opens one (engines/open.py); `aiayn translate`, `aiayn evaluate`, the
server and Python users all translate through this interface and never ask which engine it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.attention_maps import Attention
from aiayn.decode.controls.words import Controls


@dataclass(frozen=True)
class Translation:
    """One translation of a line: its text, its score and its output ids."""

    text: str
    score: float  # log P(Y|X) / lp(Y), the score the search ranks by; 0 for an empty line
    tokens: list[int]  # the output's ids, without bos and eos


EMPTY = Translation("", 0.0, [])  # what an empty line translates to


@dataclass(frozen=True)
class Alternative:
    """A word that could come first after the prefix, and the translation it leads to."""

    word: str
    translation: Translation


class Translator(Protocol):
    """A model opened for translation, with a search that may change from call to call."""

    tokenizer: Tokenizer  # its SentencePiece model (a document's sentences are measured by it)

    @property
    def default_search(self) -> DecodeConfig:
        """The search this engine runs when none is given: the paper's, with the length setting
        chosen on validation where the model has one (evaluate/tuned.py) and the engine can
        express it."""
        ...

    @property
    def search_origin(self) -> str:
        """Where `default_search`'s length setting comes from, in words."""
        ...

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        """The best translation of each line, in input order (an empty line gives "");
        cfg: the search (default: `default_search`); controls: target prefixes, a glossary,
        suppressed words (an engine that lacks one says so)."""
        ...

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        """The `cfg.nbest` best translations of each line, best first, in input order."""
        ...

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        """Up to k distinct words that could come first after the line's target prefix (in
        `controls`; none: at the start), each with the translation the search completes; the
        first is the best translation's."""
        ...

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        """Every attention weight of the model over `line` and its translation `found` (a
        teacher-forced pass, not a second search); an engine that cannot show them says so."""
        ...

    def warm_up(self, beams: Iterable[int]) -> None:
        """Make the first calls at these beam sizes as fast as later ones (a server calls it
        before it serves)."""
        ...
