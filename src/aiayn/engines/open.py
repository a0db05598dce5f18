"""One way to open a translator, whatever runs it: the only place an engine is chosen."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import torch

from aiayn import layout
from aiayn.config import DecodeConfig, EngineConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.compiled import CompiledModel
from aiayn.decode.shortlisted import open_shortlist
from aiayn.decode.translate import load_model
from aiayn.engines.base import Translator
from aiayn.engines.languages import for_language
from aiayn.engines.search import SearchTranslator
from aiayn.evaluate.tuned import read_tuned


def open_translator(
    model: str | Path,
    config: EngineConfig | None = None,
    *,
    tgt_lang: str | None = None,
    **options: Any,
) -> Translator:
    """A `Translator` on `model`, opened as `config` (or `EngineConfig(**options)`) says.

    Args:
        model: for the engine "aiayn", a run, checkpoint or model directory (a run gives its
            best checkpoint, else its latest); for "ctranslate2" and "onnx", a directory
            written by `aiayn export --format ctranslate2|onnx`.
        config: engine, device, precision, compile, threads (`aiayn.config.EngineConfig`).
        tgt_lang: a multilingual model's target language ("de"): its `<2de>` tag is written
            in front of every line (engines/languages.py); None: each line carries its own tag.
            A bilingual model takes none.
        options: the same, as keywords, e.g. `open_translator("runs/demo", precision="bf16")`.

    Returns:
        An object with `translate(lines, cfg)`, `nbest(lines, cfg)`, `attention(line, found)`
        and `warm_up(beams)`; `cfg` is a `DecodeConfig` (default: the translator's
        `default_search`, the paper's with the length setting stored with the model by
        `aiayn tune`, where there is one: `search_origin` says which).
    """
    config = (config or EngineConfig()).replace(**options)
    return for_language(open_engine(model, config), tgt_lang)


def open_copy(model: str | Path) -> Translator:
    """`aiayn translate --dry-run`: every sentence its own translation, measured in the pieces
    of `model`'s SentencePiece model (a run, checkpoint or model directory); no weights load."""
    from aiayn.engines.copy import CopyTranslator

    return CopyTranslator(Tokenizer(layout.model_dir(model)))


def open_engine(model: str | Path, config: EngineConfig) -> Translator:
    """The engine `config` names on `model`, untouched by any target language."""
    check_options(config)
    directory = model_directory(model, config)
    search, origin = stored_search(directory, our_search=config.engine != "ctranslate2")
    if config.engine == "ctranslate2":
        from aiayn.engines.ctranslate2 import CTranslate2Translator

        return CTranslate2Translator(model, config.device, config.threads, search, origin)
    if config.engine == "onnx":
        from aiayn.engines.onnx import OnnxModel

        if config.device != "cpu":
            raise ValueError(f"--engine onnx runs on the CPU; drop --device {config.device}")
        cannot = "ONNX graphs do not return attention weights; use --engine aiayn"
        onnx = OnnxModel(model, config.threads)
        return SearchTranslator(onnx, Tokenizer(model), None, None, cannot, search, origin)
    if config.threads:  # PyTorch's threads are the process's, not one translator's
        torch.set_num_threads(config.threads)
    found, tokenizer = load_model(directory, config.device, config.precision, config.compile)
    base = found.model if isinstance(found, CompiledModel) else found  # the Transformer
    shortlist = open_shortlist(directory, found, base)
    warm_up = None
    if isinstance(found, CompiledModel):  # the shortlist's steps too, where there is one
        guards = (search.no_repeat_ngram, search.stutter_guard)  # greedy's loop's, by default
        warm_up = functools.partial(found.warm_up, states=shortlist is not None, guards=guards)
    return SearchTranslator(found, tokenizer, found, warm_up, "", search, origin, shortlist)


def check_options(config: EngineConfig) -> None:
    """Refuse what only our own engine does: a compiled step, another precision."""
    if config.engine != "aiayn" and config.compile:
        raise ValueError(f"--compile is for our own engine; drop it or --engine {config.engine}")
    if config.engine != "aiayn" and config.precision != "fp32":
        raise ValueError(f"--engine {config.engine} decodes in float32; drop --precision")


def model_directory(model: str | Path, config: EngineConfig) -> Path:
    """The directory whose files the engine reads: for ours, a run's best (else latest)
    checkpoint or the model directory given; for the others, their export as given."""
    return layout.model_dir(model) if config.engine == "aiayn" else Path(model)


def stored_search(directory: Path, our_search: bool = True) -> tuple[DecodeConfig, str]:
    """The paper's search with the length setting `aiayn tune` stored in `directory`, where
    there is one the engine can express (`our_search` False: CTranslate2's, |Y|^alpha only);
    and where the setting comes from, in words."""
    paper = DecodeConfig() if our_search else DecodeConfig(length_penalty="power")
    tuned = read_tuned(directory)
    cfg = tuned.config(paper, our_search) if tuned is not None else None
    if tuned is None or cfg is None:
        why = "none stored" if tuned is None else "none it can express"
        return paper, f"the paper's length setting ({why}; `aiayn tune` chooses one)"
    return cfg, f"{directory / layout.SEARCH_FILE}, {tuned.describe()}"
