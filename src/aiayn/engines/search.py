"""Our own search (greedy, beam, sampling) over any `DecodingModel`: the `Transformer`, its
compiled form, or the ONNX graphs exported from it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aiayn.config import DecodeConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.attention_maps import AttendingModel, Attention, attention_of
from aiayn.decode.controls.alternatives import alternatives
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.controls.words import Controls, sentence_controls
from aiayn.decode.protocols import DecodingModel
from aiayn.decode.shortlisted import Shortlisting
from aiayn.decode.translate import nbest_hypotheses, source_batch, translate_lines
from aiayn.engines.base import Alternative, Translation


class SearchTranslator:
    """A `Translator` that runs aiayn's searches on `model`.

    Args:
        model: in eval mode.
        tokenizer: its SentencePiece model.
        attending: the same model, where its attention weights can be read (None: they cannot).
        warm_up: builds what the first call at a beam size would otherwise build (compiled
            steps); None when there is nothing to build.
        search, search_origin: the default search, and where its length setting comes from.
        shortlist: the model's lexical shortlist (None: it has none), used unless a search's
            `shortlist` is False.
    """

    def __init__(
        self,
        model: DecodingModel[Any],
        tokenizer: Tokenizer,
        attending: AttendingModel | None = None,
        warm_up: Callable[[Iterable[int]], None] | None = None,
        cannot_attend: str = "",
        search: DecodeConfig = DecodeConfig(),
        search_origin: str = "the paper's",
        shortlist: Shortlisting | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self._attending = attending
        self._warm_up = warm_up
        self._cannot_attend = cannot_attend
        self.default_search = search
        self.search_origin = search_origin
        self.shortlist = shortlist

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        cfg = cfg or self.default_search
        return translate_lines(self.model, self.tokenizer, lines, cfg, controls, self.shortlist)

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        cfg = cfg or self.default_search
        found = nbest_hypotheses(self.model, self.tokenizer, lines, cfg, controls, self.shortlist)
        return [[Translation(text, h.score, h.tokens) for text, h in line] for line in found]

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        cfg = cfg or self.default_search
        if not line.strip():
            return []
        steer = sentence_controls(controls, self.tokenizer, [line], cfg)[0] or SentenceControls()
        ids = self.tokenizer.encode([line])[0][: cfg.max_input_tokens]
        device = next(self.model.parameters()).device
        src = source_batch([ids], self.model.cfg.eos_id, self.model.cfg.pad_id, device)
        found = alternatives(self.model, self.tokenizer, src, k, cfg, steer)
        text = self.tokenizer.decode([a.hypothesis.tokens for a in found])
        return [
            Alternative(a.word, Translation(t, a.hypothesis.score, a.hypothesis.tokens))
            for a, t in zip(found, text, strict=True)
        ]

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        if self._attending is None:
            raise ValueError(self._cannot_attend or "this engine cannot show attention maps")
        ids = self.tokenizer.encode([line])[0]
        return attention_of(self._attending, self.tokenizer, ids, found.tokens, head)

    def warm_up(self, beams: Iterable[int]) -> None:
        if self._warm_up is not None:
            self._warm_up(beams)
