"""Fuzzed model files: the SentencePiece model `spm.model`, the weights `model.safetensors`
and a checkpoint's optimizer state `optimizer.pt` (each damaged in a copy of a whole
checkpoint, as `translate` and `train --resume` open it)."""

from __future__ import annotations

import shutil

from hypothesis import example, given

from aiayn import layout
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.translate import load_model
from aiayn.train.checkpoint import average_checkpoints, read_optimizer
from aiayn.train.recovery import damage
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import mutated, read_or_refuse, scratch


def test_spm_model(checkpoint):
    valid = (checkpoint / layout.TOKENIZER_FILE).read_bytes()

    @FUZZ
    @given(mutated(valid))
    @example(valid[: len(valid) // 2])  # cut short
    @example(b"")
    def fuzz(raw: bytes):
        with scratch() as tmp:
            path = tmp / layout.TOKENIZER_FILE
            path.write_bytes(raw)
            tokenizer = read_or_refuse(lambda: Tokenizer(path), path)
            if tokenizer is not None:  # what a model opened with it does
                ids = tokenizer.encode(["The dog sees a cat.", ""])
                assert all(0 <= i < tokenizer.vocab_size for line in ids for i in line)
                tokenizer.decode(ids)

    fuzz()


def test_weights(checkpoint):
    valid = (checkpoint / layout.WEIGHTS_FILE).read_bytes()

    @FUZZ
    @given(mutated(valid))
    @example(valid[:7])  # shorter than the 8-byte header length
    @example(valid[: len(valid) // 2])
    def fuzz(raw: bytes):
        with scratch(checkpoint) as tmp:
            path = tmp / layout.WEIGHTS_FILE
            path.write_bytes(raw)
            why = damage(tmp)  # what --resume looks at first
            assert why is None or layout.WEIGHTS_FILE in why
            read_or_refuse(lambda: load_model(tmp), path)

    fuzz()


def utf8_name_damaged(archive: bytes) -> bytes:
    """A zip archive whose first member's name is flagged UTF-8 but is not (byte 6: the local
    header's flags; byte 30: the name)."""
    damaged = bytearray(archive)
    damaged[7] |= 0x08  # flag bit 11: the name is UTF-8
    damaged[30] = 0x80
    return bytes(damaged)


def test_optimizer_state(checkpoint):
    valid = (checkpoint / layout.OPTIMIZER_FILE).read_bytes()

    @FUZZ
    @given(mutated(valid))
    @example(valid[: len(valid) // 2])
    @example(b"")  # an EOFError without a message: reading its first line failed
    @example(b"\x80\x02}q\x00.")  # a bare pickle, not a zip archive
    @example(utf8_name_damaged(valid))  # a UnicodeDecodeError from zipfile itself
    def fuzz(raw: bytes):
        with scratch(checkpoint) as tmp:
            path = tmp / layout.OPTIMIZER_FILE
            path.write_bytes(raw)
            why = damage(tmp)
            assert why is None or layout.OPTIMIZER_FILE in why
            state = read_or_refuse(lambda: read_optimizer(tmp), path)
            assert state is None or isinstance(state, dict)

    fuzz()


def test_average_of_a_damaged_checkpoint(checkpoint):
    """`aiayn average`: one of the checkpoints averaged has damaged weights."""
    valid = (checkpoint / layout.WEIGHTS_FILE).read_bytes()

    @FUZZ
    @given(mutated(valid))
    @example(valid[: len(valid) // 2])  # a bare SafetensorError escaped
    def fuzz(raw: bytes):
        with scratch(checkpoint) as first:
            second = first.parent / "second"
            shutil.copytree(first, second)
            (second / layout.WEIGHTS_FILE).write_bytes(raw)
            out = first.parent / "averaged"
            averaged = read_or_refuse(
                lambda: average_checkpoints([first, second], out),
                second / layout.WEIGHTS_FILE,
                second,
            )
            assert (averaged is None) == (not out.exists())  # no partial average left

    fuzz()
