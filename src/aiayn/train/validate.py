"""Validation: loss and perplexity on the whole set, BLEU and chrF on greedy translations."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from aiayn.config import TrainConfig
from aiayn.data.batching import TokenBatchSampler
from aiayn.data.dataset import ParallelData
from aiayn.data.meta import DataMeta
from aiayn.data.vocab import Tokenizer
from aiayn.decode.greedy import greedy_decode
from aiayn.decode.translate import InputLimits, translate_lines
from aiayn.evaluate import score
from aiayn.model import Transformer
from aiayn.train.loss import projected_smoothed_loss


@dataclass(frozen=True)
class Validation:
    loss: float  # label-smoothed, per target token
    nll_loss: float  # per target token
    ppl: float
    bleu: float
    chrf: float
    sentences: int  # translated for BLEU/chrF
    bleu_signature: str

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"valid loss {self.loss:.3f}, ppl {self.ppl:.2f}, BLEU {self.bleu:.2f}, "
            f"chrF {self.chrf:.2f} ({self.sentences} sentences)"
        )


@torch.no_grad()
def validation_loss(model: Transformer, data: ParallelData, cfg: TrainConfig, autocast) -> tuple:
    """(smoothed loss, nll) per target token over the whole split, in length order."""
    model.eval()
    device = next(model.parameters()).device
    sampler = TokenBatchSampler(
        data.src_lengths, data.tgt_lengths, cfg.max_tokens, shuffle=False, pad_to=cfg.pad_to
    )
    loss_sum = nll_sum = tokens = 0.0
    for indices in sampler.epoch_batches(0):
        batch = data.collate(indices, cfg.pad_to)
        tgt_out = batch.tgt_out.to(device)
        real = tgt_out != model.cfg.pad_id  # (B, T)
        with autocast():
            states = model(batch.src.to(device), batch.tgt_in.to(device), real, project=False)
            loss, nll = projected_smoothed_loss(
                states, model.output_weight, tgt_out[real], cfg.label_smoothing, model.cfg.pad_id
            )  # as in training, and no (N, V) logits
        loss_sum, nll_sum, tokens = (
            loss_sum + loss.item(),
            nll_sum + nll.item(),
            tokens + batch.n_tgt_tokens,
        )
    return loss_sum / tokens, nll_sum / tokens


def references(data_dir: Path, split: str, n: int | None = None) -> list[list[str]]:
    """The reference streams of a split: the target, then any extra references."""
    meta = DataMeta.load(data_dir)
    names = ["tgt"] + [f"ref{k}" for k in range(1, meta.n_refs.get(split, 1))]
    streams = [
        (Path(data_dir) / f"{split}.{name}.txt").read_text(encoding="utf-8").splitlines()
        for name in names
    ]
    return [s[:n] for s in streams] if n else streams


@torch.no_grad()
def validate(
    model: Transformer, data_dir: Path, cfg: TrainConfig, autocast: Callable, tokenizer: Path
) -> Validation:
    data = ParallelData(data_dir, "valid")
    loss, nll = validation_loss(model, data, cfg, autocast)
    n = cfg.valid_bleu_sentences or None
    sources = (Path(data_dir) / "valid.src.txt").read_text(encoding="utf-8").splitlines()[:n]
    with autocast():
        limits = InputLimits(max_tokens=cfg.max_tokens)
        hyps = translate_lines(model, Tokenizer(tokenizer), sources, greedy_decode, limits)
    scores = score(hyps, references(data_dir, "valid", n))
    return Validation(
        loss, nll, math.exp(min(nll, 50)), scores.bleu, scores.chrf, len(sources),
        scores.bleu_signature,
    )  # fmt: skip
