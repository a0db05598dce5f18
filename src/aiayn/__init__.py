"""aiayn: the Transformer of "Attention Is All You Need" as real translation software."""

from aiayn.config import PRESETS, ModelConfig, preset
from aiayn.model import KVCache, Transformer

__version__ = "0.1.0"

__all__ = ["PRESETS", "KVCache", "ModelConfig", "Transformer", "__version__", "preset"]
