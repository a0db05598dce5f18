"""What the beam search is told besides the source: per sentence, a target prefix, terms its
output must contain and piece sequences it must not (`SentenceControls`, in piece ids); and
`Steering`, the batch's controls as the search applies them at each step.

A batch without controls has no `Steering` (the search runs as it always has); in a batch with
some, the sentences without any run the ordinary search: their rows are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from aiayn.decode.controls.constraints import Candidates, Constraints
from aiayn.decode.controls.prefix import Prefix
from aiayn.decode.controls.suppress import Suppression


@dataclass(frozen=True)
class SentenceControls:
    """One sentence's controls, in piece ids."""

    prefix: tuple[int, ...] = ()  # the output starts with these
    terms: tuple[tuple[int, ...], ...] = ()  # each must appear in the output (a glossary's)
    suppress: tuple[tuple[int, ...], ...] = ()  # none may appear in the output
    # (V,) bool, the pieces that continue a word (no "▁"): none may follow a completed term,
    # so that a term stays a whole word; None: no such rule
    glue: Tensor | None = field(default=None, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.prefix or self.terms or self.suppress)


class Steering:
    """The controls of a batch of sentences, for a beam of K (`beam.search` calls these)."""

    def __init__(self, controls: list[SentenceControls | None], K: int, device: Any) -> None:
        found = [c or SentenceControls() for c in controls]
        self.K, self.device = K, device
        self.prefix = (
            Prefix([c.prefix for c in found], device) if any(c.prefix for c in found) else None
        )
        self.suppression = (
            Suppression([c.suppress for c in found], device)
            if any(c.suppress for c in found)
            else None
        )
        glue = next((c.glue for c in found if c.glue is not None), None)
        self.constraints = (
            Constraints([c.terms for c in found], K, device, glue)
            if any(c.terms for c in found)
            else None
        )
        self.prefix_lengths = [len(c.prefix) for c in found]

    @staticmethod
    def of(controls: list[SentenceControls | None] | None, K: int, device: Any) -> Steering | None:
        """The batch's steering; None where no sentence has a control."""
        return Steering(controls, K, device) if controls and any(controls) else None

    def limits(self, limit: list[int]) -> list[int]:
        """Length limits with room for each prefix and eos."""
        return [max(n, p + 1) for n, p in zip(limit, self.prefix_lengths, strict=True)]

    def prefill(self, model: Any, cache: Any, bos_id: int) -> tuple[Tensor | None, Any]:
        """The shared part of the prefixes decoded in one pass: (B, 1 + n) outputs so far, bos
        first, and the cache; (None, cache) where there is none."""
        n = self.prefix.shared(model) if self.prefix is not None else 0
        if self.prefix is None or n == 0:
            return None, cache
        tokens, cache = self.prefix.prefill(model, cache, bos_id, n)
        if self.constraints is not None:  # the terms the prefix has begun or met
            B = tokens.shape[0]
            rows = torch.arange(B * self.K, device=self.device)
            sentences = torch.arange(B, device=self.device).repeat_interleave(self.K)
            for piece in tokens[:, 1:].repeat_interleave(self.K, dim=0).T:  # n steps
                self.constraints.advance(rows, piece, sentences)
        return tokens, cache

    def rows(self, active: list[int]) -> Tensor:
        """(B'*K,) the sentence of each live row."""
        return torch.tensor(active, device=self.device).repeat_interleave(self.K)

    def before_rules(
        self, log_probs: Tensor, tokens: Tensor, active: list[int], eos_id: int
    ) -> Tensor:
        """No eos before every term is met; no suppressed sequence. tokens: (R, 1 + t) bos
        first; active: the sentence of each block of K rows (kept for `after_rules`)."""
        self.sentences = sentences = self.rows(active)  # (R,)
        if self.constraints is not None:
            log_probs = self.constraints.rules(log_probs, eos_id)
        if self.suppression is not None:
            log_probs = self.suppression.block(log_probs, tokens[:, 1:], sentences)
        return log_probs

    def after_rules(self, log_probs: Tensor, t: int) -> Tensor:
        """The prefix's piece where a row is still within its prefix (over every other rule)."""
        if self.prefix is None:
            return log_probs
        return self.prefix.force(log_probs, t, self.sentences)

    def select(
        self, scores: Tensor, log_probs: Tensor, found: Candidates, active: list[int]
    ) -> Candidates:
        if self.constraints is None:
            return found
        return self.constraints.select(scores, log_probs, found, active)

    def advance(
        self, rows: Tensor, tokens: Tensor, active: list[int], log_probs: Tensor | None = None
    ) -> None:
        """The live rows become the parents `rows` extended by `tokens`; `active`: the
        sentences that go on; log_probs: (R, V) the step's scores of the parents' next pieces."""
        if self.constraints is not None:
            self.constraints.advance(rows, tokens, self.rows(active), log_probs)

    def finishing(self) -> tuple[Tensor, Tensor] | None:
        """(R,) each per live row: the log P of the term pieces it took, and whether it has a
        term unmet; None without terms."""
        c = self.constraints
        return None if c is None else (c.term_log_prob, ~c.met.all(dim=1))
