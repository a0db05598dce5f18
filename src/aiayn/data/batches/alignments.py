"""Reference word alignments of the training pairs, for guided alignment training (Garg et al.
2019): computed once by eflomal (Östling & Tiedemann 2016, a maintained aligner from PyPI) on
the SentencePiece pieces themselves, so every link is already a (target piece, source piece)
pair of the ids training reads; stored beside the ids as `train.align.npz`.

Links are the union of both directions (each target piece gets the source pieces either
direction gives it); the guided head is trained towards each target row's links, normalized.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from aiayn.data.data_dir import DataDir
from aiayn.data.sources import DataError
from aiayn.data.token_ids import load_ids
from aiayn.files import atomic_write

ALIGN_FILE = "train.align.npz"  # links (M, 2) int32 as (target, source), offsets (N + 1,)


def alignment_file(data: DataDir) -> Path:
    return data.root / ALIGN_FILE


def _piece_lines(data: DataDir, side: str) -> list[str]:
    """Each training sentence's piece ids as a line of whitespace-separated words."""
    ids, offsets = load_ids(data.ids("train", side), data.meta.vocab_size)
    flat = np.asarray(ids).astype(str)
    return [" ".join(flat[a:b]) for a, b in itertools.pairwise(offsets)]


def _links(path: Path, n: int) -> list[np.ndarray]:
    """eflomal's Moses lines 'i-j ...' (source i, target j) -> per sentence (k, 2) (j, i)."""
    out = []
    for line in path.read_text().split("\n")[:n]:
        pairs = [p.split("-") for p in line.split()]
        arr = np.array(pairs, dtype=np.int32).reshape(-1, 2)
        out.append(arr[:, ::-1])  # (target, source)
    return out


def compute(data: DataDir) -> Path:
    """Align the training pairs' pieces with eflomal (both directions, their union) and write
    `train.align.npz` atomically; returns its path."""
    try:
        import eflomal
    except ImportError:
        raise DataError(
            "guided alignment needs the eflomal aligner: pip install 'aiayn[align]' "
            "(or set guided_alignment=0)"
        ) from None
    src, tgt = _piece_lines(data, "src"), _piece_lines(data, "tgt")
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        eflomal.Aligner().align(src, tgt, links_filename_fwd=str(fwd), links_filename_rev=str(rev))
        both = zip(_links(fwd, len(src)), _links(rev, len(src)), strict=True)
    per_sentence = [np.unique(np.concatenate([f, r]), axis=0) for f, r in both]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in per_sentence])]).astype(np.int64)
    links = np.concatenate(per_sentence).astype(np.int32)
    path = alignment_file(data)

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, links=links, offsets=offsets)

    atomic_write(path, write)
    return path


def load(data: DataDir, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """(links (M, 2), offsets (N + 1,)) of the training pairs; an error that says what to do
    when the file is missing, damaged or made for other data."""
    path = alignment_file(data)
    fix = "delete it and train again with guided_alignment on to recompute it"
    try:
        with np.load(path, allow_pickle=False) as stored:
            links, offsets = stored["links"], stored["offsets"]
    except (OSError, KeyError, ValueError) as e:
        raise DataError(f"{path}: unreadable alignments ({e}); {fix}") from None
    if offsets.shape != (n_pairs + 1,) or offsets[-1] != len(links) or links.ndim != 2:
        raise DataError(
            f"{path}: alignments of {len(offsets) - 1} pairs, but the training split has "
            f"{n_pairs}; {fix}"
        )
    return links, offsets


def ensure(data: DataDir, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """The stored alignments, computed first if there are none."""
    if not alignment_file(data).is_file():
        compute(data)
    return load(data, n_pairs)


def dense_targets(links: list[np.ndarray], T: int, S: int) -> Tensor:
    """(B, T, S) float32: row t of sentence b is the normalized indicator of the source pieces
    target piece t is linked to (all zero where it has none).

    Args:
        links: per sentence (k, 2) (target, source) piece indices.
    """
    rows = np.concatenate([np.full(len(x), b) for b, x in enumerate(links)]).astype(np.int64)
    pairs = torch.from_numpy(np.concatenate(links).astype(np.int64))  # (M, 2)
    target = torch.zeros(len(links), T, S)
    target[torch.from_numpy(rows), pairs[:, 0], pairs[:, 1]] = 1.0
    return target / target.sum(-1, keepdim=True).clamp_min(1.0)
