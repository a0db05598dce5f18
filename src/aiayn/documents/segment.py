"""A document's running text -> sentences, and the sentences' translations -> running text.

Sentences are found by `sentencex` (Wikimedia's splitter: rules for ~250 languages, offline, no
model; chosen over `pysbd` on tests/documents/test_sentences.py's hard cases, see
docs/translation.md). A tag that runs across a sentence end joins the sentences it spans, so
that each tag is placed within one translation.
"""

from __future__ import annotations

import re

from aiayn.documents.inline import Node, Span, Tagged

LETTER = re.compile(r"[^\W\d_]")  # a text without letters (numbers, symbols) is kept as it is


def split_sentences(text: str, language: str = "en") -> list[str]:
    """The sentences of one paragraph, stripped, in order; their concatenation with single
    spaces between them is the paragraph with its whitespace runs collapsed."""
    from sentencex import segment

    return [s.strip() for s in segment(language, text) if s.strip()]


def bounds(text: str, sentences: list[str]) -> list[tuple[int, int]]:
    """Where each sentence lies in `text` (character offsets)."""
    found, cursor = [], 0
    for s in sentences:
        start = text.find(s, cursor)
        if start < 0:  # the splitter changed a character: keep the rest as one piece
            found.append((cursor, len(text.rstrip())))
            return found
        found.append((start, start + len(s)))
        cursor = start + len(s)
    return found


def sentences_of(unit: Tagged, language: str = "en") -> list[Tagged]:
    """One unit of running text (a paragraph, a heading, a table cell) as sentences, each with
    the spans that lie within it; a span across a sentence end joins the sentences."""
    text = unit.text
    if not text.strip():
        return [unit] if unit.spans else []  # an image alone: written back as it is
    places = bounds(text, split_sentences(text, language))
    for span in unit.spans:  # merge the sentences a span runs across
        if span.void:
            continue
        inside = [k for k, (a, b) in enumerate(places) if a < span.end and b > span.start]
        if len(inside) > 1:
            first, last = inside[0], inside[-1]
            places[first : last + 1] = [(places[first][0], places[last][1])]
    # whitespace between sentences belongs to the one before; a leading run to the first
    regions = [
        (0 if k == 0 else a, places[k + 1][0] if k + 1 < len(places) else len(text))
        for k, (a, _) in enumerate(places)
    ]
    return [cut(unit, a, b, region) for (a, b), region in zip(places, regions, strict=True)]


def cut(unit: Tagged, start: int, end: int, region: tuple[int, int]) -> Tagged:
    """The sentence text[start:end] with the spans that begin in its region, shifted."""
    lo, hi = region

    def shift(span: Span) -> Span:
        return Span(
            min(max(span.start - start, 0), end - start),
            min(max(span.end - start, 0), end - start),
            span.payload,
            span.void,
            tuple(shift(c) for c in span.children),
        )

    mine = tuple(
        shift(s) for s in unit.spans if lo <= s.start < hi or (s.start == hi == len(unit.text))
    )
    return Tagged(unit.text[start:end], mine, unit.line)


def needs_translation(sentence: Tagged) -> bool:
    return bool(LETTER.search(sentence.text))


def join(sentences: list[list[Node]]) -> list[Node]:
    """Translated sentences back into running text, one space between them."""
    out: list[Node] = []
    for k, nodes in enumerate(sentences):
        if k:
            out.append(" ")
        out.extend(nodes)
    return out
