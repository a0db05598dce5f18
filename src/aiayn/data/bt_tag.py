"""Tagged back-translation (Caswell et al. 2019): the source lines of a synthetic corpus (machine
translations of target-language text, `prepare --synthetic`) begin with one `<BT>` piece, so
the model tells them from real sources and learns from their targets without imitating their
translationese.

The tag is a user-defined SentencePiece symbol (kept as one piece, as the `<2xx>` language tags
are, data/languages.py). It is input only: no training target holds it, and the Tokenizer
drops it from any output it decodes, so `translate` never writes it."""

from __future__ import annotations

BT_TAG = "<BT>"


def bt_tagged(line: str) -> str:
    """`line` as a synthetic source reads: the tag in front."""
    return f"{BT_TAG} {line}"
