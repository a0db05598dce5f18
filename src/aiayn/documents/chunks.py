"""A sentence longer than the model's input limit (`--max-input-tokens`) cut into chunks
(`--too-long split`), each within the limit, each translated, joined again: nothing is
truncated. A chunk ends at the best boundary the limit allows: after clause punctuation
(`;`, `:`, `,`, or a sentence end the splitter missed), else between words; never inside a tag.
"""

from __future__ import annotations

from collections.abc import Callable

from aiayn.documents.inline import Tagged, words
from aiayn.documents.segment import cut

CLAUSE_END = tuple(";:,.!?")
Encode = Callable[[list[str]], list[list[int]]]


def chunk_bounds(sentence: Tagged, limit: int, encode: Encode) -> list[tuple[int, int]]:
    """The (start, end) characters of each chunk of `sentence`, each of at most about `limit`
    pieces (a word's pieces counted alone; a single word over the limit is a chunk of its own)."""
    found = words(sentence.text)
    costs = [len(x) for x in encode([sentence.text[a:b] for a, b in found])]
    inside = [any(s.start < a < s.end for s in sentence.spans if not s.void) for a, _ in found]
    out, i = [], 0
    while i < len(found):
        j, total = i, 0
        while j < len(found) and total + costs[j] <= limit:
            total, j = total + costs[j], j + 1
        if j < len(found):
            j = boundary(sentence.text, found, inside, i, max(j, i + 1))
        out.append((found[i][0], found[j - 1][1]))
        i = j
    return out


def boundary(text: str, found: list[tuple[int, int]], inside: list[bool], i: int, j: int) -> int:
    """Where a chunk of words [i, j) best ends: after the last clause punctuation in its later
    half, else before the last word that begins outside every tag, else at j."""
    free = [k for k in range(i + 1, j + 1) if k == len(found) or not inside[k]]
    clauses = [k for k in free if k - i >= (j - i) // 2 and text[found[k - 1][1] - 1] in CLAUSE_END]
    if clauses:
        return clauses[-1]
    return free[-1] if free else j


def split_long(sentences: list[Tagged], limit: int, encode: Encode) -> list[list[Tagged]]:
    """Each sentence as its chunks (itself alone when it fits): one tokenizer call for all."""
    lengths = [len(x) for x in encode([s.text for s in sentences])] if sentences else []
    return [
        [s] if n <= limit else split_sentence(s, limit, encode)
        for s, n in zip(sentences, lengths, strict=True)
    ]


def split_sentence(sentence: Tagged, limit: int, encode: Encode) -> list[Tagged]:
    """`sentence` as chunks of at most about `limit` pieces (itself when it fits), each with
    the tags that begin in it."""
    bounds = chunk_bounds(sentence, limit, encode)
    regions = [
        (0 if k == 0 else a, bounds[k + 1][0] if k + 1 < len(bounds) else len(sentence.text))
        for k, (a, _) in enumerate(bounds)
    ]
    return [cut(sentence, a, b, r) for (a, b), r in zip(bounds, regions, strict=True)]
