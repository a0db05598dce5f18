"""The network's shape (`ModelConfig`), with the paper's base model as defaults, and the named
presets: the paper's two models, a CPU-sized one, a distilled student's and a tiny one for tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from aiayn.config.base import FrozenConfig
from aiayn.files import read_json

Activation = Literal["relu", "gelu", "swish"]
ACTIVATIONS: tuple[Activation, ...] = get_args(Activation)
PositionalLayout = Literal["interleaved", "concatenated"]
POSITIONAL_LAYOUTS: tuple[PositionalLayout, ...] = get_args(PositionalLayout)


@dataclass(frozen=True)
class ModelConfig(FrozenConfig):
    """The encoder-decoder Transformer's shape. Defaults are the paper's base model (Table 3)."""

    vocab_size: int = 37000  # joint source/target BPE vocabulary (paper: ~37k for EN-DE)
    d_model: int = 512  # width of every sub-layer output and of the embeddings
    d_ff: int = 2048  # inner size of the position-wise feed-forward net
    n_heads: int = 8  # h, attention heads; d_k = d_v = d_model / h
    n_encoder_layers: int = 6  # N for the encoder stack
    n_decoder_layers: int = 6  # N for the decoder stack
    dropout: float = 0.1  # P_drop: on embedding+position sums and on every sub-layer output
    attention_dropout: float = 0.0  # on attention weights; not in the paper, so off by default
    # Not in the paper either, both off by default; for small corpora (Sennrich & Zhang 2019):
    activation_dropout: float = 0.0  # inside the FFN, on max(0, x W_1 + b_1) (fairseq's name)
    word_dropout: float = 0.0  # whole input tokens' embeddings zeroed, source and target
    norm_first: bool = False  # False: the paper's post-norm LayerNorm(x + Sublayer(x))
    norm_eps: float = 1e-5  # LayerNorm epsilon, inside the square root
    activation: Activation = "relu"  # FFN non-linearity: relu (paper), gelu, or swish (= SiLU)
    tie_embeddings: bool = True  # source, target and pre-softmax projection share one matrix
    # sin/cos interleaved (the paper's) or concatenated (fairseq's, Marian's)
    positional: PositionalLayout = "interleaved"
    pad_id: int = 0  # padding token: never attended to, carries no loss
    bos_id: int = 1  # first token of every decoder input
    eos_id: int = 2  # ends every sentence

    def __post_init__(self) -> None:
        problems = []
        for name in ("vocab_size", "d_model", "d_ff", "n_heads"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if self.n_encoder_layers < 1 or self.n_decoder_layers < 1:
            problems.append("n_encoder_layers and n_decoder_layers must be at least 1")
        if self.n_heads >= 1 and self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.d_model % 2:
            problems.append(f"d_model={self.d_model} must be even for sinusoidal positions")
        for name in REGULARIZATION:
            if not 0.0 <= getattr(self, name) < 1.0:
                problems.append(f"{name} must be in [0, 1), got {getattr(self, name)}")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation={self.activation!r}; choose one of {ACTIVATIONS}")
        if self.positional not in POSITIONAL_LAYOUTS:
            problems.append(f"positional={self.positional!r}; choose one of {POSITIONAL_LAYOUTS}")
        ids = {"pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id}
        for name, value in ids.items():
            if not 0 <= value < self.vocab_size:
                problems.append(f"{name}={value} is outside the vocabulary [0, {self.vocab_size})")
        if len(set(ids.values())) != len(ids):
            problems.append(f"pad_id, bos_id and eos_id must differ, got {ids}")
        if problems:
            raise ValueError("Invalid ModelConfig: " + "; ".join(problems))

    @property
    def d_head(self) -> int:
        """d_k = d_v, the size of one attention head."""
        return self.d_model // self.n_heads

    def save_json(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load_json(cls, path: Path) -> ModelConfig:
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"{path}: no model config here; point to a directory written by Transformer.save"
            )
        return cls.from_dict(read_json(path, "re-save the model"), source=str(path))


# The fields that change how a model trains, not the function its weights compute: a run that
# starts from a model's weights (`train --init`) may set them; every other field is the model's.
REGULARIZATION = ("dropout", "attention_dropout", "activation_dropout", "word_dropout")

# The paper's two models (Table 3), a CPU-sized model, a student's and a tiny one for tests.
PRESETS: dict[str, ModelConfig] = {
    "base": ModelConfig(),
    "big": ModelConfig(d_model=1024, d_ff=4096, n_heads=16, dropout=0.3),
    "small": ModelConfig(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, vocab_size=8000
    ),
    # a distilled student (`aiayn distill`): deep encoder, shallow decoder (Kasai et al. 2021);
    # the encoder runs once per sentence, the decoder once per output token: 6+1 decodes 2.1x as
    # fast as `small` at batch 1 greedy (6+2: 1.4x) with as many parameters (docs/translation.md)
    "student": ModelConfig(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=6, n_decoder_layers=1, vocab_size=8000
    ),
    "tiny": ModelConfig(
        vocab_size=64, d_model=32, d_ff=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2
    ),
}


def preset(name: str, **changes: Any) -> ModelConfig:
    """A named preset, optionally with fields changed (e.g. the vocabulary size of your data)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[name].replace(**changes)
