"""Evaluation: translate a split of a data directory and score it with sacreBLEU (BLEU and chrF
on detokenized text, with their signatures, and the length ratio).

One procedure for every user: validation during training, `aiayn evaluate`, and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

from aiayn.data.casing import apply_case
from aiayn.data.data_dir import DataDir


@dataclass(frozen=True)
class Scores:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    length_ratio: float = 1.0  # hypothesis length / (closest) reference length, in BLEU's tokens
    repetition: float = 0.0  # share of hypotheses that repeat themselves (`repeats`)
    reference_repetition: float = 0.0  # the same share in the first reference stream
    # BLEU with sacreBLEU's lowercase=True (`aiayn evaluate --case`), else None
    bleu_lowercase: float | None = None
    bleu_lowercase_signature: str = ""

    def __str__(self) -> str:
        bleu = f"BLEU {self.bleu:.2f} ({self.bleu_signature})\n"
        if self.bleu_lowercase is not None:  # say which is which
            lowercase = f"{self.bleu_lowercase:.2f} case-insensitive"
            bleu = (
                f"BLEU {self.bleu:.2f} case-sensitive ({self.bleu_signature})\n"
                f"BLEU {lowercase} ({self.bleu_lowercase_signature})\n"
            )
        return bleu + (
            f"length ratio {self.length_ratio:.3f} (hypotheses / references)\n"
            f"repetition {100 * self.repetition:.1f}% of outputs (references "
            f"{100 * self.reference_repetition:.1f}%)\n"
            f"chrF {self.chrf:.2f} ({self.chrf_signature})"
        )


def repeats(text: str, run: int = 4, n: int = 3) -> bool:
    """Whether a text repeats itself: one word `run` or more times in a row ("ganz ganz ganz
    ganz"), or an n-gram of words that occurs twice. Words are split at white space."""
    words = text.split()
    for i in range(len(words) - run + 1):
        if len(set(words[i : i + run])) == 1:
            return True
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) < len(grams)


def repetition_rate(texts: list[str]) -> float:
    """The share of texts that repeat themselves (0 for no texts)."""
    return sum(map(repeats, texts)) / max(len(texts), 1)


def score(
    hypotheses: list[str], references: list[list[str]], case_insensitive: bool = False
) -> Scores:
    """Corpus BLEU and chrF against one or more reference streams (each as long as hypotheses).

    Multiple references (e.g. other translations of the Bible) are used together. With
    case_insensitive, BLEU is also computed on lowercased text (sacreBLEU's lowercase=True).
    """
    for k, refs in enumerate(references):
        if len(refs) != len(hypotheses):
            raise ValueError(
                f"reference set {k + 1} has {len(refs)} lines for {len(hypotheses)} hypotheses"
            )
    bleu, chrf = BLEU(), CHRF()
    b = bleu.corpus_score(hypotheses, references)
    c = chrf.corpus_score(hypotheses, references)
    lowercase = BLEU(lowercase=True) if case_insensitive else None
    return Scores(
        bleu=b.score,
        chrf=c.score,
        bleu_signature=str(bleu.get_signature()),
        chrf_signature=str(chrf.get_signature()),
        length_ratio=b.sys_len / max(b.ref_len, 1),
        repetition=repetition_rate(hypotheses),
        reference_repetition=repetition_rate(references[0]) if references else 0.0,
        bleu_lowercase=lowercase.corpus_score(hypotheses, references).score if lowercase else None,
        bleu_lowercase_signature=str(lowercase.get_signature()) if lowercase else "",
    )


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
