"""Every engine behind one interface: `open_translator` opens our own model, a CTranslate2
export or ONNX graphs, and returns a `Translator`."""

from aiayn.engines.base import Alternative, Translation, Translator
from aiayn.engines.open import open_translator

__all__ = ["Alternative", "Translation", "Translator", "open_translator"]
