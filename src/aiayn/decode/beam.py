"""Batched beam search on the key/value cache (paper section 6.1: beam 4, alpha 0.6).

Each step, from the beams `start` makes: the next token's log-probabilities of every live
hypothesis (expand), under the rules and controls (score); the 2K best continuations per
sentence (select); those ending in eos to the sentence's finished list (finalize); and the K
best others go on (carry_on). When a sentence is done depends on the stopping rule:

- "bound" (the paper's, as tensor2tensor implements it): once no live hypothesis can still beat
  the n-th best finished one under the length penalty. Log-probabilities only fall as a
  hypothesis grows, so the best a live one can reach is its log P now over the largest length
  penalty it could still get (at the length limit).
- "k-finished" (fairseq's): as soon as K hypotheses have finished. Short hypotheses finish
  first, so this rule favours them.

Either way a sentence is done at its length limit; done sentences leave the active batch, so the
work shrinks as the batch finishes. Every sentence is searched independently: in float32 its
result does not depend on its batch mates. In bf16 and int8 the arithmetic can (rounding that
follows the batch's matrix shapes; dynamic int8's one activation scale per call), which
`benchmarks/serve_bench.py` measures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import torch
from torch import Tensor

from aiayn.config import LENGTH_PENALTIES, DecodeConfig
from aiayn.decode.controls.steering import SentenceControls, Steering
from aiayn.decode.protocols import CacheT, DecodingModel
from aiayn.decode.rules import (
    apply_rules,
    block_repeats,
    block_stutter,
    check_deadline,
    max_lengths,
)


@dataclass(frozen=True)
class Hypothesis:
    tokens: list[int]  # without bos and eos
    score: float  # log P(Y|X) / lp(Y)
    log_prob: float  # log P(Y|X), eos included


class Sentence:
    """The finished hypotheses of one source sentence under the search `cfg`, best first.

    The search offers it each candidate that ends in eos among its step's K best and asks it
    whether the sentence is done; `search_grid.GridSentence` answers for many settings at once.
    """

    def __init__(self, cfg: DecodeConfig) -> None:
        self.cfg = cfg
        self.finished: list[Hypothesis] = []

    def offer(self, words: list[int], log_prob: float, t: int, fixed: float = 0.0) -> None:
        """A hypothesis that ended with eos at step t (words without bos and eos); `fixed`: the
        part of log_prob that the length penalty does not divide (its glossary terms')."""
        cfg = self.cfg
        if cfg.stop == "k-finished" and len(self.finished) >= cfg.beam:
            return
        lp = length_penalty(len(words) + 1, cfg.alpha, cfg.length_penalty)
        self.finished.append(Hypothesis(words, (log_prob - fixed) / lp + fixed, log_prob))
        self.finished.sort(key=lambda h: h.score, reverse=True)  # stable: the first of equals
        del self.finished[cfg.beam :]

    def done(self, best_live: float, t: int, limit: int) -> bool:
        """Whether the search may stop, by the stopping rule (see the module docstring).

        Args:
            best_live: log P of the best live hypothesis, which has t output tokens (no eos).
            limit: the sentence's length limit in output tokens, eos included.
        """
        cfg = self.cfg
        if cfg.stop == "k-finished":
            return len(self.finished) >= cfg.beam
        if len(self.finished) < cfg.nbest:
            return False
        return self.finished[cfg.nbest - 1].score >= best_live / lp_max(t, limit, cfg)

    def best(self) -> list[Hypothesis]:
        return self.finished[: self.cfg.nbest]


class Finishing(Protocol):
    """What the search asks of a sentence's finished list: `Sentence`'s `offer` and `done`."""

    finished: list  # what it was offered and kept

    def offer(self, words: list[int], log_prob: float, t: int, fixed: float = 0.0) -> None: ...

    def done(self, best_live: float, t: int, limit: int) -> bool: ...


F = TypeVar("F", bound=Finishing)


def lp_max(t: int, limit: int, cfg: DecodeConfig) -> float:
    """The largest length penalty a hypothesis live after step t can still get: it ends with
    between t + 1 and `limit` tokens, and lp is monotone in the length, so at an end."""
    return max(length_penalty(n, cfg.alpha, cfg.length_penalty) for n in (t + 1, limit))


def length_penalty(length: int, alpha: float, kind: str = "gnmt") -> float:
    """lp(Y): GNMT's ((5 + |Y|) / 6)^alpha (the paper's), |Y|^alpha (fairseq, Marian, HF), or 1.

    |Y| counts the output tokens including eos.
    """
    if kind == "gnmt":
        return ((5.0 + length) / 6.0) ** alpha
    if kind == "power":
        return float(length) ** alpha
    if kind == "none":
        return 1.0
    raise ValueError(f"unknown length penalty {kind!r}; choose one of {LENGTH_PENALTIES}")


@torch.inference_mode()
def beam_search(
    model: DecodingModel[CacheT],
    src: Tensor,
    cfg: DecodeConfig,
    controls: list[SentenceControls | None] | None = None,
) -> list[list[Hypothesis]]:
    """The `nbest` best hypotheses of each sentence, best first.

    Args:
        model: in eval mode.
        src: (B, S) source ids ending with eos, right-padded.
        controls: per sentence, its prefix, terms and suppressed sequences (controls/steering.py).
    """
    terms = [c is not None and bool(c.terms) for c in controls or ()]
    terms_cfg = cfg.for_terms() if any(terms) else cfg  # their own length setting, if any

    def sentence(i: int) -> Sentence:
        return Sentence(terms_cfg if terms and terms[i] else cfg)

    return [s.best() for s in search(model, src, cfg, sentence, controls)]


@dataclass(frozen=True)
class Beams(Generic[CacheT]):
    """The live hypotheses between two steps: K rows for each sentence still searched."""

    tokens: Tensor  # (B'*K, t) each row's tokens so far, bos first
    scores: Tensor  # (B', K) log P of each row; -inf where a row is not live
    cache: CacheT  # the decoder's cache, row for row
    active: list[int]  # the sentence of each block of K rows


@torch.inference_mode()
def search(
    model: DecodingModel[CacheT],
    src: Tensor,
    cfg: DecodeConfig,
    sentence: Callable[[int], F],
    controls: list[SentenceControls | None] | None = None,
) -> list[F]:
    """The beam search itself: each sentence's finished list (made by `sentence(i)` for row i
    of src) is offered its finished hypotheses and decides when the sentence is done. cfg:
    beam, limits, min_len. controls: per sentence (or None), what `Steering` applies at each
    step. Each step expands the beams, scores the continuations, selects the best, finalizes
    those that end and carries the others on."""
    special, K = model.cfg, cfg.beam  # the model's pad, bos and eos ids; the beam size
    a, b, cap = cfg.max_len_a, cfg.max_len_b, cfg.max_output_tokens
    limit = max_lengths(src, special.pad_id, a, b, cap).tolist()  # per sentence
    steer = Steering.of(controls, K, src.device)  # None without controls
    limit = steer.limits(limit) if steer else limit
    results = [sentence(i) for i in range(src.shape[0])]
    beams = start(model, src, K, max(limit), steer)
    for t in range(beams.tokens.shape[1], max(limit) + 1):
        check_deadline(cfg.deadline, t)
        log_probs, cache = expand(model, beams.tokens[:, -1:], beams.cache)  # (B'*K, V)
        log_probs = score(log_probs, beams, t, limit, cfg, special.eos_id, steer)
        candidates = select(beams.scores, log_probs, K)  # (B', 2K) each
        if steer:
            candidates = steer.select(beams.scores, log_probs, candidates, beams.active)
        keep_rows, keep_tokens, keep_scores, done = finalize(
            *candidates,
            beams.tokens,
            beams.active,
            results,
            limit,
            t,
            K,
            special.eos_id,
            steer.finishing() if steer else None,
        )
        if all(done):
            break
        beams, rows = carry_on(beams, cache, keep_rows, keep_tokens, keep_scores, done)
        if steer:
            steer.advance(rows, beams.tokens[:, -1], beams.active, log_probs)
    return results


def start(
    model: DecodingModel[CacheT], src: Tensor, K: int, capacity: int, steer: Steering | None
) -> Beams[CacheT]:
    """The beams before the first step: each sentence's K rows hold bos (and the target prefix
    its controls give, decoded in one pass); only the first of them is live."""
    bos_id, B = model.cfg.bos_id, src.shape[0]
    cache = model.init_cache(model.encode(src), capacity=capacity)
    prefilled, cache = steer.prefill(model, cache, bos_id) if steer else (None, cache)
    cache = cache.expand(K)  # K hypotheses share each source
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)  # (B*K, t)
    if prefilled is not None:  # (B, 1 + n): bos and the prefix decoded in one pass
        tokens = prefilled.repeat_interleave(K, dim=0)
    # log P of each live hypothesis; at the start only the first of each K is live
    scores = torch.full((B, K), -math.inf, device=src.device)  # (B', K)
    scores[:, 0] = 0.0
    return Beams(tokens, scores, cache, list(range(B)))


