"""Line mode with what documents have: protected spans taken out of each line and put back by
alignment (protect.py), and a line over --max-input-tokens cut into chunks (`--too-long split`,
chunks.py) rather than truncated. `LineTranslator` wraps any `Translator` and is one itself, so
that `aiayn translate`, the API and Python callers get the same lines back.

A line with nothing protected and within the limit goes to the engine as it is: nothing is
added to the path of a line that needs none of this. A line with protected spans is first
searched as it is, since a model trained on such text carries most spans itself, and in their
context (taken out, `%s` and the quotes around it leave a sentence the model never saw: on
the gettext test split, 6 BLEU lower, benchmarks/README.md); only a line whose translation
lost or changed one of its spans is searched again with them taken out and put back. A
document's sentences are searched the same way (translate.py, `reprotected`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from aiayn.config import DecodeConfig
from aiayn.decode.attention_maps import Attention
from aiayn.decode.controls.words import Controls
from aiayn.documents.alignment import Choice, word_pairs
from aiayn.documents.chunks import split_long
from aiayn.documents.inline import Tagged, project, text_of
from aiayn.documents.protect import Protector, holds, restore
from aiayn.engines.base import Alternative, Translation, Translator

DEFAULT_CHOICE = Choice()  # alignments from the last layer's mean of the heads


@dataclass(frozen=True)
class Planned:
    """A line as it is searched: its chunks, each with its protected spans taken out."""

    chunks: list[Tagged]

    @property
    def plain(self) -> bool:  # searched as the line itself: nothing taken out, not cut
        return len(self.chunks) == 1 and not self.chunks[0].spans


class LineTranslator:
    """A `Translator` whose lines keep their protected spans and are never truncated."""

    def __init__(
        self, inner: Translator, protector: Protector | None, choice: Choice = DEFAULT_CHOICE
    ) -> None:
        self.inner, self.protector, self.choice = inner, protector, choice
        self.tokenizer = inner.tokenizer

    @property
    def default_search(self) -> DecodeConfig:
        return self.inner.default_search

    @property
    def search_origin(self) -> str:
        return self.inner.search_origin

    def plan(self, lines: list[str], cfg: DecodeConfig, protect: bool = True) -> list[Planned]:
        """Each line as it is searched: its spans taken out (unless not `protect`), then
        (split) cut into chunks."""
        found = [Tagged(line) for line in lines]
        if self.protector is not None and protect:
            found = [self.protector.tagged(s) for s in found]
        if cfg.too_long != "split":
            return [Planned([s]) for s in found]
        return [Planned(c) for c in split_long(found, cfg.max_input_tokens, self.tokenizer.encode)]

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        cfg = cfg or self.default_search
        plans = self.plan(lines, cfg)
        if all(p.plain for p in plans):
            return self.inner.translate(lines, cfg, controls)
        found = self.planned(lines, plans, cfg.replace(nbest=1), controls)
        return [f[0].text for f in found]

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        cfg = cfg or self.default_search
        plans = self.plan(lines, cfg)
        if all(p.plain for p in plans):
            return self.inner.nbest(lines, cfg, controls)
        return self.planned(lines, plans, cfg, controls)

    def planned(
        self, lines: list[str], plans: list[Planned], cfg: DecodeConfig, controls: Controls | None
    ) -> list[list[Translation]]:
        """The n best of lines some of which need their plan: searched as they are first (cut
        where too long); those that lost or changed a protected span, again as planned."""
        spans = [[s.payload.text for c in p.chunks for s in c.spans] for p in plans]
        if not any(spans):  # nothing protected: only cut into chunks
            return self.searched(plans, cfg, controls)
        found = self.searched(self.plan(lines, cfg, protect=False), cfg, controls)
        lost = [i for i, texts in enumerate(spans) if not holds(found[i][0].text, texts)]
        if lost:  # searched again with the spans taken out: they come back verbatim
            again = self.searched(
                [plans[i] for i in lost], cfg, controls and controls.of_lines(lost)
            )
            for i, translations in zip(lost, again, strict=True):
                found[i] = translations
        return found

    def searched(
        self, plans: list[Planned], cfg: DecodeConfig, controls: Controls | None
    ) -> list[list[Translation]]:
        """The n best of each planned line: its chunks searched, their spans put back."""
        texts = [c.text for p in plans for c in p.chunks]
        found = iter(self.inner.nbest(texts, cfg, chunk_controls(controls, plans)))
        return [self.joined(p, [next(found) for _ in p.chunks]) for p in plans]

    def joined(self, plan: Planned, found: list[list[Translation]]) -> list[Translation]:
        """Each rank's chunk translations, their spans put back, as one translation."""
        out = []
        for k in range(min(len(f) for f in found)):
            parts = [self.placed(c, f[k]) for c, f in zip(plan.chunks, found, strict=True)]
            text = " ".join(p for p in parts if p)
            score = sum(f[k].score for f in found) / len(found)
            out.append(Translation(text, score, [t for f in found for t in f[k].tokens]))
        return out

    def placed(self, chunk: Tagged, found: Translation) -> str:
        """A chunk's translation with its protected spans put back at their aligned places (an
        engine that cannot show attention: in proportion along the line)."""
        if not chunk.spans:
            return found.text
        return text_of(restore(project(chunk, found.text, self.pairs(chunk.text, found))))

    def pairs(self, source: str, found: Translation) -> set[tuple[int, int]]:
        n_source, n_target = len(source.split()), len(found.text.split())
        try:
            maps = self.inner.attention(source, found, self.choice.head)
            return word_pairs(maps, n_source, n_target, self.choice)
        except ValueError:  # no attention maps: the diagonal
            return {(i, i * n_target // n_source) for i in range(n_source)} if n_target else set()

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        """As the engine's, on the line with its spans taken out (not cut: alternatives are
        for a sentence someone is writing)."""
        (plan,) = self.plan([line], (cfg or self.default_search).replace(too_long="truncate"))
        found = self.inner.alternatives(plan.chunks[0].text, k, cfg, controls)
        return [
            Alternative(
                a.word, replace(a.translation, text=self.placed(plan.chunks[0], a.translation))
            )
            for a in found
        ]

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        (plan,) = self.plan([line], self.default_search.replace(too_long="truncate"))
        return self.inner.attention(plan.chunks[0].text, found, head)

    def warm_up(self, beams: Iterable[int]) -> None:
        self.inner.warm_up(beams)


def chunk_controls(controls: Controls | None, plans: list[Planned]) -> Controls | None:
    """The line's controls for its chunks: its prefix for the first, the glossary and the
    suppressed words for all."""
    if controls is None or controls.target_prefix is None:
        return controls
    controls.check_lines(len(plans))
    prefixes = [
        prefix if k == 0 else ""
        for prefix, p in zip(controls.target_prefix, plans, strict=True)
        for k in range(len(p.chunks))
    ]
    return replace(controls, target_prefix=tuple(prefixes))
