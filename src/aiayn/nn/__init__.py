"""Drop-in `torch.nn` Transformer modules: change `from torch import nn` to `from aiayn import nn`
for these five classes, and existing code and checkpoints carry on.

Constructor arguments, forward signatures, masks (PyTorch's: boolean True = masked, float
masks added) and state_dict keys are `torch.nn`'s. What `torch.nn` lacks is added:
`TransformerDecoder.init_cache` / `step` decode incrementally on a key/value cache (equal to the
full pass), and `need_weights=True` returns every layer's attention weights.

    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=6)
    memory = encoder(src_embedded, src_key_padding_mask=src == pad_id)  # (B, S, D)
"""

from aiayn.model import KVCache
from aiayn.nn.multihead_attention import MultiheadAttention
from aiayn.nn.torch_layers import TransformerDecoderLayer, TransformerEncoderLayer
from aiayn.nn.torch_transformer import Transformer, TransformerDecoder, TransformerEncoder

__all__ = [
    "KVCache",
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
