"""`aiayn translate`: lines, or a document, from stdin or a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aiayn.commands.options.controls import add_controls, controls_of
from aiayn.commands.options.decoding import add_decoding, describe
from aiayn.commands.options.documents import add_document_options, wanted
from aiayn.commands.options.engine import PAPER, engine_config, search_for, search_options
from aiayn.commands.options.languages import (
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
    t.add_argument("--sample", action="store_true", help="sample instead of searching")
    t.add_argument("--temperature", type=float, default=PAPER.temperature)
    t.add_argument("--top-k", type=int, default=PAPER.top_k, help="0 = no limit")
    t.add_argument("--top-p", type=float, default=PAPER.top_p, help="1 = no limit")
    t.add_argument("--seed", type=int, default=PAPER.seed, help="for --sample")
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

    given = search_options(args)
    documents = wanted(args)
    text = read_document(args.input) if args.format != "lines" else None
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
    translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    language = source_language(args, lines if text is None else text.splitlines(), translator)
    say_mismatch(args, lines if text is None else [text])
    cfg, length = search_for(translator, given)
    print(f"search: {describe(cfg)}; {length}", file=sys.stderr)
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
    source: str | list[str],
    language: str,
    protector: Protector | None,
) -> str:
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


def write_output(args: argparse.Namespace, text: str) -> int:
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0
