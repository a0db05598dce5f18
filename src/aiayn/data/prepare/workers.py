"""Worker processes that encode text with the tokenizer: started fresh (not forked from a large
parent), each holding its own `Tokenizer`, fed a few chunks at a time so memory stays bounded."""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from aiayn.data.tokenizer import Tokenizer

_worker_tokenizer: Tokenizer | None = None  # a worker's Tokenizer, made by init_worker


def fresh_processes() -> multiprocessing.context.BaseContext:
    """Workers started from a clean process, not forked from a parent that may hold a large
    heap (so each one's memory is its own few MB, whatever the parent has read)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def init_worker(model_file: str) -> None:
    """Give this worker process its tokenizer, once."""
    global _worker_tokenizer
    _worker_tokenizer = Tokenizer(model_file)


def encode_chunk(lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Lines -> (flat int32 ids, int64 lengths)."""
    assert _worker_tokenizer is not None
    encoded = _worker_tokenizer.encode(lines)
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    flat = np.fromiter(itertools.chain.from_iterable(encoded), np.int32, int(lengths.sum()))
    return flat, lengths


def bounded_map(pool: ProcessPoolExecutor, items: Iterator, depth: int) -> Iterator:
    """Like pool.map, but with at most `depth` chunks in flight (bounded memory)."""
    pending = [pool.submit(encode_chunk, item) for item in itertools.islice(items, depth)]
    while pending:
        result = pending.pop(0).result()
        pending.extend(pool.submit(encode_chunk, item) for item in itertools.islice(items, 1))
        yield result
