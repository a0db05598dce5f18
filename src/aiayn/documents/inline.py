"""Inline markup inside a sentence (`<b>`, `<a href>`, Markdown emphasis and links, a code
span): the sentence is translated without it, then each tag is put back around the target
words aligned to the source words it wrapped (Bergamot's approach; Hanneman & Dinu 2020).

A `Tagged` sentence is plain text plus spans over its characters; `project` places each span
on the translation's words (`place`, by the `WordLinks`) so that no tag vanishes or repeats,
siblings keep their order and nesting stays valid, and `NodeWriter` turns the placement into
a tree the format writes back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Span:
    """A tag over the characters [start, end) of a sentence; a void one (an image, a line
    break, a code span left as it is) sits at `start` and wraps nothing."""

    start: int
    end: int
    payload: Any  # what the format needs to write the tag back (an element, raw Markdown)
    void: bool = False
    children: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Tagged:
    """A sentence to translate: its plain text and its top-level spans (in source order)."""

    text: str
    spans: tuple[Span, ...] = ()
    line: int = 0  # where it starts in the document (1-based; 0: unknown), for messages


# A rendered sentence: text, and (payload, children) for a tag (children None: a void tag).
Node = Any  # str | tuple[Any, list[Node] | None]


@dataclass
class _Placed:
    start: int  # target word index
    end: int
    span: Span
    children: list[_Placed] = field(default_factory=list)


def need(span: Span) -> int:
    """How many target words a span needs: none for a void one, else one, or its children's."""
    if span.void:
        return 0
    return max(1, sum(need(c) for c in span.children))


def words(text: str) -> list[tuple[int, int]]:
    """The (start, end) characters of each whitespace-separated word."""
    return [m.span() for m in WORD.finditer(text)]


def plain(nodes: list[Node]) -> tuple[str, tuple[Span, ...]]:
    """Flatten a tree of text and (payload, children) tags into a `Tagged` sentence's text and
    spans; whitespace runs become one space."""
    out: list[str] = []

    def length() -> int:
        return sum(len(x) for x in out)

    def walk(items: list[Node]) -> tuple[Span, ...]:
        spans = []
        for item in items:
            if isinstance(item, str):
                text = re.sub(r"\s+", " ", item)
                if text.startswith(" ") and (not out or out[-1].endswith(" ")):
                    text = text[1:]
                out.append(text)
                continue
            payload, kids = item
            start = length()
            if kids is None:
                spans.append(Span(start, start, payload, void=True))
            else:
                inner = walk(kids)
                spans.append(Span(start, length(), payload, children=inner))
        return tuple(spans)

    spans = walk(nodes)
    return "".join(out), spans


def project(tagged: Tagged, translation: str, pairs: set[tuple[int, int]]) -> list[Node]:
    """The translation with `tagged`'s spans placed on its words.

    Args:
        pairs: (source word, target word) alignments, words as `str.split` gives them.
    Returns:
        Text and (payload, children) nodes; every span of the source appears exactly once.
    """
    links = WordLinks.of(tagged.text, translation, pairs)
    n = len(links.target)
    return NodeWriter(links.target).emit(0, n, place(links, tagged.spans, 0, n))


@dataclass(frozen=True)
class WordLinks:
    """A sentence's source words, its translation's words and the links between them."""

    source: list[tuple[int, int]]  # (start, end) characters of each source word
    target: list[str]  # the translation's words
    aligned: dict[int, list[int]]  # source word -> the target words aligned to it

    @classmethod
    def of(cls, text: str, translation: str, pairs: set[tuple[int, int]]) -> WordLinks:
        aligned: dict[int, list[int]] = {}
        for i, j in pairs:
            aligned.setdefault(i, []).append(j)
        return cls(words(text), translation.split(), aligned)

    def hits(self, span: Span) -> list[int]:
        """The target words aligned to the source words a span covers."""
        covered = [k for k, (a, b) in enumerate(self.source) if a < span.end and b > span.start]
        return [j for w in covered for j in self.aligned.get(w, ())]

    def anchor(self, span: Span) -> int:
        """Where a void or unaligned span goes: before the target word of the first aligned
        source word at or after it; at the end when there is none."""
        after = [k for k, (a, _) in enumerate(self.source) if a >= span.start]
        found = [min(self.aligned[k]) for k in after if k in self.aligned]
        return found[0] if found else len(self.target)


def place(links: WordLinks, spans: tuple[Span, ...], lo: int, hi: int) -> list[_Placed]:
    """Each span on the hull of its aligned words, inside [lo, hi), after the sibling before it
    (order kept), leaving a word for each later sibling that wraps text."""
    placed, cursor = [], lo
    needs = [need(s) for s in spans]
    for k, span in enumerate(spans):
        limit = max(cursor, hi - sum(needs[k + 1 :]))  # room left for the later siblings
        hits = links.hits(span)
        if span.void or not hits:
            start = end = links.anchor(span)
        else:
            start, end = min(hits), max(hits) + 1
        start = min(max(start, cursor), max(cursor, limit - needs[k]))
        end = min(max(end, start + needs[k]), limit)
        end = max(end, start)
        placed.append(_Placed(start, end, span, place(links, span.children, start, end)))
        cursor = end
    return placed


class NodeWriter:
    """Placed spans written out as nodes over the target words, with one space between words
    and none inside a tag's edges."""

    def __init__(self, target: list[str]) -> None:
        self.target = target
        self.space = False  # whether the next text needs a space before it

    def emit(self, lo: int, hi: int, kids: list[_Placed]) -> list[Node]:
        """The nodes of target words [lo, hi) with the placed spans `kids` among them."""
        out: list[Node] = []
        cursor = lo
        for kid in kids:
            self.text(out, cursor, kid.start)
            if kid.span.void:
                if self.space:
                    out.append(" ")  # a void tag between words keeps a space before it
                out.append((kid.span.payload, None))
                self.space = True
            else:
                if kid.end > kid.start and self.space:
                    out.append(" ")  # the space between words goes outside the tag
                    self.space = False
                out.append((kid.span.payload, self.emit(kid.start, kid.end, kid.children)))
            cursor = max(cursor, kid.end)
        self.text(out, cursor, hi)
        return out

    def text(self, out: list[Node], a: int, b: int) -> None:
        """Target words [a, b) as one text node, if any."""
        if a < b:
            out.append((" " if self.space else "") + " ".join(self.target[a:b]))
            self.space = True


def source_nodes(tagged: Tagged) -> list[Node]:
    """A tagged sentence written back as it came (what an untranslated sentence gives)."""

    def emit(spans: tuple[Span, ...], lo: int, hi: int) -> list[Node]:
        out: list[Node] = []
        cursor = lo
        for span in spans:
            if span.start > cursor:
                out.append(tagged.text[cursor : span.start])
            kids = None if span.void else emit(span.children, span.start, span.end)
            out.append((span.payload, kids))
            cursor = max(cursor, span.end)
        if hi > cursor:
            out.append(tagged.text[cursor:hi])
        return out

    return emit(tagged.spans, 0, len(tagged.text))


def payloads(nodes: list[Node]) -> list[Any]:
    """Every tag's payload in document order (to check that none vanished or repeated)."""
    found = []
    for node in nodes:
        if not isinstance(node, str):
            found.append(node[0])
            found.extend(payloads(node[1] or []))
    return found


def text_of(nodes: list[Node]) -> str:
    """The text of a rendered sentence, tags left out."""
    return "".join(n if isinstance(n, str) else text_of(n[1] or []) for n in nodes)
