"""The encoder-decoder Transformer of Vaswani et al. (2017).

Notation for tensor shapes, used in a comment on every line that changes one (batch first):

    B   batch size                      S   source length
    T   target length (new steps)       P   target steps already in the cache
    L   either length, S or T           D   d_model
    F   d_ff, the feed-forward size     H   attention heads
    Dh  d_model / H, the head size      V   vocabulary size
    K   beam size (B*K rows when beams are flattened into the batch)
    N   layers of a stack               C   a fixed-shape cache's capacity (target steps)

Masks follow one convention everywhere: boolean, True = may attend, broadcastable to (B, H, T, S);
they are built in `aiayn.model.masks` only.
"""

from aiayn.model.cache import FixedKVCache, KVCache
from aiayn.model.outputs import AttentionMaps, Decoded, Encoded
from aiayn.model.params import count_parameters
from aiayn.model.transformer import Transformer

__all__ = [
    "AttentionMaps",
    "Decoded",
    "Encoded",
    "FixedKVCache",
    "KVCache",
    "Transformer",
    "count_parameters",
]
