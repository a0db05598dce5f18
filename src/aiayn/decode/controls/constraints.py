"""Lexically constrained beam search: terms (piece sequences) that every output must contain.

Dynamic beam allocation (Post & Vilar 2018), vectorized over the batch in the manner of Hu et
al. 2019: each sentence's K beams are shared among "banks", one per number of constraint pieces
met, so that hypotheses that have met more constraints are not crowded out by more probable ones
that have met fewer, and the search still reaches a constraint the unconstrained beam would have
pruned. Each step, a constrained sentence's candidates are

- the 2K best continuations (the ordinary search's),
- every live beam followed by each constraint piece it may take next (the next piece of the term
  it is in the middle of, else the first piece of each unmet term),
- every live beam followed by its own best piece,

scored, deduplicated, given the state they would reach, and ranked round-robin across banks: the
best of each bank first (fullest bank first), then the second best of each, and so on. A
hypothesis may end (eos) only when it has met every term; at the length limit it must end all
the same (best effort), and is kept only where no hypothesis with every term has finished.
Sentences without terms keep the ordinary candidates untouched.

The length penalty divides a finished hypothesis's log P less its term pieces' (`term_log_prob`),
which count in full: divided too, a term's low probability would shrink as the output grows, and
the search would pick longer outputs to dilute it (with a tuned alpha of 1.6 on the race's de-en
model they grew by a quarter; `experiments/glossary/README.md`).

The state of each live hypothesis is three tensors: `met` (R, M), the terms it has produced;
`cur` (R,), the term it is in the middle of (-1: none); `pos` (R,), the pieces of it produced.
Leaving a term half-way loses its progress (a piece that starts a term starts it afresh). Terms
are unordered; of two unmet terms with the same first piece, the first listed is started.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

Candidates = tuple[Tensor, Tensor, Tensor]  # (B', 2K) cumulative log P, beam, token


class Constraints:
    """The terms of each sentence of a batch, and the state of its live hypotheses.

    Args:
        terms: per sentence, its terms as piece ids (none: an empty tuple).
        K: the beam size.
    """

    def __init__(
        self,
        terms: list[tuple[tuple[int, ...], ...]],
        K: int,
        device: Any,
        glue: Tensor | None = None,
    ) -> None:
        B, M = len(terms), max([1, *map(len, terms)])
        L = max([1, *(len(x) for t in terms for x in t)])
        ids = torch.full((B, M, L), -1, dtype=torch.long)  # (B, M, L)
        lengths = torch.zeros((B, M), dtype=torch.long)  # (B, M), 0: no term
        for b, sentence in enumerate(terms):
            for m, term in enumerate(sentence):
                ids[b, m, : len(term)], lengths[b, m] = torch.tensor(term), len(term)
        self.K = K
        self.ids, self.lengths = ids.to(device), lengths.to(device)
        self.constrained = [bool(t) for t in terms]
        self.most = int(lengths.sum(1).max())  # the fullest bank
        self.met = (self.lengths == 0).repeat_interleave(K, 0)  # (B*K, M): no term counts as met
        self.cur = torch.full((B * K,), -1, dtype=torch.long, device=device)
        self.pos = torch.zeros((B * K,), dtype=torch.long, device=device)
        self.glue = None if glue is None else glue.to(device)  # (V,) pieces that go on a word
        self.ended = torch.zeros((B * K,), dtype=torch.bool, device=device)  # a term just met
        self.term_log_prob = torch.zeros((B * K,), device=device)  # (R,) of the pieces it took

    def rules(self, scores: Tensor, eos_id: int) -> Tensor:
        """Scores (R, V) with eos at -inf where a row has unmet terms, and, where its last piece
        completed a term, every piece that would go on with that word."""
        unmet = ~self.met.all(dim=1)  # (R,)
        eos = scores[:, eos_id].masked_fill(unmet, -math.inf)
        scores = scores.index_copy(1, torch.tensor([eos_id], device=scores.device), eos[:, None])
        if self.glue is None:
            return scores
        return scores.masked_fill(self.ended[:, None] & self.glue[None, :], -math.inf)

    def select(
        self, scores: Tensor, log_probs: Tensor, found: Candidates, active: list[int]
    ) -> Candidates:
        """The ordinary candidates `found`, with those of the constrained sentences replaced by
        their bank-allocated ones (see the module docstring); same shapes.

        Args:
            scores: (B', K) log P of the live hypotheses.
            log_probs: (B'*K, V) scores of their next tokens, the rules applied.
            active: the sentence of each of the B' blocks.
        """
        which = [i for i, s in enumerate(active) if self.constrained[s]]
        if not which:
            return found
        device = scores.device
        ci = torch.tensor(which, device=device)  # (n,) constrained blocks
        sent = torch.tensor(active, device=device)[ci]  # (n,) their sentences
        beams, tokens = self._candidates(log_probs, found, ci, sent)  # (n, N) each
        n, N = beams.shape
        K, V = self.K, log_probs.shape[1]
        lp = log_probs.view(-1, K * V)[ci]  # (n, K*V)
        total = scores[ci].gather(1, beams) + lp.gather(1, beams * V + tokens.clamp(min=0))
        total = total.masked_fill(tokens < 0, -math.inf)  # (n, N)
        key = beams * V + tokens  # one per (beam, token): keep its first appearance
        earlier = torch.ones(N, N, dtype=torch.bool, device=device).tril(-1)  # [i, j]: j < i
        total = total.masked_fill(
            ((key[:, :, None] == key[:, None, :]) & earlier).any(-1), -math.inf
        )
        rows = (ci[:, None] * K + beams).flatten()  # (n*N,) the parent rows
        met, _, pos, _ = self.step(rows, tokens.flatten().clamp(min=0), sent.repeat_interleave(N))
        bank = (met.view(n, N, -1) * self.lengths[sent][:, None, :]).sum(-1) + pos.view(n, N)
        order = self._round_robin(total, bank)[:, : 2 * K]  # (n, 2K)
        out = [t.clone() for t in found]
        for into, value in zip(out, (total, beams, tokens), strict=True):
            into[ci] = value.gather(1, order)
        return out[0], out[1], out[2]

    def _candidates(
        self, log_probs: Tensor, found: Candidates, ci: Tensor, sent: Tensor
    ) -> tuple[Tensor, Tensor]:
        """(n, N) beam and token of each candidate of the constrained blocks ci; token -1: none."""
        K, M = self.K, self.ids.shape[1]
        n, device = len(ci), log_probs.device
        rows = (ci[:, None] * K + torch.arange(K, device=device)).flatten()  # (n*K,)
        cur, pos, met = self.cur[rows], self.pos[rows], self.met[rows]  # (n*K,), (n*K, M)
        ids = self.ids[sent].repeat_interleave(K, 0)  # (n*K, M, L)
        going = ids[torch.arange(n * K, device=device), cur.clamp(min=0), pos]  # (n*K,)
        first = ids[:, :, 0]  # (n*K, M)
        terms = torch.arange(M, device=device)
        may = torch.where(
            (cur >= 0)[:, None], terms[None, :] == cur[:, None], ~met & (first >= 0)
        )  # (n*K, M)
        nexts = torch.where(cur[:, None] >= 0, going[:, None], first).masked_fill(~may, -1)
        live = found[0][ci].isfinite()  # (n, 2K)
        top_tokens = found[2][ci].masked_fill(~live, -1)
        own = log_probs[rows].argmax(dim=-1)  # (n*K,) each beam's best piece
        arange_k = torch.arange(K, device=device)
        beams = torch.cat(
            (found[1][ci], arange_k.repeat_interleave(M).expand(n, -1), arange_k.expand(n, -1)),
            dim=1,
        )
        tokens = torch.cat((top_tokens, nexts.view(n, K * M), own.view(n, K)), dim=1)
        return beams, tokens

    def _round_robin(self, total: Tensor, bank: Tensor) -> Tensor:
        """(n, N) candidate order: by rank within its bank, then fullest bank first; -inf last."""
        N = total.shape[1]
        i = torch.arange(N, device=total.device)
        better = (total[:, None, :] > total[:, :, None]) | (
            (total[:, None, :] == total[:, :, None]) & (i[None, :] < i[:, None])
        )  # [b, i, j]: j ranks before i
        rank = ((bank[:, :, None] == bank[:, None, :]) & better).sum(-1)  # (n, N)
        order_key = rank * (self.most + 1) + (self.most - bank)
        order_key = order_key.masked_fill(~total.isfinite(), (N + 1) * (self.most + 1))
        return order_key.argsort(dim=1, stable=True)

    def step(
        self, rows: Tensor, tokens: Tensor, sent: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The state (met, cur, pos, ended) after the parent rows (C,) take `tokens` (C,)."""
        met, cur, pos = self.met[rows], self.cur[rows], self.pos[rows]
        ids, lengths = self.ids[sent], self.lengths[sent]  # (C, M, L), (C, M)
        C, M, L = ids.shape
        c = torch.arange(C, device=ids.device)
        going = ids[c, cur.clamp(min=0), pos.clamp(max=L - 1)]  # (C,)
        goes_on = (cur >= 0) & (tokens == going)
        starts = ~met & (lengths > 0) & (ids[:, :, 0] == tokens[:, None])  # (C, M)
        start = ~goes_on & starts.any(-1)
        cur = torch.where(goes_on, cur, torch.where(start, starts.int().argmax(-1), -1))
        pos = torch.where(goes_on, pos + 1, start.long())
        complete = (cur >= 0) & (pos >= lengths.gather(1, cur.clamp(min=0)[:, None])[:, 0])
        terms = torch.arange(M, device=ids.device)
        met = met | ((terms[None, :] == cur[:, None]) & complete[:, None])
        return met, cur.masked_fill(complete, -1), pos.masked_fill(complete, 0), complete

    def advance(
        self, rows: Tensor, tokens: Tensor, sentences: Tensor, log_probs: Tensor | None = None
    ) -> None:
        """The live hypotheses become the parent rows (R'',) extended by tokens (R'',);
        log_probs (R, V), the parents' scores of those tokens, where a search step chose them
        (None: a prefix's pieces, which cost nothing here)."""
        self.met, self.cur, self.pos, self.ended = self.step(rows, tokens, sentences)
        took = (self.cur >= 0) | self.ended  # (R'',) the token began, went on with or ended a term
        cost = self.term_log_prob[rows]
        if log_probs is not None:
            cost = cost + log_probs[rows, tokens].float().masked_fill(~took, 0.0)
        self.term_log_prob = cost
