"""`torch.nn.MultiheadAttention`'s parameters and masks, computed the aiayn way.

PyTorch's masks are the opposite of ours: a boolean True means "may NOT attend", and a float
mask is added to the scores. They are turned into one mask here, at the boundary: boolean
(True = may attend, our convention) when every given mask is boolean, else additive float.
Shapes as in `aiayn.model` (B batch, H heads, T queries, S keys, D model width, Dh head size).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from aiayn.model.attention import scaled_dot_product_attention
from aiayn.model.masks import causal_mask


def attention_mask(
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
    is_causal: bool,
    B: int,
    H: int,
    T: int,
    S: int,
) -> Tensor | None:
    """PyTorch's attn_mask ((T, S) or (B*H, T, S)) and key_padding_mask ((B, S)) as one mask
    broadcastable to (B, H, T, S): boolean True = may attend, or float added to the scores.

    `is_causal` with no attn_mask applies the causal mask itself (PyTorch would require one).
    """
    if attn_mask is None and is_causal:
        attn_mask = ~causal_mask(
            T, S - T, None if key_padding_mask is None else key_padding_mask.device
        )
    parts = []
    if attn_mask is not None:
        parts.append(attn_mask.view(B, H, T, S) if attn_mask.dim() == 3 else attn_mask)
    if key_padding_mask is not None:
        parts.append(key_padding_mask[:, None, None, :])  # (B, 1, 1, S)
    if not parts:
        return None
    if all(p.dtype == torch.bool for p in parts):
        masked = parts[0] if len(parts) == 1 else parts[0] | parts[1]
        return ~masked  # True = may attend
    additive = [_additive(p) for p in parts]
    return additive[0] if len(additive) == 1 else additive[0] + additive[1]


def _additive(mask: Tensor) -> Tensor:
    """A mask as a float one added to the scores: boolean True -> -inf, float as given."""
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, device=mask.device).masked_fill(mask, -math.inf)
    return mask


class MultiheadAttention(nn.Module):
    """Multi-head attention with `torch.nn.MultiheadAttention`'s parameter names
    (`in_proj_weight` stacks W^Q, W^K, W^V; `out_proj` is W^O), so its state_dict loads."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim={embed_dim} is not divisible by num_heads={num_heads}")
        kw = {"device": device, "dtype": dtype}
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim, **kw))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim, **kw)) if bias else None
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **kw)
        nn.init.xavier_uniform_(self.in_proj_weight)
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def project(self, x: Tensor, part: slice) -> Tensor:
        """Rows `part` of the stacked W^Q|W^K|W^V applied to (B, L, D), split into heads."""
        bias = None if self.in_proj_bias is None else self.in_proj_bias[part]
        y = F.linear(x, self.in_proj_weight[part], bias)  # (B, L, n*D)
        B, L, _ = y.shape
        heads = y.view(B, L, -1, self.num_heads, self.embed_dim // self.num_heads)
        return heads.permute(2, 0, 3, 1, 4)  # (n, B, H, L, Dh)

    def attend(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """(B, H, T, Dh) queries over (B, H, S, Dh) keys/values -> (B, T, D) after W^O, and
        the (B, H, T, S) weights when asked."""
        dropout_p = self.dropout if self.training else 0.0
        if mask is None or mask.dtype == torch.bool:
            heads, weights = scaled_dot_product_attention(
                q, k, v, mask, dropout_p=dropout_p, need_weights=need_weights
            )  # (B, H, T, Dh)
        else:  # an additive float mask
            scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1) + mask  # (B, H, T, S)
            weights = torch.softmax(scores, dim=-1)
            heads = F.dropout(weights, p=dropout_p) @ v  # (B, H, T, Dh)
        B, _, T, _ = heads.shape
        out = heads.transpose(1, 2).reshape(B, T, self.embed_dim)  # (B, T, D)
        return self.out_proj(out), weights if need_weights else None
