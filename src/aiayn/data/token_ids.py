"""Token ids on disk: a flat array per split and side, plus offsets; loaded by memory-mapping,
every file checked against the others (`aiayn prepare` writes them, data/prepare/binarize.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aiayn.data.sources import DataError


def ids_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16 if vocab_size <= np.iinfo(np.uint16).max + 1 else np.uint32)


def ids_file(prefix: Path, suffix: str) -> Path:
    """`train.src` + `.ids` -> `train.src.ids` (Path.with_suffix would replace `.src`)."""
    return Path(f"{prefix}{suffix}")


def load_ids(prefix: Path, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Memory-map `<prefix>.ids` and load its offsets, checking that the two agree (a file cut
    short by an interrupted copy is found here, not as short sentences in training)."""
    path, offsets_path = ids_file(prefix, ".ids"), ids_file(prefix, ".offsets.npy")
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
