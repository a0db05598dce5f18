"""`--engine ctranslate2 | onnx` for translate and evaluate: an exported directory decodes."""

from __future__ import annotations

import argparse

from aiayn.config import DecodeConfig


def exported_engine(args: argparse.Namespace, cfg: DecodeConfig):
    """The engine `args.engine` names on the exported directory `args.model`: an object with
    `translate(lines, cfg)` (the best of each line) and `nbest(lines, cfg)`."""
    if cfg.sample:
        raise ValueError(f"--sample runs on our own engine only; drop --engine {args.engine}")
    if cfg.compile:
        raise ValueError(f"--compile is for our own engine; drop it or --engine {args.engine}")
    if cfg.precision != "fp32":
        raise ValueError(f"--engine {args.engine} decodes in float32; drop --precision")
    if args.engine == "ctranslate2":
        from aiayn.engines.ctranslate2 import CTranslate2Engine

        return CTranslate2Engine(args.model, args.device)
    if args.engine == "onnx":
        from aiayn.engines.onnx import OnnxEngine

        return OnnxEngine(args.model)
    raise ValueError(f"unknown engine {args.engine!r}; choose aiayn, ctranslate2 or onnx")
