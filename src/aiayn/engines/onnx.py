"""Translating with the ONNX graphs of `aiayn export --format onnx`, run by ONNX Runtime.

`OnnxModel` is a `DecodingModel` (`decode.protocols`: encode, init_cache, decode on the
key/value cache), so our own searches drive ONNX Runtime unchanged: the same search, the same
length limits, one graph call per step. `aiayn.open_translator` puts our search over it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from aiayn.config import ModelConfig
from aiayn.decode.protocols import DecodingModel
from aiayn.export.onnx import DECODER_FILE, ENCODER_FILE
from aiayn.layout import CONFIG_FILE
from aiayn.model import KVCache
from aiayn.model.cache import empty_self_kv
from aiayn.model.outputs import Decoded


@dataclass(frozen=True)
class OnnxEncoded:
    """The encoder graph's outputs for a (B, S) source batch."""

    cross_k: Tensor  # (N, B, H, S, Dh)
    cross_v: Tensor  # (N, B, H, S, Dh)
    src_mask: Tensor  # (B, S), True = real source token


class OnnxModel:
    """Two ONNX Runtime sessions behind the decoding interface of `Transformer` (CPU)."""

    def __init__(self, directory: str | Path, threads: int = 0) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise ValueError('--engine onnx needs ONNX Runtime: pip install -e ".[onnx]"') from None
        directory = Path(directory)
        for name in (ENCODER_FILE, DECODER_FILE):
            if not (directory / name).is_file():
                raise FileNotFoundError(
                    f"{directory / name}: missing; make the directory with "
                    "`aiayn export RUN --format onnx --out DIR`"
                )
        self.cfg = ModelConfig.load_json(directory / CONFIG_FILE)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        providers = ["CPUExecutionProvider"]
        self.encoder = ort.InferenceSession(str(directory / ENCODER_FILE), options, providers)
        self.decoder = ort.InferenceSession(str(directory / DECODER_FILE), options, providers)

    def parameters(self) -> Iterator[Tensor]:
        """Where decoding puts its tensors: the CPU, where ONNX Runtime reads them."""
        yield torch.empty(0)

    def encode(self, src: Tensor) -> OnnxEncoded:
        """(B, S) source ids -> cross-attention keys/values and the source mask."""
        cross_k, cross_v, src_mask = self.encoder.run(None, {"src": src.cpu().numpy()})
        return OnnxEncoded(*(torch.from_numpy(a) for a in (cross_k, cross_v, src_mask)))

    def init_cache(self, encoded: OnnxEncoded, capacity: int = 0) -> KVCache:
        """An empty cache; the step graph returns the whole cache, so nothing is preallocated
        (`capacity` is accepted for the model's interface and unused)."""
        cross_k, cross_v = tuple(encoded.cross_k.unbind(0)), tuple(encoded.cross_v.unbind(0))
        return KVCache(
            self_k=empty_self_kv(cross_k[0], len(cross_k), 0),
            self_v=empty_self_kv(cross_v[0], len(cross_v), 0),
            cross_k=cross_k,
            cross_v=cross_v,
            src_mask=encoded.src_mask[:, None, None, :],  # (B, 1, 1, S)
        )

    def __call__(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """The teacher-forced pass, (B, S) and (B, T) ids -> (B, T, V) logits: the step graph
        over tgt_in's T positions in turn (scoring found outputs, as greedy n-best lists do)."""
        cache = self.init_cache(self.encode(src))
        logits = []
        for t in range(tgt_in.shape[1]):
            decoded = self.decode(tgt_in[:, t : t + 1], cache=cache)
            assert decoded.cache is not None and decoded.logits is not None  # a cached step
            cache = decoded.cache
            logits.append(decoded.logits)  # (B, 1, V)
        return torch.cat(logits, dim=1)  # (B, T, V)

    def decode(self, tgt: Tensor, *, cache: KVCache) -> Decoded[KVCache]:
        """One step for each row: (B, 1) ids -> (B, 1, V) logits and the extended cache."""
        K = cache.group  # beams share their source in the cache; the graph takes a row each
        N = len(cache.self_k)
        cross_k, cross_v = torch.stack(cache.cross_k), torch.stack(cache.cross_v)
        src_mask = cache.src_mask[:, 0, 0, :]  # (B, S)
        if K > 1:
            cross_k, cross_v = cross_k.repeat_interleave(K, 1), cross_v.repeat_interleave(K, 1)
            src_mask = src_mask.repeat_interleave(K, 0)  # (B*K, S)
        inputs = {
            "tgt": tgt,  # (B, 1)
            "self_k": torch.stack([cache.keys(i) for i in range(N)]),  # (N, B, H, P, Dh)
            "self_v": torch.stack([cache.values(i) for i in range(N)]),
            "cross_k": cross_k,  # (N, B, H, S, Dh)
            "cross_v": cross_v,
            "src_mask": src_mask,
        }
        logits, self_k, self_v = self.decoder.run(None, {k: v.numpy() for k, v in inputs.items()})
        new_k = list(torch.from_numpy(self_k).unbind(0))  # per layer (B, H, P+1, Dh)
        new_v = list(torch.from_numpy(self_v).unbind(0))
        cache = replace(cache, self_k=tuple(new_k), self_v=tuple(new_v), length=cache.length + 1)
        return Decoded(logits=torch.from_numpy(logits), cache=cache)


if TYPE_CHECKING:  # held to the searches' protocol by the type checker

    def _onnx(model: OnnxModel) -> DecodingModel[KVCache]:
        return model
