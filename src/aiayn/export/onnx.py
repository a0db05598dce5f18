"""Export to ONNX: an encoder graph and a decoder-step graph that takes and returns the KV cache.

    encoder.onnx       src (B, S) int64
                       -> cross_k, cross_v (N, B, H, S, Dh) float32, src_mask (B, S) bool
    decoder_step.onnx  tgt (B, 1) int64, self_k, self_v (N, B, H, P, Dh),
                       cross_k, cross_v (N, B, H, S, Dh), src_mask (B, S)
                       -> logits (B, 1, V), self_k, self_v (N, B, H, P+1, Dh)

N is the number of decoder layers. B, S and P are dynamic; P = 0 at the first step (empty
self_k/self_v), so ONNX Runtime decodes incrementally and never re-runs the prefix. The
cross-attention keys/values are projected once per source, by the encoder graph.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import torch
from torch import Tensor, nn

from aiayn.data.tokenizer import Tokenizer
from aiayn.devices import no_default_device
from aiayn.evaluate.tuned import carry_tuned
from aiayn.files import atomic_directory
from aiayn.layout import CONFIG_FILE, TOKENIZER_FILE
from aiayn.model import KVCache, Transformer

OPSET = 18
ENCODER_FILE = "encoder.onnx"
DECODER_FILE = "decoder_step.onnx"


class EncoderGraph(nn.Module):
    """The encoder, plus every decoder layer's cross-attention keys/values of its memory."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        cache = self.model.init_cache(self.model.encode(src))
        cross_k = torch.stack(cache.cross_k)  # (N, B, H, S, Dh)
        cross_v = torch.stack(cache.cross_v)  # (N, B, H, S, Dh)
        return cross_k, cross_v, cache.src_mask[:, 0, 0, :]  # (B, S)


class DecoderStepGraph(nn.Module):
    """One decoding step for every row, continuing the cache it is given."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(
        self,
        tgt: Tensor,
        self_k: Tensor,
        self_v: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor,
    ) -> tuple[Tensor, Tensor, Tensor]:
        P = self_k.shape[3]
        # Keys and values share the past length P. torch 2.11's export gives the two inputs
        # their own symbols despite one Dim; without this fact the value cache's write at
        # [P : P + 1] has a length it cannot decide (torch 2.13 infers it).
        torch._check(self_v.shape[3] == P)
        room = self_k.new_zeros(*self_k.shape[:3], 1, self_k.shape[4])  # (N, B, H, 1, Dh)
        cache = KVCache(  # the P past steps and room for this one, written in place
            self_k=tuple(torch.cat((self_k, room), dim=3).unbind(0)),  # per layer (B, H, P+1, Dh)
            self_v=tuple(torch.cat((self_v, room), dim=3).unbind(0)),
            cross_k=tuple(cross_k.unbind(0)),  # per layer (B, H, S, Dh)
            cross_v=tuple(cross_v.unbind(0)),
            src_mask=src_mask[:, None, None, :],  # (B, 1, 1, S)
            length=P,
        )
        decoded = self.model.decode(tgt, cache=cache)
        assert decoded.logits is not None and decoded.cache is not None  # a projected cached step
        new_k = torch.stack(decoded.cache.self_k)  # (N, B, H, P+1, Dh)
        new_v = torch.stack(decoded.cache.self_v)  # (N, B, H, P+1, Dh)
        return decoded.logits, new_k, new_v  # (B, 1, V), ...


def example_inputs(model: Transformer, B: int = 2, S: int = 11, P: int = 3):
    """Inputs for tracing: sizes above 8 and distinct, so none is taken for a constant."""
    cfg = model.cfg
    N, H, Dh = cfg.n_decoder_layers, cfg.n_heads, cfg.d_head
    src = torch.full((B, S), 4, dtype=torch.long)
    src[:, -1] = cfg.eos_id
    tgt = torch.full((B, 1), 4, dtype=torch.long)
    self_kv = torch.zeros(N, B, H, P, Dh)
    cross_kv = torch.zeros(N, B, H, S, Dh)
    return src, (tgt, self_kv, self_kv.clone(), cross_kv, cross_kv.clone(), src != cfg.pad_id)


def export_graphs(model: Transformer, out: Path) -> None:
    """Write encoder.onnx and decoder_step.onnx for `model` (in eval mode) into `out`."""
    batch, src_len, past = (torch.export.Dim(n, min=1, max=4096) for n in ("B", "S", "P"))
    src, step = example_inputs(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on its own internals
        torch.onnx.export(
            EncoderGraph(model),
            (src,),
            str(out / ENCODER_FILE),
            input_names=["src"],
            output_names=["cross_k", "cross_v", "src_mask"],
            dynamic_shapes={"src": {0: batch, 1: src_len}},
            opset_version=OPSET,
            dynamo=True,
            external_data=False,
            verbose=False,
        )
        self_kv = {1: batch, 3: past}
        cross_kv = {1: batch, 3: src_len}
        torch.onnx.export(
            DecoderStepGraph(model),
            step,
            str(out / DECODER_FILE),
            input_names=["tgt", "self_k", "self_v", "cross_k", "cross_v", "src_mask"],
            output_names=["logits", "new_self_k", "new_self_v"],
            dynamic_shapes={
                "tgt": {0: batch},
                "self_k": self_kv,
                "self_v": self_kv,
                "cross_k": cross_kv,
                "cross_v": cross_kv,
                "src_mask": {0: batch, 1: src_len},
            },
            opset_version=OPSET,
            dynamo=True,
            external_data=False,
            verbose=False,
        )


def export_onnx(model_dir: Path, out: Path) -> Path:
    """Convert an aiayn model directory into ONNX graphs at `out`, written atomically, with
    config.json (sizes and special ids) and spm.model beside them."""
    try:
        import onnx  # noqa: F401  (the exporter needs it and onnxscript)
        import onnxscript  # noqa: F401
    except ImportError:
        raise ValueError(
            'ONNX export needs onnx and onnxscript: pip install -e ".[onnx]"'
        ) from None
    with no_default_device():  # the graphs are traced on the CPU, whatever torch's default
        model = Transformer.load(model_dir).eval()
        tokenizer = Tokenizer(model_dir)
        with atomic_directory(Path(out)) as tmp, torch.no_grad():
            export_graphs(model, tmp)
            model.cfg.save_json(tmp / CONFIG_FILE)
            shutil.copyfile(tokenizer.path, tmp / TOKENIZER_FILE)
            carry_tuned(model_dir, tmp)  # the length setting chosen on validation, if there is one
    return Path(out)
