"""`aiayn params`: parameter counts beside the paper's."""

from __future__ import annotations

import argparse

from aiayn.config import PRESETS, preset


def add(commands) -> None:
    params = commands.add_parser(
        "params", help="count a preset's parameters beside the paper's figures"
    )
    params.add_argument("--preset", choices=list(PRESETS), default=None, help="default: all")
    params.add_argument(
        "--vocab-size", type=int, default=37000, help="shared vocabulary (paper: ~37,000)"
    )
    params.set_defaults(run=run_params)


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
