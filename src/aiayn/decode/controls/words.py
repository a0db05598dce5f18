"""A translation call's controls in words (`Controls`: target prefixes, a glossary, suppressed
words), checked and turned into each sentence's piece ids (`sentence_controls`) for the search.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import torch

from aiayn.config import DecodeConfig
from aiayn.data.glossary import Glossary, Term
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.controls.steering import SentenceControls


@dataclass(frozen=True)
class Controls:
    """What a translation may be asked besides the search.

    target_prefix: per input line, the text its translation starts with ("" none); None: no
        prefixes. `prefix_from` names where they come from, for messages.
    glossary: terms whose target must appear where their source does (as written, or, for
        a term-aware model and an `inflect` term, in the form the model chooses).
    suppress: words (each a sequence of pieces) the translation must never contain.
    """

    target_prefix: tuple[str, ...] | None = None
    glossary: Glossary | None = None
    suppress: tuple[str, ...] = ()
    prefix_from: str = "target_prefix"

    def __post_init__(self) -> None:
        blocked = {w.strip() for w in self.suppress}
        if "" in blocked:
            raise ValueError("suppress: an empty word; give the words to suppress")
        for term in self.glossary.terms if self.glossary else ():
            both = blocked & {term.target, *term.target.split()}
            if both:
                raise ValueError(
                    f"{term.where}: the target term {term.target!r} is also suppressed "
                    f"({', '.join(map(repr, sorted(both)))}); drop one of them"
                )

    def __bool__(self) -> bool:
        return bool(self.target_prefix is not None or self.glossary or self.suppress)

    def of_lines(self, rows: list[int]) -> Controls:
        """The controls of some input lines only, in that order: their prefixes (the glossary
        and the suppressed words are every line's)."""
        if self.target_prefix is None:
            return self
        return replace(self, target_prefix=tuple(self.target_prefix[i] for i in rows))

    def check_lines(self, n: int) -> None:
        """One prefix per input line, or none."""
        if self.target_prefix is not None and len(self.target_prefix) != n:
            k = len(self.target_prefix)
            which = f"input line {k + 1} has none" if k < n else f"line {n + 1} has no input"
            raise ValueError(
                f"{self.prefix_from}: {k} prefix line(s) for {n} input line(s) ({which}); "
                "give one per input line, an empty line for none"
            )


def sentence_controls(
    controls: Controls | None,
    tokenizer: Tokenizer,
    lines: list[str],
    cfg: DecodeConfig,
    insist: list[frozenset[Term]] | None = None,
) -> list[SentenceControls | None]:
    """Each line's controls in piece ids (None: none). A term longer than the line's output
    limit is an error; terms that cannot all fit are named in a warning (best effort).
    insist: per line, `inflect` terms a term-aware model is to be held to as written too (those
    it left out: decode/translate.py); one that cannot fit is left to the model."""
    if not controls:
        return [None] * len(lines)
    controls.check_lines(len(lines))
    # a word with no piece (control characters alone) can never be produced: nothing to bar
    suppress = tuple(tuple(x) for x in tokenizer.encode(list(controls.suppress)) if x)
    glue = word_glue(tokenizer) if controls.glossary else None
    prefixes = controls.target_prefix or ("",) * len(lines)
    prefix_ids = tokenizer.encode(list(prefixes))
    lengths = [min(len(x), cfg.max_input_tokens) for x in tokenizer.encode(lines)]
    out: list[SentenceControls | None] = []
    for n, line in enumerate(lines):
        terms = controls.glossary.terms_for(line) if controls.glossary else []
        held = insist[n] if insist else frozenset()
        if tokenizer.term_aware:  # the model reads every term inline; only exact ones constrain
            terms = [t for t in terms if t.exact or t in held]
        ids = [tuple(x) for x in tokenizer.encode([t.target for t in terms])] if terms else []
        limit = max(1, int(cfg.max_len_a * (lengths[n] + 1) + cfg.max_len_b))
        if held:
            terms, ids = fitting(terms, ids, held, limit)
        fit(terms, ids, len(prefix_ids[n]), limit, n + 1)
        found = SentenceControls(tuple(prefix_ids[n]), tuple(ids), suppress, glue)
        out.append(found if found and line.strip() else None)
    return out


def word_glue(tokenizer: Tokenizer) -> torch.Tensor:
    """(V,) bool: the pieces that go on with the word before them (no "▁", a letter or digit
    first), which may not follow a completed glossary term."""
    pieces = tokenizer.pieces(range(tokenizer.vocab_size))
    return torch.tensor([not p.startswith("▁") and p[:1].isalnum() for p in pieces])


def fitting(
    terms: list[Term], ids: list[tuple[int, ...]], held: frozenset[Term], limit: int
) -> tuple[list[Term], list[tuple[int, ...]]]:
    """The terms, less the insisted ones with no piece or longer than the output limit."""
    keep = [t not in held or 0 < len(x) < limit for t, x in zip(terms, ids, strict=True)]
    return (
        [t for t, k in zip(terms, keep, strict=True) if k],
        [x for x, k in zip(ids, keep, strict=True) if k],
    )


def fit(terms: list[Term], ids: list[tuple[int, ...]], prefix: int, limit: int, line: int) -> None:
    """Check that a line's terms fit its output limit (eos included) after its prefix."""
    for term, x in zip(terms, ids, strict=True):
        if not x:
            raise ValueError(
                f"{term.where}: target term {term.target!r} has no piece in this model's "
                "vocabulary (no character it can write); give a term in words"
            )
        if len(x) + 1 > limit:
            raise ValueError(
                f"{term.where}: target term {term.target!r} has {len(x)} pieces, more than the "
                f"output limit of input line {line} ({limit} with eos) allows; shorten the term "
                "or raise --max-len-b"
            )
    if prefix + sum(map(len, ids)) + 1 > limit:
        named = "; ".join(map(str, terms))
        print(
            f"warning: input line {line}: its terms ({named}) and prefix do not all fit its "
            f"output limit of {limit} pieces: best effort (raise --max-len-b)",
            file=sys.stderr,
        )
