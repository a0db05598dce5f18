"""The `aiayn` command line: prepare -> train -> translate / evaluate, and helpers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from aiayn import __version__
from aiayn.commands import (
    average,
    backtranslate,
    distill,
    evaluate,
    export,
    import_,
    params,
    plot,
    prepare,
    serve,
    shortlist,
    train,
    translate,
    tune,
    vision,
)
from aiayn.data.sources import DataError

# One module per subcommand, in the order `aiayn --help` lists them: the pipeline, then helpers.
COMMANDS = (
    prepare,
    train,
    average,
    tune,
    shortlist,
    translate,
    evaluate,
    backtranslate,
    distill,
    plot,
    serve,
    params,
    export,
    import_,
    vision,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiayn",
        description="The Transformer of 'Attention Is All You Need' (Vaswani et al., 2017).",
    )
    parser.add_argument("--version", action="version", version=f"aiayn {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.own_process = argv is None  # run as a program (not called from Python): may restart
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (ValueError, OSError, DataError) as err:
        print(f"aiayn {args.command}: error: {err}", file=sys.stderr)
        return 2
