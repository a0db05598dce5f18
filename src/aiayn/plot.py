"""Figures: positional encodings, the learning rate, a run's metrics, attention (matplotlib).

Each `*_figure` function returns a matplotlib Figure whose plotted data can be read back (the
tests compare it with the model's own numbers); `save` writes PNG or SVG by the file's suffix.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no screen needed

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from aiayn.model.positional import sinusoidal_encoding
from aiayn.train.metrics import read_metrics
from aiayn.train.schedule import learning_rate

FORMATS = (".png", ".svg")


def save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: write a .png or .svg file")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def positional_figure(
    d_model: int = 512,
    positions: int = 100,
    dims: tuple[int, ...] = (0, 1, 20, 21, 40, 41, 60, 61),
    layout: str = "interleaved",
) -> Figure:
    """Sinusoids of chosen dimensions over positions, and the position x dimension heatmap."""
    pe = sinusoidal_encoding(torch.arange(positions), d_model, layout).numpy()  # (P, D)
    fig, (curves, heat) = plt.subplots(1, 2, figsize=(13, 4.2))
    for d in dims:
        curves.plot(np.arange(positions), pe[:, d], label=f"dim {d}")
    curves.set(xlabel="position", ylabel="PE", title=f"Sinusoids (d_model={d_model}, {layout})")
    curves.legend(fontsize=7, ncol=2)
    image = heat.imshow(pe, aspect="auto", cmap="RdBu", vmin=-1, vmax=1, origin="lower")
    heat.set(xlabel="dimension", ylabel="position", title="PE[position, dimension]")
    fig.colorbar(image, ax=heat)
    return fig


def lr_figure(d_model: int = 512, warmup: int = 4000, scale: float = 1.0, steps: int = 40000):
    """The schedule of section 5.3 over training steps, warmup marked."""
    x = np.arange(1, steps + 1)
    y = [learning_rate(int(s), d_model, warmup, scale) for s in x]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, y)
    ax.axvline(warmup, linestyle="--", color="gray", label=f"warmup = {warmup}")
    title = f"lr = {scale:g} * {d_model}^-0.5 * min(step^-0.5, step * {warmup}^-1.5)"
    ax.set(xlabel="step", ylabel="learning rate", title=title)
    ax.legend()
    return fig


def metrics_figure(run: str | Path) -> Figure:
    """Training and validation loss, validation BLEU, the learning rate and the training
    throughput (target tokens/s, validation time left out) of a run."""
    run = Path(run)
    records = read_metrics(run)
    if not records:
        raise FileNotFoundError(f"{run / 'metrics.jsonl'}: no metrics; is it a run?")
    fig, (loss, bleu, lr, speed) = plt.subplots(1, 4, figsize=(20, 4))
    loss.plot(*series(records, "train", "loss"), label="train")
    loss.plot(*series(records, "valid", "loss"), "o-", label="valid")
    for name in further_sets(records):  # several corpora: each one's set (prepare --corpus)
        loss.plot(*set_series(records, name, "loss"), "o--", label=name)
    loss.set(xlabel="step", ylabel="label-smoothed loss / token", title="Loss")
    loss.legend()
    bleu.plot(*series(records, "valid", "bleu"), "o-", label="BLEU")
    bleu.plot(*series(records, "valid", "chrf"), "s-", label="chrF")
    for name in further_sets(records):
        bleu.plot(*set_series(records, name, "bleu"), "o--", label=f"BLEU {name}")
    bleu.set(xlabel="step", title="Validation (sacreBLEU)")
    bleu.legend()
    lr.plot(*series(records, "train", "lr"))
    lr.set(xlabel="step", title="Learning rate")
    speed.plot(*series(records, "train", "tokens_per_s"))
    speed.set(
        xlabel="step", ylabel="target tokens / s", title="Training throughput", ylim=(0, None)
    )
    return fig


def series(records: list[dict], kind: str, name: str) -> tuple[list[int], list[float]]:
    """(steps, values) of one number in the records of one kind that hold it."""
    found = [r for r in records if r["kind"] == kind and name in r]
    return [r["step"] for r in found], [r[name] for r in found]


def further_sets(records: list[dict]) -> list[str]:
    """The validation sets besides the main one that the records hold (`valid-B`...)."""
    names = (name for r in records if r["kind"] == "valid" for name in r.get("sets", {}))
    return list(dict.fromkeys(names))


def set_series(records: list[dict], name: str, key: str) -> tuple[list[int], list[float]]:
    """(steps, values) of one number of a further validation set."""
    found = [r for r in records if r["kind"] == "valid" and key in r.get("sets", {}).get(name, {})]
    return [r["step"] for r in found], [r["sets"][name][key] for r in found]


def directions_figure(
    langs: list[str], cells: list[list[float | None]], metric: str, title: str
) -> Figure:
    """A multilingual model's direction matrix: source languages down, target languages
    across, each scored cell written in it; unscored cells (the diagonal) left blank."""
    values = np.array([[np.nan if v is None else v for v in row] for row in cells], dtype=float)
    size = max(4.0, 0.6 * len(langs) + 1.5)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    image = ax.imshow(values, cmap="viridis")
    ax.set_xticks(range(len(langs)), langs)
    ax.set_yticks(range(len(langs)), langs)
    ax.set(xlabel="target language", ylabel="source language", title=title)
    for (i, j), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(j, i, f"{v:.1f}", ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(image, ax=ax, label=metric)
    return fig


def attention_figure(
    weights: list[np.ndarray], rows: list[str], cols: list[str], title: str
) -> Figure:
    """Heatmaps of one attention kind, a panel per layer: each (queries, keys), labelled."""
    n = len(weights)
    size = max(3.0, 0.28 * max(len(rows), len(cols)))
    fig, axes = plt.subplots(1, n, figsize=(size * n + 1, size + 0.8), squeeze=False)
    for i, (ax, w) in enumerate(zip(axes[0], weights, strict=True)):
        ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
        ax.set_yticks(range(len(rows)), rows, fontsize=7)
        ax.set_title(f"layer {i + 1}", fontsize=9)
    fig.suptitle(title)
    return fig
