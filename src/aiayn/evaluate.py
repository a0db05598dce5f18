"""Scores with sacreBLEU: BLEU and chrF on detokenized text, with their signatures."""

from __future__ import annotations

from dataclasses import dataclass

from sacrebleu.metrics import BLEU, CHRF


@dataclass(frozen=True)
class Scores:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    length_ratio: float = 1.0  # hypothesis length / (closest) reference length, in BLEU's tokens

    def __str__(self) -> str:
        return (
            f"BLEU {self.bleu:.2f} ({self.bleu_signature})\n"
            f"length ratio {self.length_ratio:.3f} (hypotheses / references)\n"
            f"chrF {self.chrf:.2f} ({self.chrf_signature})"
        )


def score(hypotheses: list[str], references: list[list[str]]) -> Scores:
    """Corpus BLEU and chrF against one or more reference streams (each as long as hypotheses).

    Multiple references (e.g. other translations of the Bible) are used together.
    """
    for k, refs in enumerate(references):
        if len(refs) != len(hypotheses):
            raise ValueError(
                f"reference set {k + 1} has {len(refs)} lines for {len(hypotheses)} hypotheses"
            )
    bleu, chrf = BLEU(), CHRF()
    b = bleu.corpus_score(hypotheses, references)
    c = chrf.corpus_score(hypotheses, references)
    return Scores(
        bleu=b.score,
        chrf=c.score,
        bleu_signature=str(bleu.get_signature()),
        chrf_signature=str(chrf.get_signature()),
        length_ratio=b.sys_len / max(b.ref_len, 1),
    )
