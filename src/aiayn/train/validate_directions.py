"""Validation of a multilingual run: loss and greedy BLEU/chrF for each direction the data
trains, on the first `valid_direction_sentences` verses of the held-out split in both of its
languages (`valid.{lang}.txt`, line-aligned), so that validation time stays bounded however
many directions there are. The run's BLEU and chrF (best checkpoint, patience) are the means
over directions: every direction counts alike, whatever its size."""

from __future__ import annotations

from collections.abc import Callable

from sacrebleu.metrics import CHRF

from aiayn.config import DecodeConfig, TrainConfig
from aiayn.data.batches.dataset import ParallelData
from aiayn.data.data_dir import DataDir
from aiayn.data.languages import tagged
from aiayn.data.sources import DataError
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.translate import translate_lines
from aiayn.evaluate.directions import bleu
from aiayn.model import Transformer
from aiayn.train.metrics import perplexity
from aiayn.train.validate import Validation, loss_sums


def validate_directions(
    model: Transformer,
    data: DataDir,
    cfg: TrainConfig,
    autocast: Callable,
    spm: Tokenizer,
    release: Callable[[], None],
) -> Validation:
    """Each of `data.meta.directions` scored apart; the totals pool the loss over all tokens
    and average BLEU and chrF over the directions."""
    n = cfg.valid_direction_sentences or None
    greedy = DecodeConfig(beam=1, max_tokens=cfg.max_tokens)
    found: dict[str, dict] = {}
    loss = nll = tokens = 0.0
    for name in data.meta.directions:
        sources, references = direction_pairs(data, "valid", name, n)
        pairs = ParallelData.encoded(spm.encode(sources), spm.encode(references))
        sums = loss_sums(model, pairs, cfg, autocast, release)
        release()  # the loss batches' free pages, before decoding allocates anew
        with autocast():
            hypotheses = translate_lines(model, spm, sources, greedy)
        found[name] = {
            "loss": sums[0] / sums[2],
            "nll_loss": sums[1] / sums[2],
            **direction_scores(hypotheses, references, name.split("-")[1]),
        }
        loss, nll, tokens = loss + sums[0], nll + sums[1], tokens + sums[2]
    signatures = {d["bleu_signature"] for d in found.values()}
    bleus = [d["bleu"] for d in found.values() if d["bleu"] is not None]
    return Validation(
        loss=loss / tokens,
        nll_loss=nll / tokens,
        ppl=perplexity(nll / tokens),
        bleu=sum(bleus) / max(len(bleus), 1),  # over the directions BLEU can score
        chrf=sum(d["chrf"] for d in found.values()) / len(found),
        sentences=sum(d["sentences"] for d in found.values()),
        bleu_signature=f"mean of {len(found)} directions: "
        + (signatures.pop() if len(signatures) == 1 else "signatures per direction"),
        directions=found,
    )


def check_held_out(data: DataDir, split: str = "valid") -> None:
    """Every direction's languages have the held-out split, line-aligned: found before
    training starts, not at its first validation."""
    for name in data.meta.directions:
        direction_pairs(data, split, name, None)


def direction_pairs(
    data: DataDir, split: str, direction: str, n: int | None
) -> tuple[list[str], list[str]]:
    """(the first n source lines, tagged with the target language; their references) of one
    direction ("en-de") of a held-out split."""
    src_lang, tgt_lang = direction.split("-")
    sources, references = data.lines(split, src_lang, n), data.lines(split, tgt_lang, n)
    if len(sources) != len(references) or not sources:
        raise DataError(
            f"{data.text(split, src_lang)} and {data.text(split, tgt_lang)}: {len(sources)} and "
            f"{len(references)} lines; the held-out split must be the same verses in every "
            f"language; re-run `aiayn prepare --langs ... --out {data.root}`"
        )
    return [tagged(line, tgt_lang) for line in sources], references


def direction_scores(hypotheses: list[str], references: list[str], lang: str) -> dict:
    """chrF, and BLEU as `aiayn evaluate --directions` scores it (the target language's
    tokenizer; None where it is not installed, the signature then says why)."""
    score, signature = bleu(hypotheses, references, lang)
    return {
        "bleu": score,
        "chrf": CHRF().corpus_score(hypotheses, [references]).score,
        "sentences": len(hypotheses),
        "bleu_signature": signature,
    }
