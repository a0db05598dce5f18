"""Decoding precision: fp32, bf16 (weights cast), or int8 (int8 linear layers on CPU).

int8 comes in two forms, both with int8 weights and one scale per output row, so neither needs
calibration data:

- eager decoding: PyTorch's dynamic quantization. Each input is also quantized, on the fly per
  call, and the products run in int8: what CTranslate2's `int8` compute type does on a CPU.
- compiled decoding (`--compile`, `aiayn.decode.compiled`): `Int8Linear`, int8 weights in the
  compiled step, multiplied by aiayn's own int8 kernel (`int8_kernel`: each input row quantized
  on the fly, as dynamic int8 does) where it builds, else weight-only by PyTorch's
  `_weight_int8pack_mm` (bf16 activations, as torchao's int8 weight-only quantization). torch.ao's
  dynamic int8 layers cannot be compiled; the encoder, which runs eagerly, is dynamic int8
  (`int8_encoder`).

Scores are normalized in float32 either way.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

import torch
from torch import Tensor, nn

from aiayn.config import DECODE_PRECISIONS
from aiayn.decode import int8_kernel
from aiayn.model import Transformer


def for_decoding(model: Transformer, precision: str, weight_only: bool = False) -> Transformer:
    """The model (in eval mode) in the given precision; int8 and bf16 return a changed model.

    weight_only: int8 as int8 weights with bf16 activations (for a compiled step) rather than
    dynamic int8."""
    if precision == "fp32":
        return model
    if precision == "bf16":
        return model.to(torch.bfloat16)
    if precision == "int8":
        return quantize_int8_weights(model) if weight_only else quantize_int8(model)
    raise ValueError(f"decoding precision {precision!r}: choose one of {DECODE_PRECISIONS}")


class Int8Linear(nn.Module):
    """y = x W^T + b with W stored as int8, one scale per output row (symmetric, round to
    nearest), and x, y, b in bf16: int8 by int8 on `int8_kernel` where it builds (W also packed
    for it), else weight-only on PyTorch's int8-weight kernel."""

    weight: Tensor  # (out, in) int8, a buffer
    scale: Tensor  # (out,) per-row scales, a buffer
    bias: Tensor | None  # (out,) or None, a buffer
    packed: Tensor | None  # W as `int8_kernel.pack` lays it out, a buffer; None without it

    def __init__(self, linear: nn.Linear, dtype: torch.dtype = torch.bfloat16) -> None:
        super().__init__()
        w = linear.weight.detach().float()  # (out, in)
        scale = (w.abs().amax(dim=1).clamp(min=1e-12) / 127.0).to(dtype)  # (out,), as applied
        quantized = (w / scale.float()[:, None]).round().clamp(-127, 127)  # (out, in)
        self.register_buffer("weight", quantized.to(torch.int8))
        packed = int8_kernel.pack(self.weight) if int8_kernel.available() else None
        self.register_buffer("packed", packed)
        self.register_buffer("scale", scale)
        bias = None if linear.bias is None else linear.bias.detach().to(dtype)
        self.register_buffer("bias", bias)

    def forward(self, x: Tensor) -> Tensor:
        """(..., in) -> (..., out), in the activations' dtype (bf16)."""
        return self.rows(x, 0, self.weight.shape[0])

    def rows(self, x: Tensor, start: int, stop: int) -> Tensor:
        """Outputs start..stop-1 (`attention.linear_rows`): (..., in) -> (..., stop - start)."""
        flat = x.reshape(-1, x.shape[-1])  # (M, in)
        if self.packed is not None and start % int8_kernel.ROWS == 0:
            rows = self.packed[start : -(-stop // int8_kernel.ROWS) * int8_kernel.ROWS]
            y = int8_kernel.int8_mm(flat, rows, self.scale[start:stop])
        else:
            y = torch._weight_int8pack_mm(flat, self.weight[start:stop], self.scale[start:stop])
        if self.bias is not None:
            y = y + self.bias[start:stop]
        return y.view(*x.shape[:-1], -1)  # (..., stop - start)


def quantize_int8_weights(model: Transformer) -> Transformer:
    """The model in bf16 with int8 weights in every linear layer, and in the output projection
    (an int8 copy of the tied embedding matrix, which stays bf16 for the embedding lookup)."""
    model = with_output_layer(model, torch.bfloat16)
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                setattr(module, child_name, Int8Linear(child))
    return model


def quantize_int8(model: Transformer) -> Transformer:
    """Dynamic int8 linear layers (CPU): every projection the model calls as a module, and the
    output projection (given its own copy of the tied embedding matrix, which stays float for
    the embedding lookup).

    Cross-attention's W^Q / W^K,V rows are sliced from one stacked matrix, so that layer stays
    float32 (its K,V rows run once per source; its Q rows are one small product per step).
    """
    model = with_output_layer(model, torch.float32)
    return dynamic_int8(model, lambda name: not name.endswith("cross_attn.w_qkv"))


def int8_encoder(model: Transformer) -> Transformer:
    """A float32 copy of the model that only encodes: its encoder's linear layers dynamic int8,
    its decoder and output layer left out. What the compiled int8 model encodes with: the
    encoder's products have a row per source token, where quantizing the activations too pays
    (2.9 ms a verse against 5.9 with weight-only int8 in bf16 and 5.3 in float32, one thread,
    AVX2; experiments/decode_compile)."""
    encoder = copy.deepcopy(model).float().eval()
    encoder.decoder_layers = nn.ModuleList()
    encoder.tgt_embed = None
    encoder.out_proj = None
    return dynamic_int8(encoder, lambda name: name.startswith("encoder_layers."))


def dynamic_int8(model: Transformer, chosen: Callable[[str], bool]) -> Transformer:
    """The model with its `chosen` linear layers (by name) in torch.ao's dynamic int8."""
    names = {
        name
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and chosen(name)
    }
    with warnings.catch_warnings():  # torch.ao's eager quantization warns of its deprecation
        warnings.simplefilter("ignore")
        from torch.ao.quantization import quantize_dynamic

        return quantize_dynamic(model, names, dtype=torch.qint8)


def with_output_layer(model: Transformer, dtype: torch.dtype) -> Transformer:
    """The CPU model in eval mode and `dtype`, with an output projection of its own to quantize:
    when the embeddings are tied, a copy of the shared matrix (the embedding lookup keeps the
    float one)."""
    if next(model.parameters()).device.type != "cpu":
        raise ValueError("--precision int8 runs on a CPU only; use bf16 on a GPU")
    model = model.to(dtype).eval()
    if model.out_proj is None:
        D, V = model.cfg.d_model, model.cfg.vocab_size
        model.out_proj = nn.Linear(D, V, bias=False, dtype=dtype)
        model.out_proj.weight = nn.Parameter(model.src_embed.weight.detach().clone())
    return model
