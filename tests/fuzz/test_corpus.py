"""Fuzzed corpus readers (`aiayn prepare`'s TSV and two-file readers, the line count that
sizes the splits) and the input reader of `aiayn translate` / `evaluate --src --ref`."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from aiayn.commands.options.reading import read_lines
from aiayn.data.clean import CleanReport
from aiayn.data.prepare.corpus import check_encoding
from aiayn.data.sources import count_lines, read_tsv, read_two_files
from tests.data.conftest import synthetic_pairs
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import huge_line, mutated, read_or_refuse, scratch, wrongly_encoded

PAIRS = synthetic_pairs(30, seed=3)
TSV = "".join(f"{s}\t{t}\n" for s, t in PAIRS).encode()
SRC = "".join(f"{s}\n" for s, _ in PAIRS).encode()
TGT = "".join(f"{t}\n" for _, t in PAIRS).encode()

# A line: some cells joined by tabs (a wrong column count is any other than 2).
LINES = st.lists(st.text(max_size=12), min_size=1, max_size=4).map("\t".join)
CORPORA = (
    mutated(TSV)
    | st.lists(LINES, max_size=20).flatmap(wrongly_encoded)
    | huge_line()
    | st.binary(max_size=512)
)
COMPRESSORS = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}


def lines_in(raw: bytes) -> int:
    """The lines a reader should count in a file's bytes (a last one may lack its line end)."""
    return raw.count(b"\n") + (not raw.endswith(b"\n") and raw != b"")


def read_corpus(read, *paths: Path) -> CleanReport:
    """Everything a reader yields, checked as prepare does; a refusal must name a file."""
    report = CleanReport()

    def consume():
        pairs = list(read(report))
        for pair in pairs:
            assert "\t" not in pair.src + pair.tgt and "\n" not in pair.src + pair.tgt
        check_encoding(report, str(paths[0]))
        return pairs

    pairs = read_or_refuse(consume, *paths)
    if pairs is not None:  # every line read is kept or counted as dropped: none lost silently
        assert len(pairs) + sum(report.dropped.values()) == report.read
    return report


@FUZZ
@given(CORPORA)
def test_tsv_reader_reads_or_names_the_line(raw: bytes):
    with scratch() as tmp:
        path = tmp / "corpus.tsv"
        path.write_bytes(raw)
        report = read_corpus(lambda r: read_tsv(path, r), path)
        if not report.dropped and read_or_refuse(lambda: count_lines(path), path) is not None:
            assert report.read in (0, lines_in(raw)) or report.read <= lines_in(raw)


@FUZZ
@given(CORPORA, st.sampled_from(sorted(COMPRESSORS)), st.integers(0, 100))
@example(b"", ".bz2", 0)  # an empty .bz2: a bare EOFError from the line reader
@example(TSV, ".gz", 50)  # half a .gz
def test_compressed_corpus_reads_or_says_it_is_damaged(raw: bytes, suffix: str, cut: int):
    """A .gz/.xz/.bz2 corpus, whole or cut short (an interrupted download)."""
    packed = COMPRESSORS[suffix](raw)
    with scratch() as tmp:
        path = tmp / f"corpus.tsv{suffix}"
        path.write_bytes(packed[: len(packed) * cut // 100] if cut < 100 else packed)
        read_or_refuse(lambda: count_lines(path), path)
        read_corpus(lambda r: read_tsv(path, r), path)


@FUZZ
@given(mutated(SRC) | huge_line(), mutated(TGT) | st.binary(max_size=256))
def test_two_file_reader_reads_or_names_the_files(src: bytes, tgt: bytes):
    with scratch() as tmp:
        src_path, tgt_path = tmp / "corpus.en", tmp / "corpus.de"
        src_path.write_bytes(src)
        tgt_path.write_bytes(tgt)
        read_or_refuse(lambda: count_lines(src_path), src_path)
        read_corpus(lambda r: read_two_files(src_path, tgt_path, r), src_path, tgt_path)


@FUZZ
@given(
    mutated(SRC) | huge_line() | st.lists(st.text(max_size=30), max_size=8).flatmap(wrongly_encoded)
)
def test_translate_input_reads_every_line_or_names_the_bad_one(raw: bytes):
    with scratch() as tmp:
        path = tmp / "input.txt"
        path.write_bytes(raw)
        lines = read_or_refuse(lambda: read_lines(path), path)
        if lines is not None:
            assert len(lines) == lines_in(raw)
