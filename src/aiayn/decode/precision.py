"""Decoding precision: fp32, bf16 (weights cast), or int8 (dynamic int8 linear layers on CPU).

int8 is PyTorch's dynamic quantization: each linear layer's weights are stored as int8 with one
scale per output row, and each input is quantized on the fly per call, so no calibration data
is needed. It is what CTranslate2's `int8` compute type does on a CPU. Scores are still
normalized in float32.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from aiayn.config import DECODE_PRECISIONS
from aiayn.model import Transformer


def for_decoding(model: Transformer, precision: str) -> Transformer:
    """The model (in eval mode) in the given precision; int8 and bf16 return a changed model."""
    if precision == "fp32":
        return model
    if precision == "bf16":
        return model.to(torch.bfloat16)
    if precision == "int8":
        return quantize_int8(model)
    raise ValueError(f"decoding precision {precision!r}: choose one of {DECODE_PRECISIONS}")


def quantize_int8(model: Transformer) -> Transformer:
    """Dynamic int8 linear layers (CPU): every projection the model calls as a module, and the
    output projection (given its own copy of the tied embedding matrix, which stays float for
    the embedding lookup).

    Cross-attention's W^Q / W^K,V rows are sliced from one stacked matrix, so that layer stays
    float32 (its K,V rows run once per source; its Q rows are one small product per step).
    """
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("--precision int8 runs on a CPU only; use bf16 on a GPU")
    model = model.float().eval()
    if model.out_proj is None:  # tied: untie a copy for the output layer only
        D, V = model.cfg.d_model, model.cfg.vocab_size
        model.out_proj = nn.Linear(D, V, bias=False)
        model.out_proj.weight = nn.Parameter(model.src_embed.weight.detach().clone())
    names = {
        name
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and not name.endswith("cross_attn.w_qkv")
    }
    with warnings.catch_warnings():  # torch.ao's eager quantization warns of its deprecation
        warnings.simplefilter("ignore")
        from torch.ao.quantization import quantize_dynamic

        return quantize_dynamic(model, names, dtype=torch.qint8)
