"""The model a command opens and how (translate, evaluate, serve), and the length setting: by
default the one stored with the model (`aiayn tune`), else the paper's."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from aiayn.config import (
    DECODE_PRECISIONS,
    ENGINES,
    LENGTH_PENALTIES,
    STOP_RULES,
    DecodeConfig,
    EngineConfig,
)
from aiayn.config.decode import guards_text

if TYPE_CHECKING:
    from aiayn.engines import Translator

PAPER = DecodeConfig()  # every default of the search is read from here
OPENED = EngineConfig()  # ...and of how the model is opened
LENGTH_OPTIONS = ("alpha", "length_penalty", "stop")
# what a model's tuned search (search.json) sets: flags without a default, so it applies
TUNED_OPTIONS = (*LENGTH_OPTIONS, "no_repeat_ngram", "stutter_guard")


def add_engine(
    p: argparse.ArgumentParser,
    compile_help: str,
    model_flag: str = "--model",
    model_help: str = "run, checkpoint or model directory",
) -> None:
    """The model (`args.model`, whatever its flag is called: distill's --teacher) and how it is
    opened."""
    p.add_argument(model_flag, dest="model", required=True, help=model_help)
    p.add_argument("--device", default=OPENED.device, help="cpu, cuda, cuda:1, ...")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=OPENED.engine,
        help="ctranslate2 | onnx: a directory from `aiayn export` as --model; CTranslate2's "
        "beam search needs --length-penalty power or none (it divides by |Y|^alpha, not "
        "GNMT's form)",
    )
    p.add_argument(
        "--precision",
        choices=DECODE_PRECISIONS,
        default=OPENED.precision,
        help="bf16: weights cast; int8: dynamic int8 linear layers, CPU only "
        "(see benchmarks/README.md)",
    )
    p.add_argument("--compile", action="store_true", help=compile_help)


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """How the command line opens its model."""
    return EngineConfig(args.engine, args.device, args.precision, args.compile)


def add_length(p: argparse.ArgumentParser) -> None:
    """The length setting and the repetition guards; none of their flags has a default: the
    model's tuned one applies."""
    p.add_argument(
        "--alpha",
        type=float,
        help=f"length penalty exponent (default: the model's tuned one, else the paper's "
        f"{PAPER.alpha}; --alpha {PAPER.alpha} for the paper's)",
    )
    p.add_argument(
        "--length-penalty",
        choices=LENGTH_PENALTIES,
        help="gnmt: ((5+|Y|)/6)^alpha (paper); power: |Y|^alpha (fairseq, Marian, HF); "
        "default: the model's tuned one, else gnmt",
    )
    p.add_argument(
        "--stop",
        choices=STOP_RULES,
        help="bound: end when no live hypothesis can beat the best finished one (paper); "
        "k-finished: end when beam-size hypotheses have finished (fairseq; favours short ones); "
        "default: the model's tuned one, else bound",
    )
    p.add_argument(
        "--no-repeat-ngram",
        type=int,
        metavar="N",
        help="no n-gram of N pieces twice in an output (fairseq's, Hugging Face's); "
        "default: the model's tuned one, else 0 (off)",
    )
    p.add_argument(
        "--stutter-guard",
        type=int,
        metavar="N",
        help="no unit of 1-3 pieces more than N times back to back (the loop inside a word: "
        '"mehrererererer"; 3 blocked no human reference we tried); default: the model\'s '
        "tuned one, else 0 (off)",
    )


def search_options(args: argparse.Namespace, only: Collection[str] | None = None) -> dict[str, Any]:
    """The search settings given on the command line (checked now, before a model loads): the
    length setting only where given, the others with their defaults; with `only`, those."""
    names = {f.name for f in dataclasses.fields(DecodeConfig)}
    if only is not None:
        names &= set(only)
    given = {k: v for k, v in vars(args).items() if k in names and v is not None}
    DecodeConfig(**given)  # a bad combination is an error before the model loads
    return given


def beam_search(cfg: DecodeConfig) -> bool:
    """Whether `cfg` searches with a beam, so a length setting (and its guards) applies."""
    return cfg.beam > 1 and not cfg.sample


def search_for(translator: Translator, given: dict[str, Any]) -> tuple[DecodeConfig, str]:
    """The translator's default search with the command line's settings over it; and where the
    length setting and the repetition guards come from, in words."""
    cfg = translator.default_search.overridden(given)
    if not beam_search(cfg):
        return cfg, "no length penalty needed"
    guards = guards_text(cfg.no_repeat_ngram, cfg.stutter_guard)
    length = f"{cfg.length_penalty} alpha {cfg.alpha:g}, stop {cfg.stop}{guards}"
    shown = LENGTH_OPTIONS + tuple(k for k in TUNED_OPTIONS[3:] if getattr(cfg, k))
    flags = [f"--{k.replace('_', '-')}" for k in shown if k in given]
    if len(flags) == len(shown):
        origin = "set on the command line"
    elif flags:
        origin = f"{', '.join(flags)} set on the command line, the rest: {translator.search_origin}"
    else:
        origin = translator.search_origin
    return cfg, f"{length} ({origin})"
