"""Term-aware training and translation (Dinu et al. 2019; annotated with the termbase's form,
the lemma, as Bergmanis & Pinnis 2021 do, so the model learns to inflect): a source term is
followed inline by its target term, between tags that are single pieces,

    Open the <t> files <t=> Datei </t> now.

`aiayn prepare --terms TERMBASE` writes a training source so wherever a term's source occurs in
it and its target, in any form (the same lemmas, data/lemmas.py), in the target: the model
learns to carry the term over and to give it the form the sentence needs. A model whose
vocabulary holds the tags is term-aware: a glossary's terms reach it the same way at
translation (decode/translate.py). The tags are input only: the tokenizer drops them from any
output."""

from __future__ import annotations

from dataclasses import dataclass

from aiayn.data.glossary import Glossary, Term
from aiayn.data.lemmas import Lemmas

TERM_OPEN, TERM_TARGET, TERM_CLOSE = "<t>", "<t=>", "</t>"
TERM_TAGS = (TERM_OPEN, TERM_TARGET, TERM_CLOSE)


def annotated(line: str, found: list[tuple[int, int, Term]]) -> str:
    """`line` with each (start, end, term) span followed by its target term, tagged; the spans
    in order, none overlapping (`Glossary.matches`)."""
    out, at = [], 0
    for start, end, term in found:
        tagged = f"{TERM_OPEN} {line[start:end]} {TERM_TARGET} {term.target} {TERM_CLOSE}"
        out += [line[at:start], tagged]
        at = end
    return "".join([*out, line[at:]])


def with_terms(line: str, glossary: Glossary) -> str:
    """A line to translate, every glossary term found in it annotated (exact or not)."""
    return annotated(line, glossary.matches(line))


@dataclass
class TermAnnotator:
    """Annotates training sources: a term where the pair's target uses it in some form."""

    glossary: Glossary
    lemmas: Lemmas  # of the target language
    pairs: int = 0  # training pairs annotated
    terms: int = 0  # annotations written

    def __call__(self, src: str, tgt: str) -> str:
        found = self.glossary.matches(src)
        if found:  # the target's lemmas, once for all its terms
            have = self.lemmas.of(tgt)
            found = [m for m in found if self.lemmas.uses(m[2].target, have)]
        if not found:
            return src
        self.pairs += 1
        self.terms += len(found)
        return annotated(src, found)
