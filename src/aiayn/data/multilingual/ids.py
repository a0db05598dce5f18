"""Token ids of a multilingual directory, each verse encoded once.

With 22 languages English-centric, an English verse stands in 42 pairs (21 sources, 21
targets): encoding the text files line by line would encode it 42 times. Here every kept verse
of every language is encoded once, in worker processes, and each split's ids are gathered from
those with numpy. A tagged source encodes as the tag's pieces followed by the verse's
(`encode("<2de> " + text) == encode("<2de>") + encode(text)`, checked on each direction's first
lines), so the files are the ones `binarize` would write from the text files (a test compares).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from aiayn.data.languages import tag, tagged
from aiayn.data.multilingual.verses import Verse
from aiayn.data.prepare.workers import bounded_map, fresh_processes, init_worker
from aiayn.data.sources import DataError
from aiayn.data.token_ids import ids_dtype
from aiayn.data.tokenizer import Tokenizer
from aiayn.layout import DataFiles

CHUNK = 20_000  # verses a worker encodes at a time


class Encoded:
    """One language's verses as ids: row r is ids[offsets[r]:offsets[r + 1]]."""

    def __init__(self, keys: list[Verse], ids: np.ndarray, offsets: np.ndarray) -> None:
        self.row = {k: r for r, k in enumerate(keys)}
        self.ids, self.offsets = ids, offsets

    def gather(self, keys: list[Verse]) -> tuple[np.ndarray, np.ndarray]:
        """(flat ids, lengths) of the given verses, in order; vectorized."""
        rows = np.fromiter((self.row[k] for k in keys), np.int64, len(keys))
        starts, lengths = self.offsets[rows], np.diff(self.offsets)[rows]
        before = np.cumsum(lengths) - lengths  # (N,) where each verse goes in the output
        index = np.arange(int(lengths.sum())) + np.repeat(starts - before, lengths)
        return self.ids[index], lengths


def encode_verses(
    verses: dict[str, dict[Verse, str]], model_file: Path, workers: int
) -> dict[str, Encoded]:
    """Every language's verses encoded once, in `workers` fresh processes."""
    chunks = [
        (lang, keys[i : i + CHUNK])
        for lang, v in verses.items()
        for keys in [list(v)]
        for i in range(0, len(keys), CHUNK)
    ]
    texts = ([verses[lang][k] for k in keys] for lang, keys in chunks)
    flat: dict[str, list] = {lang: [] for lang in verses}
    with ProcessPoolExecutor(
        workers, fresh_processes(), initializer=init_worker, initargs=(str(model_file),)
    ) as pool:
        for (lang, _), result in zip(chunks, bounded_map(pool, texts, 2 * workers), strict=True):
            flat[lang].append(result)
    found = {}
    for lang, parts in flat.items():
        ids = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
        lengths = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
        offsets = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        found[lang] = Encoded(list(verses[lang]), ids, offsets)
    return found


def write_ids(
    files: DataFiles,
    split: str,
    directions: list[str],
    pairs: dict[str, list[Verse]],
    encoded: dict[str, Encoded],
    verses: dict[str, dict[Verse, str]],
    model_file: Path,
    vocab_size: int,
) -> dict[str, int]:
    """`{split}.src.ids` / `.tgt.ids` and their offsets, direction by direction as the text
    files are written (`multilingual.write_pairs`); returns tokens per side."""
    tokenizer = Tokenizer(model_file)
    dtype = ids_dtype(vocab_size)
    tokens = {}
    for side in ("src", "tgt"):
        prefix = files.ids(split, side)
        lengths_all = []
        with open(f"{prefix}.ids", "wb") as out:
            for name in directions:
                s, t = name.split("-")
                lang, keys = (s if side == "src" else t), pairs[name]
                ids, lengths = encoded[lang].gather(keys)
                if side == "src":
                    head = tokenizer.encode([tag(t)])[0]
                    _check_tagging(tokenizer, head, [tagged(verses[s][k], t) for k in keys[:8]])
                    ids, lengths = _with_head(ids, lengths, np.asarray(head, np.int32))
                out.write(ids.astype(dtype).tobytes())
                lengths_all.append(lengths)
        lengths = np.concatenate(lengths_all) if lengths_all else np.zeros(0, np.int64)
        offsets = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        np.save(f"{prefix}.offsets.npy", offsets)
        tokens[side] = int(offsets[-1])
    return tokens


def _with_head(ids: np.ndarray, lengths: np.ndarray, head: np.ndarray):
    """The same sequences, each with `head` (the tag's pieces) in front."""
    n, p = len(lengths), len(head)
    new_lengths = lengths + p
    starts = np.cumsum(new_lengths) - new_lengths  # (N,)
    out = np.empty(int(new_lengths.sum()), ids.dtype)
    is_head = np.zeros(len(out), bool)
    for j in range(p):
        out[starts + j] = head[j]
        is_head[starts + j] = True
    out[~is_head] = ids
    assert len(ids) == len(out) - n * p
    return out, new_lengths


def _check_tagging(tokenizer: Tokenizer, head: list[int], lines: list[str]) -> None:
    """The tag encodes apart from the verse after it, as the gather assumes."""
    for line, whole in zip(lines, tokenizer.encode(lines), strict=True):
        text = line.split(" ", 1)[1]
        if whole != head + tokenizer.encode([text])[0]:
            raise DataError(
                f"the tag of {line[:60]!r} does not encode apart from its text "
                f"({tokenizer.pieces(whole[:6])}); report this with the command you ran"
            )
