"""Token ids on disk: a flat array per split and side, plus offsets; loaded by memory-mapping.

Encoding runs in worker processes over chunks of lines and streams to disk, so a corpus larger
than memory binarizes with bounded RAM.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm import tqdm

from aiayn.data.sources import DataError

CHUNK_LINES = 20_000
_worker_tokenizer = None  # a worker's Tokenizer (vocab.py), made by _init_worker


def fresh_processes() -> multiprocessing.context.BaseContext:
    """Workers started from a clean process, not forked from a parent that may hold a large
    heap (so each one's memory is its own few MB, whatever the parent has read)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def ids_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16 if vocab_size <= np.iinfo(np.uint16).max + 1 else np.uint32)


def _with(prefix: Path, suffix: str) -> Path:
    """`train.src` + `.ids` -> `train.src.ids` (Path.with_suffix would replace `.src`)."""
    return Path(f"{prefix}{suffix}")


def _init_worker(model_file: str) -> None:
    from aiayn.data.vocab import Tokenizer  # vocab.py imports this module

    global _worker_tokenizer
    _worker_tokenizer = Tokenizer(model_file)


def _encode_chunk(lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Lines -> (flat int32 ids, int64 lengths)."""
    assert _worker_tokenizer is not None
    encoded = _worker_tokenizer.encode(lines)
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    flat = np.fromiter(itertools.chain.from_iterable(encoded), np.int32, int(lengths.sum()))
    return flat, lengths


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
        workers, fresh_processes(), initializer=_init_worker, initargs=(str(model_file),)
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
    with open(_with(prefix, ".ids"), "wb") as out:
        # In order, with a few chunks in flight, so memory stays bounded.
        for flat, chunk_lengths in _bounded_map(pool, _chunks(text_file), depth=2 * workers):
            out.write(flat.astype(dtype).tobytes())
            lengths.append(chunk_lengths)
            if progress is not None:
                progress.update(len(chunk_lengths))
    all_lengths = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    offsets = np.zeros(len(all_lengths) + 1, dtype=np.int64)
    np.cumsum(all_lengths, out=offsets[1:])
    np.save(_with(prefix, ".offsets.npy"), offsets)
    return int(offsets[-1])


def _bounded_map(pool: ProcessPoolExecutor, items: Iterator, depth: int) -> Iterator:
    """Like pool.map, but with at most `depth` chunks in flight (bounded memory)."""
    pending = [pool.submit(_encode_chunk, item) for item in itertools.islice(items, depth)]
    while pending:
        result = pending.pop(0).result()
        pending.extend(pool.submit(_encode_chunk, item) for item in itertools.islice(items, 1))
        yield result


def load_ids(prefix: Path, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Memory-map `<prefix>.ids` and load its offsets, checking that the two agree (a file cut
    short by an interrupted copy is found here, not as short sentences in training)."""
    path, offsets_path = _with(prefix, ".ids"), _with(prefix, ".offsets.npy")
    fix = f"re-run `aiayn prepare --out {Path(prefix).parent}`"
    try:
        offsets = np.load(offsets_path, allow_pickle=False)
    except FileNotFoundError:
        raise DataError(f"{offsets_path}: missing; {fix}") from None
    # A damaged header makes numpy's (pickle-free) reader fail in many ways: besides these,
    # SyntaxError and tokenize's TokenError (found by the fuzzed readers). Each means "damaged".
    except Exception as err:
        raise DataError(f"{offsets_path}: not a readable offsets array ({err}); {fix}") from None
    # An integer type (floats and NaN were found by the fuzzed readers), signed for the
    # differences to be checked.
    if not np.issubdtype(offsets.dtype, np.integer) or offsets.ndim != 1 or len(offsets) == 0:
        raise DataError(
            f"{offsets_path}: not a list of integer offsets (found {offsets.dtype} of shape "
            f"{offsets.shape}); {fix}"
        )
    offsets = offsets.astype(np.int64)
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise DataError(f"{offsets_path}: not a list of increasing offsets; {fix}")
    dtype = ids_dtype(vocab_size)
    size = path.stat().st_size if path.is_file() else None
    expected = int(offsets[-1]) * dtype.itemsize
    if size != expected:
        found = "missing" if size is None else f"{size:,} bytes"
        raise DataError(
            f"{path}: {found}, but {offsets_path.name} says {int(offsets[-1]):,} ids of "
            f"{dtype.itemsize} bytes ({expected:,} bytes): the file is damaged or cut short "
            f"(an interrupted copy?); {fix}"
        )
    if expected == 0:
        return np.zeros(0, dtype), offsets
    ids = np.memmap(path, dtype=dtype, mode="r")
    top = int(ids.max())
    if top >= vocab_size:
        where = int(np.argmax(ids >= vocab_size))
        raise DataError(
            f"{path}: id {top} at position {where:,} is outside the vocabulary of "
            f"{vocab_size:,} pieces in meta.json: the files come from different runs of "
            f"prepare; {fix}"
        )
    return ids, offsets
