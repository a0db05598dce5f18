"""Reading parallel corpora: a TSV file or two line-aligned text files, line by line.

Each reader yields normalized `Pair`s and counts what it could not read in the report; a file
that is not a parallel corpus at all (wrong column count, mismatched line counts) is an error
that names the file and line.
"""

from __future__ import annotations

import bz2
import gzip
import io
import itertools
import lzma
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from aiayn.data.clean import INVALID_UTF8, NUL_BYTE, CleanReport, decode_line, normalize

BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class DataError(ValueError):
    """Input that cannot be used as it is; the message says where and what to do."""


@dataclass(frozen=True)
class Pair:
    """One normalized sentence pair and where it came from."""

    src: str
    tgt: str
    where: str  # "file:line", or "Genesis 1:1"
    group: str = ""  # the unit kept together when splitting (a Bible chapter); "" = the source
    refs: tuple[str, ...] = ()  # further references for the target (other translations)


def _decode(raw: bytes, where: str, first: bool, report: CleanReport) -> str | None:
    """Bytes of one line -> text without its line end; None (counted) if unreadable."""
    if raw.endswith(b"\r\n"):
        raw = raw[:-2]
        report.notes["CRLF line end"] += 1
    elif raw.endswith(b"\n"):
        raw = raw[:-1]
    if first and raw.startswith(UTF16_BOMS):
        raise DataError(
            f"{where}: the file is UTF-16 (it starts with a UTF-16 byte-order mark); convert "
            "it to UTF-8, e.g. `iconv -f UTF-16 -t UTF-8 in > out`"
        )
    if first and raw.startswith(BOM):
        raw = raw[len(BOM) :]
        report.notes["byte-order mark"] += 1
    if b"\x00" in raw:
        report.drop(NUL_BYTE, where)
        return None
    text = decode_line(raw)
    if text is None:
        report.drop(INVALID_UTF8, where)
    return text


def read_tsv(path: Path, report: CleanReport) -> Iterator[Pair]:
    """source<TAB>target per line; a line with another number of columns is an error."""
    path = Path(path)
    with open_input(path) as f:
        for n, raw in enumerate(checked_lines(f, path), start=1):
            where = f"{path.name}:{n}"
            text = _decode(raw, where, n == 1, report)
            report.read += 1
            if text is None:
                continue
            fields = text.split("\t")
            if fields == [""]:
                fields = ["", ""]  # a blank line: an empty pair, counted as such
            if len(fields) != 2:
                raise DataError(
                    f"{path}, line {n}: expected 2 tab-separated columns (source<TAB>target), "
                    f"found {len(fields)}; fix or remove that line"
                )
            yield Pair(normalize(fields[0]), normalize(fields[1]), where)


def read_two_files(src_path: Path, tgt_path: Path, report: CleanReport) -> Iterator[Pair]:
    """Line n of one file translates line n of the other; differing line counts are an error."""
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    with open_input(src_path) as raw_fs, open_input(tgt_path) as raw_ft:
        fs, ft = checked_lines(raw_fs, src_path), checked_lines(raw_ft, tgt_path)
        n = 0
        for n, (raw_src, raw_tgt) in enumerate(itertools.zip_longest(fs, ft), start=1):
            if raw_src is None or raw_tgt is None:
                _raise_line_count_mismatch(src_path, tgt_path, fs, ft, n, raw_src is None)
            where = f"{src_path.name}:{n}"
            report.read += 1
            src = _decode(raw_src, where, n == 1, report)
            tgt = None if src is None else _decode(raw_tgt, f"{tgt_path.name}:{n}", n == 1, report)
            if src is not None and tgt is not None:
                yield Pair(normalize(src), normalize(tgt), where)


def _raise_line_count_mismatch(src_path, tgt_path, fs, ft, n: int, src_ended: bool) -> None:
    shorter, longer = (src_path, tgt_path) if src_ended else (tgt_path, src_path)
    rest = sum(1 for _ in (ft if src_ended else fs))
    counts = {shorter: n - 1, longer: n + rest}
    raise DataError(
        f"{src_path} has {counts[src_path]:,} lines but {tgt_path} has {counts[tgt_path]:,}: "
        f"the files diverge at line {n}, where {shorter} ends and {longer} goes on. "
        "Each line of one file must translate the same line of the other; look for a split or "
        "merged line before that point (compare the two files around where their meanings part)"
    )


# Opens a file for reading bytes; the compressed ones are read transparently.
Opener = Callable[[Path, Literal["rb"]], io.BufferedIOBase]
COMPRESSED: dict[str, Opener] = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}


def open_input(path: Path) -> io.BufferedIOBase:
    """A corpus or input file for reading bytes; .gz, .xz and .bz2 files are decompressed."""
    path = Path(path)
    opener = COMPRESSED.get(path.suffix.lower(), open)
    try:
        return opener(path, "rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory; give a file") from None


def read_input(path: Path) -> bytes:
    """All bytes of an input file (decompressed); a damaged compressed file is a DataError."""
    with open_input(path) as f:
        return _read_checked(f, path, -1)


# What a damaged or truncated compressed file raises while it is read.
DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def _damaged(path: Path, err: BaseException) -> DataError:
    return DataError(
        f"{path}: the compressed file is damaged or cut short ({err}); fetch it again, or "
        "check it with `gzip -t` / `xz -t` / `bzip2 -t`"
    )


def _read_checked(f: io.BufferedIOBase, path: Path, size: int) -> bytes:
    try:
        return f.read(size)
    except DECOMPRESSION_ERRORS as err:
        raise _damaged(path, err) from None


def checked_lines(f: io.BufferedIOBase, path: Path) -> Iterator[bytes]:
    """The lines of an opened input; a compressed file found damaged part-way is a DataError
    (found by the fuzzed readers: a .bz2 cut short escaped as a bare EOFError)."""
    lines = iter(f)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except DECOMPRESSION_ERRORS as err:
            raise _damaged(path, err) from None
        yield line


def count_lines(path: Path) -> int:
    """Newline count, read in large blocks (fast; used to size the held-out splits). A file
    whose lines end in a bare CR (old Mac text) is an error that says how to convert it."""
    count = carriage_returns = 0
    text = False  # a byte other than white space seen
    with open_input(Path(path)) as f:
        while block := _read_checked(f, path, 1 << 22):
            count += block.count(b"\n")
            carriage_returns += block.count(b"\r")
            text = text or bool(block.strip())
    if carriage_returns > count:
        raise DataError(
            f"{path}: {carriage_returns:,} lines end in a bare carriage return (old Mac line "
            f"ends) and only {count:,} in a newline; convert it, e.g. "
            f"`tr '\\r' '\\n' < {path} > fixed.txt`, and give fixed.txt"
        )
    if count and not text:
        raise DataError(
            f"{path}: all {count:,} lines are blank; give a file with text on its lines (a "
            "corpus: source<TAB>target on each)"
        )
    return count
