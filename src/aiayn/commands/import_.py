"""`aiayn import marian DIR --out MODEL`: a Hugging Face Marian checkpoint as an aiayn model."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(commands) -> None:
    i = commands.add_parser("import", help="bring a model from another toolkit into aiayn")
    kinds = i.add_subparsers(dest="kind", metavar="KIND", required=True)
    m = kinds.add_parser(
        "marian",
        help="a local Hugging Face MarianMTModel directory (nothing is downloaded)",
        description="Read config.json, the weights (model.safetensors), vocab.json and "
        "source.spm/target.spm of a local Marian directory into an aiayn model directory.",
    )
    m.add_argument("directory", type=Path, help="the Marian checkpoint directory")
    m.add_argument("--out", required=True, type=Path, help="aiayn model directory to write")
    m.set_defaults(run=run_import_marian)


def run_import_marian(args: argparse.Namespace) -> int:
    from aiayn.interop.marian import import_marian

    import_marian(args.directory, args.out)
    print(f"wrote {args.out} from {args.directory}")
    return 0
