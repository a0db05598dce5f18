"""`aiayn translate --format text|markdown|html|docx|odt` and `--alignments`: when a
translation goes through aiayn.documents rather than line mode."""

from __future__ import annotations

import argparse

from aiayn.config import DOCUMENT_FORMATS


def add_document_options(t: argparse.ArgumentParser) -> None:
    t.add_argument(
        "--format",
        choices=DOCUMENT_FORMATS,
        default="lines",
        help="lines: one sentence per line (default); text: paragraphs split into sentences; "
        "markdown, html, docx, odt: structure and inline markup kept (docx and odt need "
        "--output or a redirected stdout; docs/translation.md, Documents)",
    )
    t.add_argument(
        "--alignments",
        action="store_true",
        help="with --format lines: write 'translation ||| 0-0 1-2 ...' (source-target words, "
        "Moses format) read from cross-attention",
    )
    t.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def wanted(args: argparse.Namespace) -> bool:
    """Whether this translation goes through aiayn.documents rather than line mode."""
    if args.alignments and args.format != "lines":
        raise ValueError("--alignments works with --format lines; drop one of them")
    if args.alignments and (args.nbest > 1 or args.sample):
        raise ValueError("--alignments gives the best translation's; drop --nbest / --sample")
    return args.format != "lines" or args.alignments
