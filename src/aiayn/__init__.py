"""aiayn: the Transformer of "Attention Is All You Need" as real translation software."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Imported on first use, so that commands which do not need torch (prepare) start fast and
# their worker processes stay small.
_LAZY = {
    "Controls": "aiayn.decode.controls.words",
    "DecodeConfig": "aiayn.config",
    "Glossary": "aiayn.data.glossary",
    "LineTranslator": "aiayn.documents.lines",
    "Protector": "aiayn.documents.protect",
    "EngineConfig": "aiayn.config",
    "open_translator": "aiayn.engines",
    "ModelConfig": "aiayn.config",
    "PRESETS": "aiayn.config",
    "preset": "aiayn.config",
    "Transformer": "aiayn.model",
    "KVCache": "aiayn.model",
}

if TYPE_CHECKING:
    from aiayn.config import PRESETS, DecodeConfig, EngineConfig, ModelConfig, preset
    from aiayn.data.glossary import Glossary
    from aiayn.decode.controls.words import Controls
    from aiayn.documents.lines import LineTranslator
    from aiayn.documents.protect import Protector
    from aiayn.engines import open_translator
    from aiayn.model import KVCache, Transformer


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'aiayn' has no attribute {name!r}")


__all__ = [
    "PRESETS",
    "Controls",
    "DecodeConfig",
    "EngineConfig",
    "Glossary",
    "KVCache",
    "LineTranslator",
    "ModelConfig",
    "Protector",
    "Transformer",
    "__version__",
    "open_translator",
    "preset",
]
