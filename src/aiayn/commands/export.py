"""`aiayn export RUN --format ctranslate2|onnx --out DIR`."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(commands) -> None:
    e = commands.add_parser(
        "export",
        help="write a model for CTranslate2 or ONNX Runtime",
        description="Export a run, checkpoint or model directory. CTranslate2: a directory its "
        "Translator loads (note: its beam search divides by |Y|^alpha, our --length-penalty "
        "power; it has no GNMT penalty). ONNX: an encoder graph and a decoder-step graph that "
        "takes and returns the key/value cache. Both keep our spm.model beside the weights; "
        "translate with `aiayn translate --engine ctranslate2|onnx --model DIR`.",
    )
    e.add_argument("source", metavar="RUN", type=Path, help="run, checkpoint or model directory")
    e.add_argument("--format", required=True, choices=list(EXPORTS))
    e.add_argument("--out", required=True, type=Path, help="directory to write (replaced)")
    e.add_argument(
        "--quantization",
        default=None,
        help="ctranslate2 only: int8, int8_float32, float16, bfloat16, ...; default: float32",
    )
    e.add_argument(
        "--no-shortlist",
        action="store_true",
        help="ctranslate2: leave the model's lexical shortlist out (by default it goes along as "
        "CTranslate2's vocabulary map, vmap.txt, which `--engine ctranslate2` then uses)",
    )
    e.set_defaults(run=run_export)


def run_export(args: argparse.Namespace) -> int:
    from aiayn.layout import model_dir as resolve

    model_dir = resolve(args.source)
    EXPORTS[args.format](model_dir, args)
    print(f"wrote {args.out} from {model_dir}")
    return 0


def to_ctranslate2(model_dir: Path, args: argparse.Namespace) -> None:
    from aiayn.export.ctranslate2 import export_ctranslate2
    from aiayn.layout import VMAP_FILE

    export_ctranslate2(
        model_dir, args.out, quantization=args.quantization, with_shortlist=not args.no_shortlist
    )
    if (Path(args.out) / VMAP_FILE).is_file():
        print(f"the lexical shortlist went along as CTranslate2's vocabulary map ({VMAP_FILE})")


def to_onnx(model_dir: Path, args: argparse.Namespace) -> None:
    if args.quantization is not None:
        raise ValueError("--quantization is for --format ctranslate2 only")
    if args.no_shortlist:
        raise ValueError(
            "--no-shortlist is for --format ctranslate2 only: ONNX graphs always hold the full "
            "output layer"
        )
    from aiayn.export.onnx import OPSET, export_onnx

    export_onnx(model_dir, args.out)
    print(f"ONNX opset {OPSET}")


EXPORTS = {"ctranslate2": to_ctranslate2, "onnx": to_onnx}  # --format: how each is written
