"""Reading what a command translates: lines, or a whole document (UTF-8, nothing binary but a
zip package; a .gz/.xz/.bz2 file decompressed), from a file or standard input."""

from __future__ import annotations

import sys
from pathlib import Path


def read_lines(path: Path | None) -> list[str]:
    """Lines of a UTF-8 file (or stdin); invalid UTF-8 is an error naming the line."""
    from aiayn.data.sources import read_input

    raw = sys.stdin.buffer.read() if path is None else read_input(path)
    name = "<stdin>" if path is None else str(path)
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for n, line in enumerate(lines, start=1):
        try:
            out.append(line.rstrip(b"\r").decode("utf-8"))
        except UnicodeDecodeError as err:
            raise ValueError(
                f"{name}, line {n}: not valid UTF-8 ({err.reason}); convert the input to UTF-8"
            ) from None
    return out


def read_document(path: Path | None, binary: bool = False) -> str | bytes:
    """A whole UTF-8 document (or stdin); a binary or non-UTF-8 file is an error naming the
    byte offset. `binary`: the file's bytes as they are (a zip package: docx, odt)."""
    from aiayn.data.sources import read_input

    raw = sys.stdin.buffer.read() if path is None else read_input(path)
    if binary:
        return raw
    name = "<stdin>" if path is None else str(path)
    nul = raw.find(b"\0")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise ValueError(
            f"{name}: a NUL byte at byte offset {nul} (line {line}): "
            "this looks like a binary file; give a text, Markdown or HTML file"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ValueError(
            f"{name}: not valid UTF-8 at byte offset {err.start} (line {line}: {err.reason}); "
            "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)"
        ) from None
