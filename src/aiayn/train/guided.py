"""Guided alignment (Garg et al. 2019, "Jointly Learning to Align and Translate"; fairseq's
`--alignment-lambda`, Marian's `--guided-alignment`): one cross-attention head of one decoder
layer is trained towards reference alignments by a cross-entropy, added to the translation
loss with a small weight."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from torch import Tensor

from aiayn.config import ModelConfig, TrainConfig
from aiayn.data.batches.alignments import ensure
from aiayn.data.batches.dataset import Batch, ParallelData
from aiayn.data.data_dir import DataDir

# A floor under the attention probabilities before their log: a linked source piece the head
# gives (nearly) no weight costs a large, finite loss, not an infinite one.
FLOOR = 1e-6


def alignment_loss(weights: Tensor, target: Tensor) -> Tensor:
    """-sum_{b,t,s} target[b,t,s] log weights[b,t,s]: each target piece's cross-entropy between
    its reference row (normalized links) and the head's attention, summed over the pieces that
    have links (as fairseq sums its per-link terms); float32.

    Args:
        weights: (B, T, S) the guided head's attention probabilities.
        target: (B, T, S) reference rows, each summing to 1 or all zero (`dense_targets`).
    """
    log_p = weights.float().clamp_min(FLOOR).log()  # (B, T, S)
    return -(target * log_p).sum()


def forward(
    net: Callable[..., tuple[Tensor, Tensor]],
    batch: Batch,
    src_tgt: tuple[Tensor, Tensor],
    real: Tensor,
    head: tuple[int | None, int],
) -> tuple[Tensor, Tensor]:
    """The decoder states (N, D) of a batch that carries reference alignments, and the guided
    head's summed alignment loss.

    Args:
        net: the model (or its DDP wrapper), returning states and the layer's attention.
        batch: its alignments (B, T, S), on the host.
        src_tgt: the source (B, S) and decoder input (B, T) on the model's device.
        real: (B, T) the target positions that are not padding.
        head: the guided (layer, head).
    """
    assert batch.alignment is not None
    states, weights = net(*src_tgt, real, project=False, align_layer=head[0])
    guided = weights[:, head[1]]  # (B, T, S)
    return states, alignment_loss(guided, batch.alignment.to(guided.device))


def attach(data_dir: DataDir | Path, train: ParallelData) -> None:
    """Give the training split its reference alignments, computing them first if needed."""
    links, offsets = ensure(DataDir.open(data_dir), len(train))
    train.with_alignments(links, offsets)


def guided_layer(layer: int, head: int, n_layers: int, n_heads: int) -> int:
    """The guided decoder layer's index (`layer` counts from the last when negative), the
    layer and head checked against the model's."""
    index = layer + n_layers if layer < 0 else layer
    if not 0 <= index < n_layers:
        raise ValueError(f"alignment_layer={layer} is outside the decoder's {n_layers} layers")
    if not 0 <= head < n_heads:
        raise ValueError(f"alignment_head={head} is outside the model's {n_heads} heads")
    return index


def set_up(
    cfg: TrainConfig, model_cfg: ModelConfig, data_dir: DataDir | Path, train: ParallelData
) -> int | None:
    """The decoder layer that guided alignment trains, checked against the model, with the
    training split given its reference alignments; None when the run does not ask for it."""
    if not cfg.guided_alignment:
        return None
    layer = guided_layer(
        cfg.alignment_layer, cfg.alignment_head, model_cfg.n_decoder_layers, model_cfg.n_heads
    )
    attach(data_dir, train)  # after the checks: it may take minutes
    return layer
