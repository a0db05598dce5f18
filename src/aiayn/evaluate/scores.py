"""Scores of translations against references: sacreBLEU's BLEU and chrF on detokenized text,
with their signatures, the length ratio, and how often outputs repeat themselves (words) or
stutter (pieces inside a word)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF


@dataclass(frozen=True)
class Scores:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    length_ratio: float = 1.0  # hypothesis length / (closest) reference length, in BLEU's tokens
    repetition: float = 0.0  # share of hypotheses that repeat themselves (`repeats`)
    reference_repetition: float = 0.0  # the same share in the first reference stream
    stutter: float = 0.0  # share of hypotheses with a piece repeated inside a word (`stutters`)
    reference_stutter: float = 0.0  # the same share in the first reference stream
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
            f"stutter {100 * self.stutter:.1f}% of outputs (references "
            f"{100 * self.reference_stutter:.1f}%)\n"
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


# 2-5 letters, then the same letters 3 or more times more, case aside ("mehrerererer")
STUTTER = re.compile(r"([^\W\d_]{2,5})\1{3,}", re.IGNORECASE)


def stutters(text: str) -> bool:
    """Whether a text stutters: a run of 2-5 letters repeated 4 or more times in a row, as a
    word-level count does not see ("mehrererererer", "Lizizizizierung", "mamamamax")."""
    return STUTTER.search(text) is not None


def stutter_rate(texts: list[str]) -> float:
    """The share of texts that stutter (0 for no texts)."""
    return sum(map(stutters, texts)) / max(len(texts), 1)


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
        stutter=stutter_rate(hypotheses),
        reference_stutter=stutter_rate(references[0]) if references else 0.0,
        bleu_lowercase=lowercase.corpus_score(hypotheses, references).score if lowercase else None,
        bleu_lowercase_signature=str(lowercase.get_signature()) if lowercase else "",
    )
