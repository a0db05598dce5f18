"""Glossaries: source term TAB target term [TAB exact|inflect], one pair a line. A term applies
to a sentence when its source words occur in it as whole words (case-insensitive unless asked).
An exact term's target words must then appear in the translation as written
(decode/controls/constraints.py makes the search keep them); an `inflect` term is given to a
term-aware model inline in the source (data/term_tags.py), which places and inflects it. A
model without term tags constrains every term.

Matching is Python's `re` on word boundaries (`\\b`-like lookarounds over `\\w`), with the terms
indexed by their first word so that a large glossary costs a dictionary look-up per word of a
line, not a regular expression per term.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

WORD = re.compile(r"\w+")
# A word of a text is a form of a term's word where it begins with the term word's first letters
# (all but a third of them, at least 3) and is at most this many letters longer: "Dateien" and
# "Datei", "Ordnern" and "Ordner", "Zeilen" and "Zeile" (`in_some_form`)
LONGER_BY = 4


FORMS = {"exact": True, "inflect": False}  # the optional third column: is the form required?


@dataclass(frozen=True)
class Term:
    source: str
    target: str
    where: str  # e.g. "terms.tsv, line 3": for messages
    exact: bool = True  # the target as written (constrained); False: a form the model chooses

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
        pairs: Iterable[tuple[str, ...] | list[str]], case: bool = False, name: str = "glossary"
    ) -> Glossary:
        """From (source, target[, "exact"|"inflect"]) entries, e.g. an API request's; `name`
        for messages."""
        terms = []
        for i, pair in enumerate(pairs):
            if len(pair) not in (2, 3):
                raise ValueError(
                    f"{name} entry {i}: {list(pair)!r} is not a pair; give [source, target] or "
                    '[source, target, "exact"|"inflect"]'
                )
            where = f"{name} entry {i}"
            terms.append(Term(pair[0], pair[1], where, exact_form(pair[2:], where)))
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
            if len(parts) not in (2, 3):
                what = "no tab" if len(parts) == 1 else f"{len(parts) - 1} tabs"
                raise ValueError(
                    f"{path}, line {n}: {line!r} has {what}; write `source term<TAB>target term` "
                    "(and optionally `<TAB>exact` or `<TAB>inflect`)"
                )
            where = f"{path}, line {n}"
            form = exact_form([x.strip() for x in parts[2:]], where)
            terms.append(Term(parts[0].strip(), parts[1].strip(), where, form))
        return Glossary(tuple(terms), case)

    def _candidates(self, line: str) -> list[tuple[Term, re.Pattern[str]]]:
        """The terms whose first word is a word of `line`: the only ones that can occur."""
        words = set(WORD.findall(self._fold(line)))
        return [found for w in words for found in self._index.get(w, [])]

    def terms_for(self, line: str) -> list[Term]:
        """The terms whose source occurs in `line`, in glossary order."""
        found = [t for t, p in self._candidates(line) if p.search(line)]
        order = {id(t): i for i, t in enumerate(self.terms)}
        return sorted(found, key=lambda t: order[id(t)])

    def matches(self, line: str) -> list[tuple[int, int, Term]]:
        """Where terms occur in `line`: (start, end, term) in order, none overlapping; of two
        that overlap, the one starting first, then the longer, is kept."""
        spans = [
            (m.start(), m.end(), t) for t, p in self._candidates(line) for m in p.finditer(line)
        ]
        spans.sort(key=lambda x: (x[0], -x[1]))
        kept: list[tuple[int, int, Term]] = []
        for span in spans:
            if not kept or span[0] >= kept[-1][1]:
                kept.append(span)
        return kept


def exact_form(column: list[str] | tuple[str, ...], where: str) -> bool:
    """The third column's meaning: none or "exact" -> True, "inflect" -> False."""
    if not column:
        return True
    if column[0].lower() not in FORMS:
        raise ValueError(
            f"{where}: third column {column[0]!r}; write exact (the target as written, the "
            "default) or inflect (a term-aware model chooses its form)"
        )
    return FORMS[column[0].lower()]


def word_forms(text: str) -> list[str]:
    """The words of `text` as `in_some_form` compares them: case-folded, without diacritics."""
    return WORD.findall(_folded(text))


def in_some_form(target: str, have: list[str]) -> bool:
    """Whether a text whose words are `have` (`word_forms`) holds the term `target` in some
    form, by the shape of its words alone (any language, no lemmatizer): the term's words, in
    order and in a row, each a form of the term's word (LONGER_BY), case and diacritics ignored
    ("Häuser" is a form of "Haus"). How often it agrees with simplemma's lemmas:
    benchmarks/README.md, the term table."""
    want = word_forms(target)
    n = len(want)
    return n > 0 and any(
        all(_form_of(w, h) for w, h in zip(want, have[i : i + n], strict=True))
        for i in range(len(have) - n + 1)
    )


def _folded(text: str) -> str:
    """Case-folded, without diacritics (decomposed, the combining marks dropped)."""
    return "".join(
        c for c in unicodedata.normalize("NFD", text.casefold()) if not unicodedata.combining(c)
    )


def _form_of(word: str, found: str) -> bool:
    stem = max(3, len(word) - len(word) // 3)
    return found.startswith(word[:stem]) and len(found) <= len(word) + LONGER_BY
