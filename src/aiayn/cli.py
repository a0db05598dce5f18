"""The `aiayn` command line. Subcommands arrive with the pipeline: prepare, train, translate..."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from aiayn import __version__
from aiayn.config import PRESETS, preset


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiayn",
        description="The Transformer of 'Attention Is All You Need' (Vaswani et al., 2017).",
    )
    parser.add_argument("--version", action="version", version=f"aiayn {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    params = commands.add_parser(
        "params", help="count a preset's parameters beside the paper's figures"
    )
    params.add_argument("--preset", choices=list(PRESETS), default=None, help="default: all")
    params.add_argument(
        "--vocab-size", type=int, default=37000, help="shared vocabulary (paper: ~37,000)"
    )
    params.set_defaults(run=run_params)
    return parser


def run_params(args: argparse.Namespace) -> int:
    from aiayn.model.params import PAPER_PARAMETERS, count_parameters

    names = [args.preset] if args.preset else list(PRESETS)
    print(f"{'preset':<8} {'parameters':>14} {'paper':>10}   (vocabulary {args.vocab_size:,})")
    for name in names:
        n = count_parameters(preset(name, vocab_size=args.vocab_size))
        paper = PAPER_PARAMETERS.get(name)
        paper_text = f"{paper / 1e6:.0f}M" if paper else "-"
        print(f"{name:<8} {n:>14,} {paper_text:>10}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as err:
        print(f"aiayn {args.command}: error: {err}", file=sys.stderr)
        return 2
