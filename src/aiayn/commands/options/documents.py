"""`aiayn translate --format text|markdown|html|po|xliff|srt|docx|odt`, `--alignments`,
`--retranslate` and `--dry-run`: when a translation goes through aiayn.documents rather than
line mode, and what it reads."""

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
        "--output or a redirected stdout); po (gettext), xliff (1.2, 2.0): "
        "untranslated entries, placeholders kept, marked for review; srt: subtitles, timing "
        "kept (docs/translation.md, Documents)",
    )
    t.add_argument(
        "--retranslate",
        action="store_true",
        help="with --format po or xliff: translate the entries that already have a "
        "translation too (default: only the empty ones)",
    )
    t.add_argument(
        "--dry-run",
        action="store_true",
        help="translate nothing: every sentence is copied through the whole document "
        "path (reader, splitter, tag placement, writer), so the output should be the input; "
        "only --model's SentencePiece model is read (no weights), to measure sentences for "
        "--max-input-tokens as the real run would",
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
    from aiayn.documents.translate import RETRANSLATING

    if args.retranslate and args.format not in RETRANSLATING:
        raise ValueError(
            f"--retranslate is for --format {' or '.join(RETRANSLATING)} (files that hold "
            f"translations); drop it or --format {args.format}"
        )
    if args.dry_run and (args.nbest > 1 or args.sample):
        raise ValueError("--dry-run copies each sentence once; drop --nbest / --sample")
    return args.format != "lines" or args.alignments
