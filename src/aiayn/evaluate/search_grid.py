"""Many search settings from few beam searches: what `aiayn tune` decodes the validation split
with.

The length penalty and the stopping rule do not steer the beam: the K live hypotheses of each
step are the K most probable, whatever alpha is (beam.py). They decide only which finished
hypothesis wins and when the search stops. So one search that records every hypothesis it
finishes (with its step) and the best live log P after each step, and that goes on until every
setting of the grid would have stopped, holds the answer of each setting: replaying a setting's
stopping rule over the record gives exactly the hypothesis its own search returns (in float32,
where a sentence's search does not depend on its batch mates; a test holds every setting to it).

Settings whose rule would keep the search going to the length limit (the |Y|^alpha penalty under
the "bound" rule: its largest penalty grows without end) are left out of grids: one of them
would make the one search as long as the longest.

The repetition guards (no repeated n-gram, the stutter guard) do steer the beam: settings that
differ in them are searched apart, one search per pair of guards.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from torch import Tensor

from aiayn.config import DecodeConfig
from aiayn.decode.beam import Hypothesis, length_penalty, lp_max, search
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.protocols import CacheT, DecodingModel


@dataclass(frozen=True)
class SearchSetting:
    """One point of a grid: the length penalty, its exponent and the stopping rule; and the
    repetition guards (0: off)."""

    alpha: float
    length_penalty: str = "gnmt"
    stop: str = "bound"
    no_repeat_ngram: int = 0
    stutter_guard: int = 0

    def apply(self, cfg: DecodeConfig) -> DecodeConfig:
        return cfg.replace(
            alpha=self.alpha,
            length_penalty=self.length_penalty,
            stop=self.stop,
            no_repeat_ngram=self.no_repeat_ngram,
            stutter_guard=self.stutter_guard,
        )

    def apply_to_terms(self, cfg: DecodeConfig) -> DecodeConfig:
        """cfg with this length setting for its sentences that have glossary terms."""
        return cfg.replace(
            terms_alpha=self.alpha, terms_length_penalty=self.length_penalty, terms_stop=self.stop
        )

    @property
    def guards(self) -> tuple[int, int]:
        """(no_repeat_ngram, stutter_guard): what a search must be run with."""
        return self.no_repeat_ngram, self.stutter_guard

    def guarded(self, no_repeat_ngram: int, stutter_guard: int) -> SearchSetting:
        """The same length setting under these guards."""
        return replace(self, no_repeat_ngram=no_repeat_ngram, stutter_guard=stutter_guard)

    def __str__(self) -> str:
        guards = (f", no repeated {self.no_repeat_ngram}-gram" if self.no_repeat_ngram else "") + (
            f", stutter guard {self.stutter_guard}" if self.stutter_guard else ""
        )
        return f"{self.length_penalty} alpha {self.alpha:g}, stop {self.stop}{guards}"


class GridSentence:
    """The finished list of one sentence for every setting of a grid at once (1-best)."""

    def __init__(self, settings: list[SearchSetting], cfg: DecodeConfig) -> None:
        self.settings = settings
        self.cfg = cfg  # beam and limits
        self.finished: list[tuple[int, list[int], float]] = []  # (step, words, log P), in order
        self.best: list[Hypothesis | None] = [None] * len(settings)  # so far, by setting
        self.stopped: list[bool] = [False] * len(settings)

    def offer(self, words: list[int], log_prob: float, t: int, fixed: float = 0.0) -> None:
        """As `Sentence.offer`, for every setting."""
        self.finished.append((t, words, log_prob))
        n = len(self.finished)
        for k, s in enumerate(self.settings):
            if self.stopped[k] or (s.stop == "k-finished" and n > self.cfg.beam):
                continue  # its own search would have stopped or refused this one
            lp = length_penalty(len(words) + 1, s.alpha, s.length_penalty)
            score = (log_prob - fixed) / lp + fixed
            best = self.best[k]
            if best is None or score > best.score:  # strict: the first of equals stays
                self.best[k] = Hypothesis(words, score, log_prob)

    def done(self, best_live: float, t: int, limit: int) -> bool:
        """Done when every setting's own search would be: each is stopped at the first step
        its rule allows, and its best hypothesis is frozen there."""
        for k, s in enumerate(self.settings):
            if not self.stopped[k]:
                self.stopped[k] = self._stops(k, s, best_live, t, limit)
        return all(self.stopped)

    def _stops(self, k: int, s: SearchSetting, best_live: float, t: int, limit: int) -> bool:
        if s.stop == "k-finished":
            return len(self.finished) >= self.cfg.beam
        best = self.best[k]
        return best is not None and best.score >= best_live / lp_max(t, limit, s.apply(self.cfg))


def grid_sentence(settings: list[SearchSetting], cfg: DecodeConfig, _: int) -> GridSentence:
    """A sentence's record for `search` (which passes its index)."""
    return GridSentence(settings, cfg)


def grid_search(
    model: DecodingModel[CacheT],
    src: Tensor,
    settings: list[SearchSetting],
    cfg: DecodeConfig,
    controls: list[SentenceControls | None] | None = None,
) -> list[list[list[int]]]:
    """For each sentence of src (B, S), the 1-best output ids under each setting, in the order of
    `settings`; what `beam_search(model, src, setting.apply(cfg), controls)` returns for each
    (controls: per sentence, e.g. its glossary terms, as for `beam_search`). One search per
    pair of repetition guards in `settings`."""
    found: list[list[list[int]]] = [[[] for _ in settings] for _ in range(src.shape[0])]
    for guards in dict.fromkeys(s.guards for s in settings):
        at = [k for k, s in enumerate(settings) if s.guards == guards]
        group = [settings[k] for k in at]
        guarded = cfg.replace(nbest=1, no_repeat_ngram=guards[0], stutter_guard=guards[1])
        searched = search(
            model, src, guarded, functools.partial(grid_sentence, group, guarded), controls
        )
        for row, sentence in zip(found, searched, strict=True):
            for k, h in zip(at, sentence.best, strict=True):
                row[k] = h.tokens if h is not None else []
    return found