def expand(model: DecodingModel[CacheT], last: Tensor, cache: CacheT) -> tuple[Tensor, CacheT]:
    """Log-probabilities of the next token for every live hypothesis: (B'*K, V)."""
    decoded = model.decode(last, cache=cache)
    assert decoded.logits is not None and decoded.cache is not None  # a projected cached step
    logits = decoded.logits[:, -1]  # (B'*K, V)
    log_probs = logits if decoded.normalized else torch.log_softmax(logits.float(), dim=-1)
    return log_probs, decoded.cache


def score(
    log_probs: Tensor,
    beams: Beams,
    t: int,
    limit: list[int],
    cfg: DecodeConfig,
    eos_id: int,
    steer: Steering | None,
) -> Tensor:
    """Step t's log-probabilities (B'*K, V) under the rules every search obeys (the length
    limit, min_len, no repeated n-grams, no stutter) and the sentences' controls."""
    if steer:
        log_probs = steer.before_rules(log_probs, beams.tokens, beams.active, eos_id)
    device = beams.tokens.device
    at_limit = torch.tensor([limit[s] <= t for s in beams.active], device=device)  # (B',)
    log_probs = apply_rules(log_probs, t, at_limit.repeat_interleave(cfg.beam), cfg.min_len, eos_id)
    if cfg.no_repeat_ngram:
        log_probs = block_repeats(log_probs, beams.tokens[:, 1:], cfg.no_repeat_ngram)
    if cfg.stutter_guard:
        log_probs = block_stutter(log_probs, beams.tokens[:, 1:], cfg.stutter_guard)
    if steer:
        log_probs = steer.after_rules(log_probs, t)
    return log_probs


