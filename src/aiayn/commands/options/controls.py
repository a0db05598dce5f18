"""A translation's controls on the command line: target prefixes, a glossary and suppressed
words (docs/translation.md); the API's fields and `Controls`' have the same names."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from aiayn.commands.options.reading import read_lines
from aiayn.commands.options.renamed import old_spelling

if TYPE_CHECKING:
    from aiayn.decode.controls.words import Controls


def add_controls(p: argparse.ArgumentParser) -> None:
    prefix = p.add_argument(
        "--target-prefix",
        type=Path,
        metavar="FILE",
        help="one target prefix per input line (an empty line: none): each translation starts "
        "with it",
    )
    old_spelling(p, "--prefix", prefix)
    p.add_argument(
        "--glossary",
        type=Path,
        metavar="FILE",
        help="'source term<TAB>target term' lines: where a source term occurs, its target "
        "term must appear in the translation (lexically constrained beam search)",
    )
    p.add_argument(
        "--glossary-case", action="store_true", help="match glossary source terms' case exactly"
    )
    p.add_argument(
        "--suppress", nargs="+", metavar="WORD", default=(), help="words never to produce"
    )


def controls_of(args: argparse.Namespace) -> Controls | None:
    """The controls the command line asks for (files read and checked now); None: none."""
    from aiayn.data.glossary import Glossary
    from aiayn.decode.controls.words import Controls

    if args.glossary_case and args.glossary is None:
        raise ValueError("--glossary-case needs --glossary FILE")
    glossary = Glossary.load(args.glossary, args.glossary_case) if args.glossary else None
    prefix = args.target_prefix
    prefixes = tuple(read_lines(prefix)) if prefix else None
    found = Controls(prefixes, glossary, tuple(args.suppress), str(prefix))
    return found if found else None
