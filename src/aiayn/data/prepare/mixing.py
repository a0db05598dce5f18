"""Several corpora in one data directory (`prepare --corpus A.tsv --corpus B.tsv --weights 1,3`):
each corpus, its weight (how often its training pairs appear per epoch) and whether it is
synthetic (back-translated: training only, sources tagged `<BT>`).

A weight w writes each training pair of its corpus floor(w) times, and once more for a seeded
share w - floor(w) of them (a hash of the seed, the corpus and the pair): integer weights
repeat pairs, as fairseq's and Marian's users upsample a corpus by listing it again; fractional
ones sub-sample the same pairs on every run with the same seed."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from aiayn.data.sources import DataError

BIBLE = "bible"


@dataclass(frozen=True)
class CorpusSpec:
    """One corpus of a mix, as the options name it."""

    path: str  # "bible" or a TSV file (source<TAB>target)
    weight: float = 1.0  # its training pairs appear this many times per epoch
    synthetic: bool = False  # back-translated: no held-out sets; sources tagged <BT>


def parse_weights(text: str, n: int) -> tuple[float, ...]:
    """`--weights 1,3`: one positive number per corpus, in the order the corpora were given."""
    items = text.split(",")
    if len(items) != n:
        raise DataError(
            f"--weights {text}: {len(items)} weight(s) for {n} corpora; give one per --corpus "
            "or --synthetic, in their order (e.g. --weights 1,3 for two)"
        )
    weights = []
    for item in items:
        try:
            w = float(item)
        except ValueError:
            raise DataError(
                f"--weights {text}: {item.strip()!r} is not a number; give numbers such as 1,3 "
                "or 1,0.5"
            ) from None
        weights.append(w)
    return tuple(weights)


def check_corpora(corpora: tuple[CorpusSpec, ...]) -> None:
    """Each corpus once, each weight a positive finite number."""
    seen: set[str] = set()
    for spec in corpora:
        key = spec.path if spec.path == BIBLE else str(Path(spec.path).resolve())
        if key in seen:
            raise DataError(
                f"{spec.path}: given twice (as --corpus or --synthetic); give each corpus once, "
                "and --weights to make it count more"
            )
        seen.add(key)
        if not (math.isfinite(spec.weight) and spec.weight > 0):
            raise DataError(
                f"{spec.path}: weight {spec.weight:g}; a weight is the number of times its pairs "
                "appear per epoch: give a number above 0 (0.5 keeps half of them, 2 repeats them)"
            )
    if corpora and all(spec.synthetic for spec in corpora):
        raise DataError(
            "every corpus is --synthetic; give the real parallel corpus too (--corpus): the "
            "held-out sets come from it, and back-translation adds to it"
        )


def copies(weight: float, seed: int, corpus: int, src: str, tgt: str) -> int:
    """How many times a training pair is written: floor(weight), plus one for a seeded share
    weight - floor(weight) of the pairs."""
    whole = math.floor(weight)
    share = weight - whole
    if not share:
        return whole
    digest = hashlib.blake2b(f"{seed}|{corpus}|{src}\t{tgt}".encode(), digest_size=8).digest()
    return whole + (int.from_bytes(digest, "little") / 2**64 < share)


def corpus_names(corpora: tuple[CorpusSpec, ...]) -> list[str]:
    """A short name per corpus for its held-out sets (`valid-NAME`): its file's name without
    suffixes, letters, digits and _ only; a repeated name gets a number."""
    names: list[str] = []
    for spec in corpora:
        stem = Path(spec.path).name.split(".")[0] or "corpus"
        name = re.sub(r"[^A-Za-z0-9_]+", "_", stem)
        base, k = name, 2
        while name in names:
            name, k = f"{base}{k}", k + 1
        names.append(name)
    return names