def select(scores: Tensor, log_probs: Tensor, K: int) -> tuple[Tensor, Tensor, Tensor]:
    """The 2K best continuations of each sentence (2K, so that K remain if K end in eos).

    Returns:
        (B', 2K) cumulative log P, the beam each extends, and its new token.
    """
    Bp, V = scores.shape[0], log_probs.shape[-1]
    total = scores[:, :, None] + log_probs.view(Bp, K, V)  # (B', K, V)
    # In two stages, the same 2K: each beam's 2K best, then the best 2K of those K * 2K
    # (a third faster than one top-k over K * V)
    per_beam = min(2 * K, V)
    row_best, row_token = total.topk(per_beam, dim=-1)  # (B', K, 2K)
    best, pick = row_best.view(Bp, K * per_beam).topk(2 * K, dim=-1)  # (B', 2K)
    return best, pick // per_beam, row_token.view(Bp, -1).gather(1, pick)


def finalize(
    cand_scores: Tensor,
    cand_beam: Tensor,
    cand_token: Tensor,
    tokens: Tensor,
    active: list[int],
    results: list[F],
    limit: list[int],
    t: int,
    K: int,
    eos_id: int,
    terms: tuple[Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor, list[bool]]:
    """Offer candidates ending in eos to their sentence's finished list; choose the K that go on.
    terms: (B'*K,) each per live row, the log P of its glossary terms' pieces, which the length
    penalty does not divide, and whether it has left a term unmet (it ends so only at the length
    limit, and is offered only where nothing has finished); None: no terms.

    Returns:
        (B', K) beam each survivor extends, its token and its score; and per active block
        whether its sentence is done.
    """
    Bp = cand_scores.shape[0]
    keep_beam = [[0] * K for _ in range(Bp)]  # plain lists: element-wise tensor writes are slow
    keep_token = [[0] * K for _ in range(Bp)]
    keep_score = [[-math.inf] * K for _ in range(Bp)]
    done = []
    scores, beams, toks = cand_scores.tolist(), cand_beam.tolist(), cand_token.tolist()
    per_row = list(zip(terms[0].tolist(), terms[1].tolist(), strict=True)) if terms else None
    for i, sentence in enumerate(active):
        result, n_kept = results[sentence], 0
        for rank, (score, beam, token) in enumerate(zip(scores[i], beams[i], toks[i], strict=True)):
            if score == -math.inf:
                break
            if token == eos_id:  # as in fairseq: eos counts among the K best candidates only
                if rank < K:
                    row = i * K + beam
                    fixed, unmet = per_row[row] if per_row else (0.0, False)
                    # a term unmet (best effort at the length limit): only where none finished
                    if not unmet or not result.finished:
                        result.offer(tokens[row, 1:].tolist(), score, t, fixed)  # no bos
            elif n_kept < K:
                keep_beam[i][n_kept], keep_token[i][n_kept] = beam, token
                keep_score[i][n_kept] = score
                n_kept += 1
        over = t >= limit[sentence] or n_kept == 0
        # the best live log P: the first kept, but for a constrained sentence (kept by bank)
        done.append(over or result.done(max(keep_score[i]), t, limit[sentence]))
    device = cand_scores.device
    return (
        torch.tensor(keep_beam, device=device),
        torch.tensor(keep_token, device=device),
        torch.tensor(keep_score, device=device),
        done,
    )


def carry_on(
    beams: Beams[CacheT],
    cache: CacheT,
    keep_rows: Tensor,
    keep_tokens: Tensor,
    keep_scores: Tensor,
    done: list[bool],
) -> tuple[Beams[CacheT], Tensor]:
    """The beams of the sentences not done: each row kept by `finalize` (its beam, new token
    and score, (B', K) each) extends its parent, and `cache` (the step's) follows. Also
    returns the parent rows (B''*K,), for the controls."""
    K = beams.scores.shape[1]
    still = [i for i, d in enumerate(done) if not d]  # active blocks that go on
    block = torch.tensor(still, device=beams.tokens.device)
    rows = (block[:, None] * K + keep_rows[block]).flatten()  # (B''*K,)
    cache = cache.reorder(rows, None if len(still) == len(done) else block)
    tokens = torch.cat((beams.tokens[rows], keep_tokens[block].flatten()[:, None]), dim=1)
    scores = keep_scores[block]  # (B'', K)
    return Beams(tokens, scores, cache, [beams.active[i] for i in still]), rows
