"""Binarizing: each text file of a data directory encoded to token ids on disk (token_ids.py).

Encoding runs in worker processes over chunks of lines and streams to disk, so a corpus larger
than memory binarizes with bounded RAM.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm import tqdm

from aiayn.data.prepare.workers import bounded_map, fresh_processes, init_worker
from aiayn.data.token_ids import ids_dtype, ids_file

CHUNK_LINES = 20_000


def _chunks(path: Path) -> Iterator[list[str]]:
    with open(path, encoding="utf-8") as f:
        while chunk := [line.rstrip("\n") for line in itertools.islice(f, CHUNK_LINES)]:
            yield chunk


def binarize(
    jobs: list[tuple[Path, Path]],
    model_file: Path,
    vocab_size: int,
    workers: int = 2,
    progress: tqdm | None = None,
) -> list[int]:
    """Encode each text file to `<prefix>.ids` (flat ids) and `<prefix>.offsets.npy`.

    Args:
        jobs: (text file, output prefix) pairs, encoded one after another by one worker pool.
        progress: a bar to advance by the sentences encoded.

    Returns:
        Tokens written, per job.
    """
    with ProcessPoolExecutor(
        workers, fresh_processes(), initializer=init_worker, initargs=(str(model_file),)
    ) as pool:
        return [
            _binarize_one(pool, text_file, prefix, ids_dtype(vocab_size), workers, progress)
            for text_file, prefix in jobs
        ]


def _binarize_one(
    pool: ProcessPoolExecutor,
    text_file: Path,
    prefix: Path,
    dtype: np.dtype,
    workers: int,
    progress: tqdm | None,
) -> int:
    lengths: list[np.ndarray] = []
    with open(ids_file(prefix, ".ids"), "wb") as out:
        # In order, with a few chunks in flight, so memory stays bounded.
        for flat, chunk_lengths in bounded_map(pool, _chunks(text_file), depth=2 * workers):
            out.write(flat.astype(dtype).tobytes())
            lengths.append(chunk_lengths)
            if progress is not None:
                progress.update(len(chunk_lengths))
    all_lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    offsets = np.zeros(len(all_lengths) + 1, dtype=np.int64)
    np.cumsum(all_lengths, out=offsets[1:])
    np.save(ids_file(prefix, ".offsets.npy"), offsets)
    return int(offsets[-1])
