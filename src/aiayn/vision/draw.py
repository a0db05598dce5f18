"""Pictures of predictions: boxes and masks drawn on scenes, ViT's class-token attention.

Each `*_figure` returns a matplotlib Figure; `aiayn.plot.save` writes it as PNG or SVG.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, no screen needed

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from torch import Tensor

from aiayn.vision.metrics import ImageBoxes, ScoredBoxes

# Background black, then one colour per digit 0-9.
MASK_COLOURS = ListedColormap(["black", *matplotlib.color_sequences["tab10"]])


def _show(ax, image: Tensor, title: str = "") -> None:
    ax.imshow(image.squeeze(0).numpy(), cmap="gray", vmin=0, vmax=1)
    ax.set_title(title, fontsize=8)
    ax.axis("off")


def draw_boxes(ax, found: ImageBoxes, colour: str, threshold: float = 0.0) -> int:
    """Boxes (pixels, xyxy) with their class (and score) on an axis; returns how many."""
    keep = np.ones(len(found.labels), bool)
    if found.scores is not None:
        keep = (found.scores >= threshold).numpy()
    for i in np.flatnonzero(keep):
        x0, y0, x1, y1 = found.boxes[i].tolist()
        ax.add_patch(
            Rectangle(
                (x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, edgecolor=colour, linewidth=1.5
            )
        )
        text = str(int(found.labels[i]))
        if found.scores is not None:
            text += f" {float(found.scores[i]):.2f}"
        ax.text(x0 - 0.5, y0 - 1, text, color=colour, fontsize=7, va="bottom")
    return int(keep.sum())


def detections_figure(
    images: list[Tensor],
    predictions: list[ScoredBoxes],
    truths: list[ImageBoxes] | None = None,
    threshold: float = 0.5,
) -> Figure:
    """Scenes with the predicted boxes (score >= threshold) in yellow, the true ones in cyan."""
    n = len(images)
    fig, axes = plt.subplots(1, n, figsize=(2.4 * n, 2.7), squeeze=False)
    for i, ax in enumerate(axes[0]):
        _show(ax, images[i])
        if truths is not None:
            draw_boxes(ax, truths[i], "cyan")
        shown = draw_boxes(ax, predictions[i], "yellow", threshold)
        ax.set_title(f"{shown} found", fontsize=8)
    fig.suptitle(f"DETR: predicted (yellow, score >= {threshold}) and true boxes (cyan)")
    return fig


def segmentation_figure(
    images: list[Tensor], predicted: list[Tensor], truths: list[Tensor] | None = None
) -> Figure:
    """Rows: the scene, the predicted mask (and the true mask); colour = digit class."""
    rows = 2 if truths is None else 3
    n = len(images)
    fig, axes = plt.subplots(rows, n, figsize=(2.2 * n, 2.2 * rows), squeeze=False)
    for i in range(n):
        _show(axes[0][i], images[i], "scene")
        masks = [("predicted", predicted[i])] + ([("true", truths[i])] if truths else [])
        for r, (name, mask) in enumerate(masks, start=1):
            axes[r][i].imshow(
                mask.numpy(), cmap=MASK_COLOURS, vmin=0, vmax=10, interpolation="nearest"
            )
            axes[r][i].set_title(name, fontsize=8)
            axes[r][i].axis("off")
    handles = [Rectangle((0, 0), 1, 1, color=MASK_COLOURS(d + 1)) for d in range(10)]
    fig.legend(handles, [str(d) for d in range(10)], loc="lower center", ncol=10, fontsize=7)
    fig.suptitle("SETR: per-pixel digit classes")
    return fig


def class_token_attention_figure(images: Tensor, maps: Tensor, labels: list[str]) -> Figure:
    """Per image (rows): the digit, then the class token's attention over the patches at every
    layer (mean of heads). `maps` is (layers, B, G, G) from `ViT.class_token_attention`."""
    n_layers, B = maps.shape[:2]
    fig, axes = plt.subplots(
        B, n_layers + 1, figsize=(1.8 * (n_layers + 1), 1.9 * B), squeeze=False
    )
    for b in range(B):
        _show(axes[b][0], images[b], labels[b])
        for j in range(n_layers):
            axes[b][j + 1].imshow(maps[j, b].numpy(), cmap="viridis")
            axes[b][j + 1].set_title(f"layer {j + 1}", fontsize=8)
            axes[b][j + 1].axis("off")
    fig.suptitle("ViT: attention of the class token to each patch (mean of heads)")
    return fig
