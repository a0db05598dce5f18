"""Fuzzed files of a data directory: the token ids `{split}.{side}.ids` (flat ids) and
`{split}.{side}.offsets.npy` (where each sentence starts), read by memory-mapping, and the
cleaned text of the held-out splits."""

from __future__ import annotations

import io

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from aiayn.data.data_dir import DataDir
from aiayn.data.token_ids import load_ids
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import mutated, read_or_refuse, scratch, wrongly_encoded

VOCAB = 64
LENGTHS = np.array([3, 0, 5, 2, 7])
OFFSETS = np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int64)
IDS = (np.arange(OFFSETS[-1]) % VOCAB).astype(np.uint16)


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


OTHER_ARRAYS = hnp.arrays(
    dtype=hnp.integer_dtypes()
    | hnp.floating_dtypes()
    | hnp.boolean_dtypes()
    | st.just(np.dtype("U3")),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=8),
).map(npy)


def check_read(offsets: bytes, ids: bytes) -> None:
    with scratch() as tmp:
        prefix = tmp / "train.src"
        (tmp / "train.src.offsets.npy").write_bytes(offsets)
        (tmp / "train.src.ids").write_bytes(ids)
        read = read_or_refuse(
            lambda: load_ids(prefix, VOCAB), tmp / "train.src.ids", tmp / "train.src.offsets.npy"
        )
        if read is None:
            return
        got_ids, got_offsets = read
        # What training relies on: integer offsets from 0, never decreasing, ending at the last
        # id; every id inside the vocabulary.
        assert got_offsets.ndim == 1 and np.issubdtype(got_offsets.dtype, np.integer)
        assert got_offsets[0] == 0 and np.all(np.diff(got_offsets) >= 0)
        assert got_offsets[-1] == len(got_ids)
        assert len(got_ids) == 0 or int(got_ids.max()) < VOCAB


@FUZZ
@given(mutated(npy(OFFSETS)) | OTHER_ARRAYS)
@example(npy(OFFSETS.astype(np.float64)))  # whole-valued floats: slicing by them fails later
@example(npy(np.array([0.0, np.nan])))  # NaN: int(nan) escaped as a bare ValueError
@example(npy(OFFSETS.astype(np.uint8)))  # an unsigned type: its differences wrap around
@example(npy(OFFSETS).replace(b"{'descr'", b"'{'descr'"))  # SyntaxError from the header
def test_damaged_offsets_are_named(offsets: bytes):
    check_read(offsets, IDS.tobytes())


@FUZZ
@given(mutated(IDS.tobytes()))
def test_damaged_ids_are_named(ids: bytes):
    check_read(npy(OFFSETS), ids)


def test_split_text(tiny_data):
    """`{split}.src.txt` / `{split}.tgt.txt`: what validation and `evaluate --data` read."""
    valid = (tiny_data / "valid.src.txt").read_bytes()

    @FUZZ
    @given(mutated(valid) | st.lists(st.text(max_size=20), max_size=5).flatmap(wrongly_encoded))
    @example("Grüße\n".encode("latin-1"))  # a bare UnicodeDecodeError that named no file
    def fuzz(raw: bytes):
        with scratch(tiny_data) as tmp:
            path = tmp / "valid.src.txt"
            path.write_bytes(raw)
            data = DataDir.open(tmp)
            read_or_refuse(lambda: data.sources("valid"), path)

    fuzz()
