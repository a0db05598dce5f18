"""Validation: loss and perplexity on the whole set, BLEU and chrF on greedy translations; in a
directory of several corpora (`prepare --corpus A --corpus B`), of each corpus's set apart
(`valid`, `valid-B`...), the main one (`valid`) deciding the best checkpoint."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from aiayn.config import DecodeConfig, TrainConfig
from aiayn.data.batches.dataset import ParallelData
from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.translate import translate_lines
from aiayn.evaluate.split import evaluate_split
from aiayn.layout import DataFiles
from aiayn.model import Transformer
from aiayn.train.host_memory import heap_trimmer
from aiayn.train.loss import projected_smoothed_loss
from aiayn.train.metrics import perplexity


@dataclass(frozen=True)
class Validation:
    loss: float  # label-smoothed, per target token
    nll_loss: float  # per target token
    ppl: float
    bleu: float
    chrf: float
    sentences: int  # translated for BLEU/chrF
    bleu_signature: str
    # Multilingual data: {"en-de": {"loss", "bleu", "chrf", "sentences", "bleu_signature"}} per
    # direction; bleu and chrf above are then their means (validate_directions.py).
    directions: dict[str, dict] = field(default_factory=dict)
    # Several corpora: {"valid-B": {"loss", "nll_loss", "ppl", "bleu", "chrf", "sentences",
    # "bleu_signature"}} per further set; the numbers above are the main set's (`valid`).
    sets: dict[str, dict] = field(default_factory=dict)

    def as_dict(self) -> dict:
        found = asdict(self)
        for name in ("directions", "sets"):
            if not found[name]:  # records of one set stay as they were
                del found[name]
        return found

    def __str__(self) -> str:
        line = (
            f"valid loss {self.loss:.3f}, ppl {self.ppl:.2f}, BLEU {self.bleu:.2f}, "
            f"chrF {self.chrf:.2f} ({self.sentences} sentences)"
        )
        if self.directions:  # the means above, and the worst direction (by chrF: every
            # direction has one, where BLEU may lack a tokenizer)
            worst = min(self.directions, key=lambda d: self.directions[d]["chrf"])
            line = line.replace("BLEU", "mean BLEU", 1).replace("chrF", "mean chrF", 1)
            scores = self.directions[worst]
            bleu = "-" if scores["bleu"] is None else f"{scores['bleu']:.2f}"
            line += (
                f"; {len(self.directions)} directions, worst {worst} chrF "
                f"{scores['chrf']:.2f} BLEU {bleu}"
            )
        for name, found in self.sets.items():
            line += (
                f"; {name} loss {found['loss']:.3f}, BLEU {found['bleu']:.2f}, "
                f"chrF {found['chrf']:.2f}"
            )
        return line


@torch.no_grad()
def validation_loss(
    model: Transformer,
    data: ParallelData,
    cfg: TrainConfig,
    autocast,
    release: Callable[[], None] = lambda: None,
) -> tuple:
    """(smoothed loss, nll) per target token over the whole split, in length order; `release`
    runs before each batch (a heap trim: batches of new shapes would fragment the heap)."""
    loss_sum, nll_sum, tokens = loss_sums(model, data, cfg, autocast, release)
    return loss_sum / tokens, nll_sum / tokens


@torch.no_grad()
def loss_sums(
    model: Transformer,
    data: ParallelData,
    cfg: TrainConfig,
    autocast,
    release: Callable[[], None] = lambda: None,
) -> tuple[float, float, int]:
    """(smoothed loss, nll, target tokens), summed over the pairs of `data`."""
    model.eval()
    device = next(model.parameters()).device
    sampler = TokenBatchSampler(
        data.src_lengths, data.tgt_lengths, cfg.max_tokens, shuffle=False, pad_to=cfg.pad_to
    )
    loss_sum = nll_sum = tokens = 0.0
    for indices in sampler.epoch_batches(0):
        release()
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
    return loss_sum, nll_sum, int(tokens)


@torch.no_grad()
def validate(
    model: Transformer,
    data_dir: DataDir | Path,
    cfg: TrainConfig,
    autocast: Callable,
    tokenizer: Path,
) -> Validation:
    """Loss and perplexity on the whole validation split; BLEU and chrF of greedy translations
    of its first `cfg.valid_bleu_sentences` lines (all if 0), as `aiayn evaluate --beam 1`;
    the same of each further corpus's set (`Validation.sets`).
    data_dir: an opened data directory, or its path (opened here)."""
    data_dir = DataDir.open(data_dir)
    on_cpu = next(model.parameters()).device.type == "cpu"  # a GPU's tensors: not in the heap
    release = heap_trimmer(cfg.trim_heap and on_cpu)  # validation: a run's memory peak
    if data_dir.meta.directions:  # multilingual: each direction apart, a few sentences each
        from aiayn.train.validate_directions import validate_directions

        return validate_directions(model, data_dir, cfg, autocast, Tokenizer(tokenizer), release)
    main, *others = DataFiles.held_out_sets("valid", data_dir.meta.sizes)
    spm = Tokenizer(tokenizer)
    found = validate_set(model, data_dir, main, cfg, autocast, spm, release)
    sets = {
        name: validate_set(model, data_dir, name, cfg, autocast, spm, release) for name in others
    }
    return replace(found, sets={name: set_scores(v) for name, v in sets.items()})


def validate_set(
    model: Transformer,
    data_dir: DataDir,
    split: str,
    cfg: TrainConfig,
    autocast: Callable,
    spm: Tokenizer,
    release: Callable[[], None],
) -> Validation:
    """One held-out set's loss, perplexity, and BLEU and chrF of greedy translations."""
    data = ParallelData(data_dir, split)
    loss, nll = validation_loss(model, data, cfg, autocast, release)
    release()  # the loss batches' free pages, before decoding allocates anew
    greedy = DecodeConfig(beam=1, max_tokens=cfg.max_tokens)

    def translate(sources: list[str]) -> list[str]:
        return translate_lines(model, spm, sources, greedy)

    with autocast():
        found = evaluate_split(data_dir, split, translate, cfg.valid_bleu_sentences or None)
    return Validation(
        loss=loss,
        nll_loss=nll,
        ppl=perplexity(nll),
        bleu=found.scores.bleu,
        chrf=found.scores.chrf,
        sentences=len(found.hypotheses),
        bleu_signature=found.scores.bleu_signature,
    )


def set_scores(found: Validation) -> dict:
    """A further set's numbers, as `Validation.sets` holds them."""
    return {k: v for k, v in found.as_dict().items() if k not in ("directions", "sets")}
