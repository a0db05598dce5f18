"""`aiayn shortlist --model MODEL --data DATA`: build the lexical shortlist of a model from
word alignments of its training pairs, and store it beside the weights."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_K = 50  # candidates per source piece (chosen on the gettext model: docs/translation.md)
DEFAULT_FREQUENT = 100  # most frequent target pieces always in


def add(commands) -> None:
    s = commands.add_parser(
        "shortlist",
        help="build the lexical shortlist that cuts the output layer at decoding",
        description="Align the training pairs' pieces with eflomal (stored in the data "
        "directory, as guided alignment does), keep each source piece's k most probable target "
        "pieces and the most frequent ones, and write shortlist.safetensors beside the model's "
        "weights: translate, evaluate, serve and the Python API then decode each batch over "
        "its shortlist (--no-shortlist: the full output layer). Prints the coverage of the "
        "validation references; --choose also decodes the validation split greedily and picks "
        "k and the frequent pieces that hold 99.5%% of its output pieces with the smallest "
        "shortlist.",
    )
    s.add_argument("--model", required=True, type=Path, help="run, checkpoint or model directory")
    s.add_argument("--data", required=True, type=Path, help="the model's prepared data")
    s.add_argument("--k", type=int, default=DEFAULT_K, help="candidates per source piece")
    s.add_argument(
        "--frequent", type=int, default=DEFAULT_FREQUENT, help="most frequent target pieces kept"
    )
    s.add_argument(
        "--choose",
        action="store_true",
        help="choose --k and --frequent on the validation split's greedy outputs",
    )
    s.add_argument("--sentences", type=int, help="validation lines measured (default: all)")
    s.add_argument("--device", default="cpu", help="cpu, cuda, ... (--choose decodes)")
    s.set_defaults(run=run_shortlist)


def run_shortlist(args: argparse.Namespace) -> int:
    from aiayn import layout
    from aiayn.data.data_dir import DataDir
    from aiayn.decode.shortlist import write_shortlist
    from aiayn.evaluate.shortlist import (
        FREQUENT,
        KS,
        choose,
        lexicon,
        measure,
        validation_pieces,
    )

    if args.k < 1 or args.frequent < 0:
        raise ValueError(f"--k {args.k} --frequent {args.frequent}: need k >= 1, frequent >= 0")
    directory = layout.model_dir(args.model)
    data = DataDir.open(args.data)
    found = validation_pieces(directory, data, args.sentences, args.device, args.choose)
    lex = lexicon(data, max(args.k, *KS) if args.choose else args.k)
    grid = (KS, FREQUENT) if args.choose else ((args.k,), (args.frequent,))
    rows = measure(lex, *found, *grid)
    for row in rows:
        greedy = (
            f", greedy output {row.greedy.covered:.2%} ({row.greedy.sentences:.1%} of lines "
            "whole: unchanged by it)"
            if row.greedy
            else ""
        )
        print(
            f"k {row.k:3d}, {row.frequent:4d} frequent: mean size {row.references.mean_size:7.1f}"
            f", reference pieces {row.references.covered:.2%}{greedy}"
        )
    best = choose(rows) if args.choose else rows[0]
    path = write_shortlist(directory, lex.shortlist(best.k, best.frequent))
    print(f"wrote {path}: k {best.k}, {best.frequent} frequent pieces")
    return 0
