"""`aiayn translate`: lines, or a document, from stdin or a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aiayn.commands.options.controls import add_controls, controls_of
from aiayn.commands.options.decoding import add_decoding, add_sampling, describe
from aiayn.commands.options.documents import add_document_options, wanted
from aiayn.commands.options.engine import PAPER, engine_config, search_for, search_options
from aiayn.commands.options.languages import (
    AUTO,
    add_src_lang,
    add_tgt_lang,
    say_mismatch,
    source_language,
)
from aiayn.commands.options.protect import add_protect, protector_of
from aiayn.commands.options.reading import read_document, read_lines

if TYPE_CHECKING:
    from aiayn.config import DecodeConfig
    from aiayn.documents.protect import Protector
    from aiayn.engines import Translation, Translator


def add(commands) -> None:
    t = commands.add_parser("translate", help="translate lines from stdin or a file")
    add_decoding(t)
    t.add_argument(
        "--nbest",
        type=int,
        default=PAPER.nbest,
        help="write the n best as 'line ||| translation ||| score'",
    )
    add_sampling(t)
    t.add_argument("--input", type=Path, help="default: standard input")
    t.add_argument("--output", type=Path, help="default: standard output")
    add_document_options(t)
    add_controls(t)
    add_protect(t)
    add_tgt_lang(t)
    add_src_lang(t)
    t.set_defaults(run=run_translate)


def run_translate(args: argparse.Namespace) -> int:
    from aiayn.documents.lines import LineTranslator
    from aiayn.engines import open_translator
    from aiayn.engines.open import open_copy

    given = search_options(args)
    documents = wanted(args)
    binary = binary_output(args)
    text = read_document(args.input, binary) if args.format != "lines" else None
    lines = read_lines(args.input) if text is None else []
    controls = controls_of(args)
    protector = protector_of(args)
    if controls is not None:
        if documents:
            raise ValueError(
                "--target-prefix, --glossary and --suppress steer plain line mode; "
                "drop --format or --alignments"
            )
        controls.check_lines(len(lines))
    if args.dry_run:
        translator = open_copy(args.model)
    else:
        translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    sample = lines if text is None else paragraphs(args, text)  # what the language is read from
    language = source_language(args, sample, translator)
    say_mismatch(args, sample)
    cfg, length = search_for(translator, given)
    said = f"{describe(cfg)}; {length}"
    if args.dry_run:
        said = "none (--dry-run: every sentence copied)"
    print(f"search: {said}", file=sys.stderr)
    if documents:
        source = lines if text is None else text
        return write_output(
            args, translate_document(args, translator, cfg, source, language, protector)
        )
    translator = LineTranslator(translator, protector)
    if cfg.nbest == 1:
        return write_output(args, lines_text(translator.translate(lines, cfg, controls)))
    return write_output(args, format_nbest(translator.nbest(lines, cfg, controls)))


def translate_document(
    args: argparse.Namespace,
    translator: Translator,
    cfg: DecodeConfig,
    source: str | bytes | list[str],
    language: str,
    protector: Protector | None,
) -> str | bytes:
    """The output for a document (`--format`), or for lines with their alignments; `language`
    is the sentence splitter's."""
    from aiayn.config import EngineConfig
    from aiayn.documents import DocumentOptions
    from aiayn.documents import translate_document as translate_parsed
    from aiayn.documents.alignment import read_choice
    from aiayn.engines.open import model_directory

    directory = model_directory(args.model, EngineConfig(engine=args.engine))
    options = DocumentOptions(
        language=language,
        progress=not args.no_progress,
        choice=read_choice(directory),
        name="<stdin>" if args.input is None else str(args.input),
        retranslate=args.retranslate,
        protect=protector,
    )
    if isinstance(source, list):
        from aiayn.documents.alignment import aligned_lines

        return aligned_lines(translator, source, cfg, options.choice)
    text, n = translate_parsed(translator, source, args.format, cfg, options)
    print(f"{n} sentences translated", file=sys.stderr)
    return text


def lines_text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def format_nbest(nbest: list[list[Translation]]) -> str:
    """'line ||| translation ||| score' for each of the n best of each line."""
    return "".join(
        f"{i} ||| {t.text} ||| {t.score:.4f}\n" for i, line in enumerate(nbest) for t in line
    )


def binary_output(args: argparse.Namespace) -> bool:
    """Whether the document is a zip package (docx, odt): read as bytes, written to --output
    or to a standard output that is not a terminal."""
    from aiayn.documents import BINARY

    if args.format not in BINARY:
        return False
    if args.output is None and sys.stdout.isatty():
        raise ValueError(
            f"--format {args.format} writes a zip file, not text: give --output FILE "
            "(or redirect standard output to a file)"
        )
    return True


def paragraphs(args: argparse.Namespace, text: str | bytes) -> list[str]:
    """A document's lines for --src-lang auto: a zip package's paragraphs, as its reader finds
    them (only then is it read twice)."""
    if isinstance(text, str):
        return text.splitlines()
    if args.src_lang != AUTO:
        return []
    from aiayn.documents.translate import READERS

    try:
        return [unit.text for unit in READERS[args.format](text).units]
    except ValueError as err:
        raise ValueError(f"{args.input or '<stdin>'}: {err}") from None


def write_output(args: argparse.Namespace, text: str | bytes) -> int:
    if isinstance(text, bytes):
        return write_bytes(args.output, text)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def write_bytes(path: Path | None, data: bytes) -> int:
    """A zip package to standard output, or to a file written atomically (a device, such as
    /dev/stdout, written as it is)."""
    from aiayn.files import atomic_write

    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    elif path.exists() and not path.is_file():
        path.write_bytes(data)
    else:
        atomic_write(path, lambda tmp: tmp.write_bytes(data))
    return 0
