"""`aiayn backtranslate`: target-language text translated by a reverse model into a synthetic
corpus (Sennrich et al. 2016), by beam search or by sampling (Edunov et al. 2018)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aiayn.commands.options.corpus import add_corpus_translation, read_text_lines, translate_file


def add(commands) -> None:
    p = commands.add_parser(
        "backtranslate",
        help="translate monolingual target-language text with a reverse model: "
        "synthetic_source<TAB>original_target lines for `aiayn prepare`",
    )
    add_corpus_translation(
        p, sampling=True, model_help="the reverse model (target -> source language)"
    )
    p.add_argument(
        "--input",
        type=Path,
        required=True,
        help="monolingual text in the target language of the model you will train, one "
        "sentence a line (UTF-8; .gz, .xz, .bz2 read as they are)",
    )
    p.set_defaults(run=run_backtranslate)


def run_backtranslate(args: argparse.Namespace) -> int:
    if not args.input.is_file():
        raise FileNotFoundError(
            f"{args.input}: no such file; --input names the monolingual text to translate"
        )
    lines = read_text_lines(args.input)
    return translate_file(args, "backtranslate", args.input, lines, synthetic_pair)


def synthetic_pair(line: str, translation: str) -> str:
    """The row of a back-translated line: its translation is the synthetic source."""
    return f"{translation}\t{line}"
