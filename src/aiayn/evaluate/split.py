"""Evaluation of a split: translate the sources of a data directory's split and score them
against every reference it holds.

One procedure for every user: validation during training, `aiayn evaluate`, and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiayn.data.casing import apply_case
from aiayn.data.data_dir import DataDir
from aiayn.evaluate.scores import Scores, score


@dataclass(frozen=True)
class Evaluation:
    hypotheses: list[str]
    scores: Scores
    references: int  # how many reference streams were used


def evaluate_split(
    data_dir: DataDir | Path,
    split: str,
    translate: Callable[[list[str]], list[str]],
    n: int | None = None,
    case: str | None = None,
) -> Evaluation:
    """Translate the first n (default: all) source lines of a split with `translate` (source
    lines -> translations, one each) and score them against all the split's references.
    data_dir: an opened data directory, or its path (opened here). case: "upper" or "title"
    translates cased copies of the sources (casing.py) and adds case-insensitive BLEU; "as-is"
    the sources as they are, with both BLEUs; None (the default) as-is, case-sensitive only."""
    files = DataDir.open(data_dir)
    sources = files.sources(split, n)
    hypotheses = translate([apply_case(line, case) for line in sources] if case else sources)
    references = files.references(split, n)
    found = score(hypotheses, references, case_insensitive=case is not None)
    return Evaluation(hypotheses, found, len(references))
