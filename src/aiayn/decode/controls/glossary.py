"""Glossaries: source term TAB target term, one pair a line. A term applies to a sentence when
its source words occur in it as whole words (case-insensitive unless asked); its target words
must then appear in the translation (constraints.py makes the search keep them).

Matching is Python's `re` on word boundaries (`\\b`-like lookarounds over `\\w`), with the terms
indexed by their first word so that a large glossary costs a dictionary look-up per word of a
line, not a regular expression per term.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Term:
    source: str
    target: str
    where: str  # e.g. "terms.tsv, line 3": for messages

    def __str__(self) -> str:
        return f"{self.source!r} -> {self.target!r} ({self.where})"


@dataclass(frozen=True)
class Glossary:
    """Term pairs; `case` True matches source words exactly, else case-insensitively."""

    terms: tuple[Term, ...]
    case: bool = False
    _index: dict[str, list[tuple[Term, re.Pattern[str]]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        index: dict[str, list[tuple[Term, re.Pattern[str]]]] = defaultdict(list)
        seen: dict[str, Term] = {}
        for term in self.terms:
            if not term.source.strip() or not term.target.strip():
                side = "source" if not term.source.strip() else "target"
                raise ValueError(f"{term.where}: the {side} term is empty in {term}; give both")
            key = self._fold(term.source.strip())
            if key in seen:
                if seen[key].target != term.target:
                    raise ValueError(
                        f"{term.where}: source term {term.source!r} already has the target "
                        f"{seen[key].target!r} ({seen[key].where}); keep one"
                    )
                continue  # the same pair twice: once is enough
            seen[key] = term
            words = WORD.findall(key)
            if not words:
                raise ValueError(f"{term.where}: the source term {term.source!r} has no word")
            flags = 0 if self.case else re.IGNORECASE
            pattern = re.compile(r"(?<!\w)" + re.escape(term.source.strip()) + r"(?!\w)", flags)
            index[words[0]].append((term, pattern))
        object.__setattr__(self, "_index", dict(index))

    def _fold(self, text: str) -> str:
        return text if self.case else text.casefold()

    @staticmethod
    def of(
        pairs: Iterable[tuple[str, str] | list[str]], case: bool = False, name: str = "glossary"
    ) -> Glossary:
        """From (source, target) pairs, e.g. an API request's; `name` for messages."""
        terms = []
        for i, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(
                    f"{name} entry {i}: {list(pair)!r} is not a pair; give [source, target]"
                )
            terms.append(Term(pair[0], pair[1], f"{name} entry {i}"))
        return Glossary(tuple(terms), case)

    @staticmethod
    def load(path: str | Path, case: bool = False) -> Glossary:
        """From a UTF-8 file of `source TAB target` lines (blank lines are skipped)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is no term
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: not valid UTF-8 ({err.reason}); convert it") from None
        terms = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                what = "no tab" if len(parts) == 1 else f"{len(parts) - 1} tabs"
                raise ValueError(
                    f"{path}, line {n}: {line!r} has {what}; write `source term<TAB>target term`"
                )
            terms.append(Term(parts[0].strip(), parts[1].strip(), f"{path}, line {n}"))
        return Glossary(tuple(terms), case)

    def terms_for(self, line: str) -> list[Term]:
        """The terms whose source occurs in `line`, in glossary order."""
        words = set(WORD.findall(self._fold(line)))
        found = [t for w in words for t, p in self._index.get(w, []) if p.search(line)]
        order = {id(t): i for i, t in enumerate(self.terms)}
        return sorted(found, key=lambda t: order[id(t)])
