"""`aiayn translate --format text|markdown|html` and `--alignments`: the options, reading a
document (UTF-8, nothing binary) and handing it to aiayn.documents."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiayn.config import DecodeConfig
    from aiayn.engines.base import Translator

FORMATS = ("lines", "text", "markdown", "html")  # aiayn.documents.FORMATS, without importing it


def add_options(t: argparse.ArgumentParser) -> None:
    t.add_argument(
        "--format",
        choices=FORMATS,
        default="lines",
        help="lines: one sentence per line (default); text: paragraphs split into sentences; "
        "markdown, html: structure and inline markup kept (docs/translation.md, Documents)",
    )
    t.add_argument(
        "--alignments",
        action="store_true",
        help="with --format lines: write 'translation ||| 0-0 1-2 ...' (source-target words, "
        "Moses format) read from cross-attention",
    )
    t.add_argument("--source-lang", default="en", help="for the sentence splitter (ISO code)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def wanted(args: argparse.Namespace) -> bool:
    """Whether this translation goes through aiayn.documents rather than line mode."""
    if args.alignments and args.format != "lines":
        raise ValueError("--alignments works with --format lines; drop one of them")
    if args.alignments and (args.nbest > 1 or args.sample):
        raise ValueError("--alignments gives the best translation's; drop --nbest / --sample")
    return args.format != "lines" or args.alignments


def read_document(path: Path | None) -> str:
    """A whole UTF-8 document (or stdin; .gz/.xz/.bz2 decompressed); a binary or non-UTF-8
    file is an error naming the byte offset."""
    from aiayn.data.sources import read_input

    raw = sys.stdin.buffer.read() if path is None else read_input(path)
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


def translate(
    args: argparse.Namespace, translator: Translator, cfg: DecodeConfig, source: str | list[str]
) -> str:
    """The output of `aiayn translate` for a document, or for lines with their alignments."""
    from aiayn.config import EngineConfig
    from aiayn.documents import DocumentOptions, translate_document
    from aiayn.documents.alignment import read_choice
    from aiayn.engines.open import model_directory

    directory = model_directory(args.model, EngineConfig(engine=args.engine))
    options = DocumentOptions(
        language=args.source_lang,
        progress=not args.no_progress,
        choice=read_choice(directory),
        name="<stdin>" if args.input is None else str(args.input),
    )
    if isinstance(source, list):
        from aiayn.documents.alignment import aligned_lines

        return aligned_lines(translator, source, cfg, options.choice)
    text, n = translate_document(translator, source, args.format, cfg, options)
    print(f"{n} sentences translated", file=sys.stderr)
    return text
