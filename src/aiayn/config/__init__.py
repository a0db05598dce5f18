"""Configuration: frozen dataclasses whose defaults are the paper's, one module per concern.

`model.py` (the network's shape and its presets), `train.py` (the recipe), `decode.py` (the search
and how a model is opened); `base.py` and `checks.py` what they share; `config/overrides.py` the
command line's `--set key=value`. The names below are the package's front door.
"""

from aiayn.config.base import FrozenConfig
from aiayn.config.decode import (
    DECODE_PRECISIONS,
    DOCUMENT_FORMATS,
    ENGINES,
    LENGTH_PENALTIES,
    STOP_RULES,
    TOO_LONG_POLICIES,
    DecodeConfig,
    DecodePrecision,
    DocumentFormat,
    Engine,
    EngineConfig,
    LengthPenalty,
    StopRule,
    TooLongPolicy,
)
from aiayn.config.model import ACTIVATIONS, PRESETS, Activation, ModelConfig, preset
from aiayn.config.train import PRECISIONS, RECIPES, Precision, TrainConfig, recipe

__all__ = [
    "ACTIVATIONS",
    "DECODE_PRECISIONS",
    "DOCUMENT_FORMATS",
    "ENGINES",
    "LENGTH_PENALTIES",
    "PRECISIONS",
    "PRESETS",
    "RECIPES",
    "STOP_RULES",
    "TOO_LONG_POLICIES",
    "Activation",
    "DecodeConfig",
    "DecodePrecision",
    "DocumentFormat",
    "Engine",
    "EngineConfig",
    "FrozenConfig",
    "LengthPenalty",
    "ModelConfig",
    "Precision",
    "StopRule",
    "TooLongPolicy",
    "TrainConfig",
    "preset",
    "recipe",
]
