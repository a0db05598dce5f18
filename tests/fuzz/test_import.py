"""Fuzzed Marian directories for `aiayn import marian`: its `config.json`, `vocab.json` and
`source.spm` damaged. A refusal names the file and leaves no output directory behind."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings

from aiayn.interop.marian import import_marian
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import json_file, mutated, read_or_refuse, scratch

# An import builds and writes a model: fewer examples than the other readers.
IMPORTS = settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 4))


@pytest.fixture(scope="module")
def marian(tiny_data, tmp_path_factory):
    from tests.interop.test_marian import marian_dir

    directory = tmp_path_factory.mktemp("marian") / "marian"
    marian_dir(tiny_data, directory)
    return directory


def import_damaged(marian, name: str, raw: bytes) -> None:
    with scratch(marian) as tmp:
        (tmp / name).write_bytes(raw)
        out = tmp.parent / "ours"
        if read_or_refuse(lambda: import_marian(tmp, out), tmp / name) is None:
            assert not out.exists()  # nothing half-written left as if it were a model


@pytest.mark.parametrize("name", ["config.json", "vocab.json"])
def test_marian_json_files(marian, name):
    @IMPORTS
    @given(json_file(json.loads((marian / name).read_text(encoding="utf-8"))))
    @example(b"\x80{}")  # not UTF-8: a bare UnicodeDecodeError
    @example(b"[1, 2]")  # a list: AttributeError (.get, .items)
    @example(b"[" * 100_000 + b"]" * 100_000)  # RecursionError
    @example(b'{"a": 0, "b": 2}')  # a gap in vocab.json's ids: KeyError
    def fuzz(raw: bytes):
        import_damaged(marian, name, raw)

    fuzz()


def test_marian_source_spm(marian):
    @IMPORTS
    @given(mutated((marian / "source.spm").read_bytes()))
    @example(b"\xff" * 16)  # protobuf's DecodeError, a traceback
    def fuzz(raw: bytes):
        import_damaged(marian, "source.spm", raw)

    fuzz()


def test_marian_vocab_with_an_empty_piece(marian):
    """Found by the fuzzed readers: the spm.model written from it did not load, and the error
    named the temporary directory of the output instead of the Marian files."""
    vocab = json.loads((marian / "vocab.json").read_text(encoding="utf-8"))
    piece = next(p for p, i in vocab.items() if i == 7)
    vocab[""] = vocab.pop(piece)
    with scratch(marian) as tmp:
        (tmp / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
        with pytest.raises(ValueError, match=r"source\.spm with vocab\.json: not a Sentence"):
            import_marian(tmp, tmp.parent / "ours")
        assert not (tmp.parent / "ours").exists()
