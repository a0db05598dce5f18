"""One way to open a translator, whatever runs it: the only place an engine is chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiayn.config import EngineConfig
from aiayn.data.vocab import Tokenizer
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.translate import load_model
from aiayn.engines.base import Translator
from aiayn.engines.search import SearchTranslator


def open_translator(
    model: str | Path, config: EngineConfig | None = None, **options: Any
) -> Translator:
    """A `Translator` on `model`, opened as `config` (or `EngineConfig(**options)`) says.

    Args:
        model: for the engine "aiayn", a run, checkpoint or model directory (a run gives its
            best checkpoint, else its latest); for "ctranslate2" and "onnx", a directory
            written by `aiayn export --format ctranslate2|onnx`.
        config: engine, device, precision, compile, threads (`aiayn.config.EngineConfig`).
        options: the same, as keywords, e.g. `open_translator("runs/demo", precision="bf16")`.

    Returns:
        An object with `translate(lines, cfg)`, `nbest(lines, cfg)`, `attention(line, found)`
        and `warm_up(beams)`; `cfg` is a `DecodeConfig` (default: the engine's
        `default_search`).
    """
    config = (config or EngineConfig()).replace(**options)
    if config.engine == "ctranslate2":
        from aiayn.engines.ctranslate2 import CTranslate2Translator

        return CTranslate2Translator(model, config.device, config.threads)
    if config.engine == "onnx":
        from aiayn.engines.onnx import OnnxModel

        if config.device != "cpu":
            raise ValueError(f"--engine onnx runs on the CPU; drop --device {config.device}")
        cannot = "ONNX graphs do not return attention weights; use --engine aiayn"
        return SearchTranslator(
            OnnxModel(model, config.threads), Tokenizer(model), cannot_attend=cannot
        )
    found, tokenizer = load_model(model, config.device, config.precision, config.compile)
    if isinstance(found, CompiledModel):
        return SearchTranslator(found, tokenizer, found, warm_up=found.warm_up)
    return SearchTranslator(found, tokenizer, found)
