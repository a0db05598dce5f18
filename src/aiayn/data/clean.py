"""Validating and cleaning sentence pairs, with a report of every drop and why."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np


class Located(Protocol):
    """What the filters read of a pair (sources.Pair): its two sides and where it came from."""

    @property
    def src(self) -> str: ...
    @property
    def tgt(self) -> str: ...
    @property
    def where(self) -> str: ...


P = TypeVar("P", bound=Located)

# Drop reasons, in the order the report lists them.
INVALID_UTF8 = "invalid UTF-8"
NUL_BYTE = "NUL byte"
EMPTY = "empty side"
TOO_LONG = "too long"
RATIO = "length ratio"
DUPLICATE = "duplicate pair"
HELD_OUT_SOURCE = "source in valid/test"
REASONS = (INVALID_UTF8, NUL_BYTE, EMPTY, TOO_LONG, RATIO, DUPLICATE, HELD_OUT_SOURCE)

# Control characters that are not whitespace (those become spaces), soft hyphen, zero width, BOM.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f\u00ad\u200b\ufeff]")
SPACE = re.compile(r"\s+")
MAX_EXAMPLES = 5


@dataclass(frozen=True)
class CleanOptions:
    """Filters applied to every pair (the report names each one that dropped something)."""

    max_words: int = 250  # longest side, in whitespace-separated words
    max_ratio: float = 3.0  # longer side / shorter side, in characters...
    ratio_min_chars: int = 20  # ...checked once the longer side has this many characters
    dedup: bool = True  # drop exact repeats of a (source, target) pair


@dataclass
class CleanReport:
    """Counts of pairs read, kept and dropped by reason, with the first few places of each."""

    read: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    notes: Counter = field(default_factory=Counter)  # repairs that dropped nothing (BOM, CRLF)

    def drop(self, reason: str, where: str) -> None:
        self.dropped[reason] += 1
        places = self.examples.setdefault(reason, [])
        if len(places) < MAX_EXAMPLES:
            places.append(where)

    def lines(self) -> list[str]:
        out = [f"pairs read: {self.read:,}", f"pairs kept: {self.kept:,}"]
        for reason in REASONS:
            if self.dropped[reason]:
                places = ", ".join(self.examples.get(reason, []))
                out.append(f"  dropped ({reason}): {self.dropped[reason]:,}  e.g. {places}")
        if not sum(self.dropped.values()):
            out.append("  dropped: none")
        for note, count in sorted(self.notes.items()):
            out.append(f"  repaired ({note}): {count:,}")
        return out

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "kept": self.kept,
            "dropped": {r: self.dropped[r] for r in REASONS if self.dropped[r]},
            "examples": self.examples,
            "repaired": dict(self.notes),
        }


def normalize(text: str) -> str:
    """NFKC (as SentencePiece will see it), no control characters (BOM, soft hyphen, NUL...),
    any whitespace (tab, CR, ...) as single spaces, none at the edges."""
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    return SPACE.sub(" ", text).strip()


def decode_line(raw: bytes) -> str | None:
    """Strict UTF-8; None if the bytes are not valid UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def pair_key(src: str, tgt: str) -> int:
    """A 64-bit fingerprint of a pair, for duplicate detection with little memory."""
    digest = hashlib.blake2b(f"{src}\t{tgt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def source_key(src: str) -> int:
    """A 64-bit fingerprint of a source sentence, case- and space-insensitive."""
    digest = hashlib.blake2b(src.casefold().encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class KeySet:
    """A set of 64-bit keys kept as one sorted array (8 bytes a key), used a batch at a time."""

    def __init__(self) -> None:
        self._keys = np.zeros(0, np.uint64)

    def __len__(self) -> int:
        return len(self._keys)

    def add_new(self, keys: np.ndarray) -> np.ndarray:
        """Add a batch of keys; True for each that was not seen before (its first occurrence)."""
        first = np.zeros(len(keys), bool)
        first[np.unique(keys, return_index=True)[1]] = True
        seen = np.zeros(len(keys), bool)
        if len(self._keys):
            pos = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            seen = self._keys[pos] == keys
        new = first & ~seen
        # Two sorted runs: a stable sort merges them in linear time.
        self._keys = np.sort(np.concatenate((self._keys, np.sort(keys[new]))), kind="stable")
        return new


class PairFilter:
    """Applies the length, ratio and duplicate filters to normalized pairs, counting drops."""

    def __init__(self, options: CleanOptions, report: CleanReport) -> None:
        self.options = options
        self.report = report
        self._seen = KeySet()

    def _fits(self, src: str, tgt: str, where: str) -> bool:
        o, report = self.options, self.report
        if not src or not tgt:
            report.drop(EMPTY, where)
            return False
        if max(src.count(" "), tgt.count(" ")) + 1 > o.max_words:
            report.drop(TOO_LONG, where)
            return False
        longer, shorter = max(len(src), len(tgt)), min(len(src), len(tgt))
        if longer >= o.ratio_min_chars and longer > o.max_ratio * shorter:
            report.drop(RATIO, where)
            return False
        return True

    def keep(self, pairs: Sequence[P]) -> list[P]:
        """The pairs (anything with .src, .tgt, .where) that pass, in order; drops counted."""
        fitting = [p for p in pairs if self._fits(p.src, p.tgt, p.where)]
        if not self.options.dedup or not fitting:
            return fitting
        keys = np.fromiter((pair_key(p.src, p.tgt) for p in fitting), np.uint64, len(fitting))
        new = self._seen.add_new(keys)
        for p, is_new in zip(fitting, new, strict=True):
            if not is_new:
                self.report.drop(DUPLICATE, p.where)
        return [p for p, is_new in zip(fitting, new, strict=True) if is_new]
