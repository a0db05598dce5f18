"""Configuration: frozen dataclasses whose defaults are the paper's choices, and named presets."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from aiayn.config_checks import check_keys, check_types
from aiayn.files import read_json

ACTIVATIONS = ("relu", "gelu", "swish")
POSITIONAL_LAYOUTS = ("interleaved", "concatenated")

ConfigT = TypeVar("ConfigT", bound="FrozenConfig")


class FrozenConfig:
    """What every config shares (text and vision alike): to and from a JSON-ready dict, and a
    changed copy; an unknown key is an error that lists the valid ones."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: type[ConfigT], values: dict[str, Any], source: str = "config") -> ConfigT:
        """Build from a mapping (read from a file), rejecting unknown keys with the list of
        valid ones and values of the wrong type."""
        check_keys(cls, values, source)
        check_types(cls, values, source)
        try:
            return cls(**values)
        except ValueError as err:  # out of range: say which file holds the value
            raise ValueError(f"{source}: {err}") from None

    def replace(self: ConfigT, **changes: Any) -> ConfigT:
        """A copy with some fields changed; unknown names are an error that lists the valid ones."""
        check_keys(type(self), changes, "override")
        return dataclasses.replace(self, **changes)


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
    norm_first: bool = False  # False: the paper's post-norm LayerNorm(x + Sublayer(x))
    norm_eps: float = 1e-5  # LayerNorm epsilon, inside the square root
    activation: str = "relu"  # FFN non-linearity: relu (paper), gelu, or swish (= SiLU)
    tie_embeddings: bool = True  # source, target and pre-softmax projection share one matrix
    positional: str = "interleaved"  # sin/cos interleaved (paper) or concatenated (fairseq, Marian)
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
        for name in ("dropout", "attention_dropout"):
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


PRECISIONS = ("fp32", "bf16", "fp16")
CASE_SIDES = ("both", "source")  # case_augment: what is cased
CASE_MODES = ("replace", "add")  # case_augment: a cased pair in place of its own, or beside it


@dataclass(frozen=True)
class TrainConfig(FrozenConfig):
    """The training recipe. Defaults are the paper's (section 5) where it gives one."""

    max_tokens: int = 4096  # token budget of one batch, per process, padding included
    pad_to: int = 8  # batch lengths rounded up to a multiple: few shapes, kernels reused; 1 = off
    trim_heap: bool = True  # free heap pages back to the OS after each update: bounded memory
    update_freq: int = 1  # batches accumulated per update (the paper: ~25k tokens per update)
    lr_scale: float = 1.0  # multiplies d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
    warmup: int = 4000  # warmup_steps
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_eps: float = 1e-9
    label_smoothing: float = 0.1  # epsilon_ls
    clip_norm: float = 0.0  # gradient-norm clipping; 0 = off (the paper does not clip)
    precision: str = "fp32"  # fp32 | bf16 (autocast, CPU or CUDA) | fp16 (CUDA, grad scaler)
    max_steps: int = 100_000  # the paper trains base for 100k steps
    max_epochs: int = 0  # 0 = no limit
    max_minutes: float = 0.0  # wall-clock budget; 0 = no limit
    valid_every: int = 1000  # steps between validations; 0 = only at the end
    valid_bleu_sentences: int = 500  # greedy-decoded for BLEU/chrF at validation; 0 = all
    patience: int = 0  # stop after this many validations without a better BLEU; 0 = never
    save_every: int = 1000  # steps between checkpoints; 0 = none by steps
    save_minutes: float = 10.0  # minutes between checkpoints (the paper: every 10 minutes)
    keep_last: int = 5  # step checkpoints kept (the paper averages the last 5)
    average_last: int = 0  # at the end, average the last N checkpoints (the paper: 5); 0 = off
    tune_search: bool = True  # at the end, choose the length penalty on validation (aiayn tune)
    max_bad_steps: int = 5  # consecutive non-finite losses before the run stops
    log_every: int = 50  # steps between lines in metrics.jsonl
    seed: int = 1  # initial weights, dropout, batch order
    # Guided alignment (Garg et al. 2019): the weight of a cross-entropy between one decoder
    # layer's cross-attention head and eflomal's alignments of the training pairs; 0 = off.
    # 0.05 is fairseq's alignment_lambda, for a loss summed over tokens as ours is.
    guided_alignment: float = 0.0
    alignment_layer: int = -2  # the guided decoder layer (negative: from the last)
    alignment_head: int = 0  # its guided head (fairseq's alignment models: the first)
    # A multilingual data directory (`prepare --langs`): direction d is drawn with probability
    # p_d ~ n_d^(1/T) for its n_d pairs (XLM, M2M-100: T = 5); 1 = as often as it has pairs,
    # larger = closer to uniform, so that small directions are seen more often.
    sampling_temperature: float = 5.0
    valid_direction_sentences: int = 100  # per direction, for validation loss and BLEU; 0 = all
    # Each epoch, this fraction of the training pairs is upper- or title-cased (half each) on
    # both sides, as the Firefox translation models train for ALL-CAPS input; 0 = off.
    case_augment: float = 0.0
    # "source": only the source is cased and the target stays as written, so capitals are
    # answered in ordinary case and the decoder never writes the long cased pieces
    case_augment_sides: str = "both"
    # "add": the chosen pairs' cased copies join the batch that holds them, so every update keeps
    # the ordinary pairs it has at case_augment=0 (the same batches) and costs a little more
    case_augment_mode: str = "replace"

    def __post_init__(self) -> None:
        problems = []
        if self.guided_alignment < 0:
            problems.append(
                f"guided_alignment must be 0 (off) or more, got {self.guided_alignment}"
            )
        if self.precision not in PRECISIONS:
            problems.append(f"precision={self.precision!r}; choose one of {PRECISIONS}")
        for name in ("max_tokens", "pad_to", "update_freq", "warmup", "max_steps", "keep_last"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.average_last and not 2 <= self.average_last <= self.keep_last:
            problems.append(
                f"average_last={self.average_last} must be 0 (off) or between 2 and keep_last="
                f"{self.keep_last}: only kept checkpoints can be averaged"
            )
        if not 0 <= self.label_smoothing < 1:
            problems.append(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if not self.sampling_temperature > 0:
            problems.append(
                f"sampling_temperature must be above 0 (1 = proportional, 5 = M2M-100's), got "
                f"{self.sampling_temperature}"
            )
        if self.valid_direction_sentences < 0:
            problems.append(
                f"valid_direction_sentences must be 0 (all) or more, got "
                f"{self.valid_direction_sentences}"
            )
        if not 0 <= self.case_augment <= 1:
            problems.append(
                f"case_augment must be a fraction of the pairs in [0, 1] (0.2 = a fifth cased), "
                f"got {self.case_augment}"
            )
        if self.case_augment_sides not in CASE_SIDES:
            problems.append(
                f"case_augment_sides={self.case_augment_sides!r}; choose one of {CASE_SIDES}"
            )
        if self.case_augment_mode not in CASE_MODES:
            problems.append(
                f"case_augment_mode={self.case_augment_mode!r}; choose one of {CASE_MODES}"
            )
        if self.case_augment and self.guided_alignment:
            problems.append(
                "case_augment cannot be combined with guided_alignment: the alignments are of "
                "the pairs' ordinary pieces; set one of them to 0"
            )
        if problems:
            raise ValueError("Invalid TrainConfig: " + "; ".join(problems))


# Named training recipes. `paper`: section 5 as written, for 100k steps on GPUs. `short`: a run
# of minutes to an hour on a CPU - bf16, a short warmup and a gentler peak than 4,000 warmup
# steps give, frequent small validations, checkpoints every 100 steps, the last 5 averaged.
RECIPES: dict[str, TrainConfig] = {
    "paper": TrainConfig(),
    "short": TrainConfig(
        precision="bf16",
        warmup=500,
        lr_scale=0.5,
        max_steps=1000,
        valid_every=250,
        valid_bleu_sentences=200,
        save_every=100,
        save_minutes=0.0,
        keep_last=5,
        average_last=5,
    ),
}


LENGTH_PENALTIES = ("gnmt", "power", "none")  # the paper's (GNMT's), |Y|^alpha, none
STOP_RULES = ("bound", "k-finished")  # beam search: the paper's (tensor2tensor's), fairseq's
TOO_LONG_POLICIES = ("truncate", "skip", "error")  # an input line longer than the limit
DECODE_PRECISIONS = ("fp32", "bf16", "int8")  # int8: dynamic int8 linear layers, CPU only


@dataclass(frozen=True)
class DecodeConfig(FrozenConfig):
    """How a trained model translates: the search, its limits, and how input is batched.
    (How the model is opened - engine, device, precision - is an `EngineConfig`.)

    Defaults are the paper's (section 6.1: beam 4, alpha 0.6, at most input length + 50 output
    tokens). `aiayn translate`, `aiayn evaluate` and `aiayn serve` take their defaults from here.
    """

    beam: int = 4  # K hypotheses kept per sentence; 1 = greedy decoding
    alpha: float = 0.6  # the length penalty's exponent
    length_penalty: str = "gnmt"  # gnmt: ((5 + |Y|) / 6)^alpha; power: |Y|^alpha; none
    stop: str = "bound"  # bound: no live hypothesis can still win; k-finished: K have ended
    # a sentence with glossary terms: its own length setting (None: as above; decode/tuned.py)
    terms_alpha: float | None = None
    terms_length_penalty: str | None = None
    terms_stop: str | None = None
    nbest: int = 1  # hypotheses returned per sentence, best first (at most beam)
    max_len_a: float = 1.0  # at most a * source length + b output tokens, eos included
    max_len_b: int = 50
    min_len: int = 0  # output tokens before eos may come (benchmarks fix lengths with it)
    no_repeat_ngram: int = 0  # no n-gram of this size twice in an output (fairseq's); 0 = off
    sample: bool = False  # draw each token instead of searching (beam is then unused)
    temperature: float = 1.0  # sampling: divides the logits; lower is more conservative
    top_k: int = 0  # sampling: among the k most probable tokens; 0 = all
    top_p: float = 1.0  # sampling: among the fewest tokens holding this much probability
    seed: int = 0  # sampling: the same seed, the same samples
    max_tokens: int = 4096  # padded source tokens per batch
    max_input_tokens: int = 1024  # the longest input line, in pieces...
    too_long: str = "truncate"  # ...and what happens to a longer one: truncate | skip | error
    max_output_tokens: int = 0  # a cap on a * S + b (eos included); 0 = none (the server's budget)
    deadline: float = 0.0  # time.monotonic() past which a search stops (OverBudgetError); 0 = none

    def __post_init__(self) -> None:
        for value, allowed, what in (
            (self.length_penalty, LENGTH_PENALTIES, "length penalty"),
            (self.stop, STOP_RULES, "stopping rule"),
            (self.terms_length_penalty or "gnmt", LENGTH_PENALTIES, "length penalty for terms"),
            (self.terms_stop or "bound", STOP_RULES, "stopping rule for terms"),
            (self.too_long, TOO_LONG_POLICIES, "policy for too-long lines"),
        ):
            if value not in allowed:
                raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(allowed)}")
        if self.beam < 1 or not 1 <= self.nbest <= self.beam:
            raise ValueError(f"need 1 <= nbest ({self.nbest}) <= beam ({self.beam})")
        if self.temperature <= 0 or self.top_k < 0 or not 0 < self.top_p <= 1:
            raise ValueError(
                "sampling needs temperature > 0, top_k >= 0 and 0 < top_p <= 1 "
                f"(got {self.temperature}, {self.top_k}, {self.top_p})"
            )
        if self.no_repeat_ngram < 0:
            raise ValueError(
                f"no_repeat_ngram must be 0 (off) or an n-gram size, not {self.no_repeat_ngram}"
            )
        if self.max_output_tokens < 0:
            raise ValueError(
                f"max_output_tokens must be 0 (no cap) or more: {self.max_output_tokens}"
            )
        if self.max_tokens < 1 or self.max_input_tokens < 1:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) and max_input_tokens "
                f"({self.max_input_tokens}) must be at least 1"
            )

    def for_terms(self) -> DecodeConfig:
        """The search of a sentence with glossary terms: the terms' length setting where set."""
        return self.replace(
            alpha=self.alpha if self.terms_alpha is None else self.terms_alpha,
            length_penalty=self.terms_length_penalty or self.length_penalty,
            stop=self.terms_stop or self.stop,
        )

    def overridden(self, given: dict[str, Any]) -> DecodeConfig:
        """This search with a user's settings over it: a length setting given applies to every
        sentence, those with glossary terms too (unless the terms' own is given as well)."""
        keep = not set(given) & {"alpha", "length_penalty", "stop"} or "terms_alpha" in given
        drop = (
            {} if keep else {"terms_alpha": None, "terms_length_penalty": None, "terms_stop": None}
        )
        return self.replace(**(drop | given))


ENGINES = ("aiayn", "ctranslate2", "onnx")  # our model; exported for CTranslate2 or ONNX Runtime


@dataclass(frozen=True)
class EngineConfig(FrozenConfig):
    """How a translator is opened (`aiayn.open_translator`): fixed for its lifetime, where a
    `DecodeConfig` may change from call to call. `aiayn translate`, `evaluate` and `serve`
    take their defaults from here."""

    engine: str = "aiayn"  # aiayn: a run or model directory; ctranslate2 | onnx: `aiayn export`'s
    device: str = "cpu"  # cpu, cuda, cuda:1, ... (ONNX Runtime runs on the CPU)
    precision: str = "fp32"  # fp32; bf16: weights cast; int8: dynamic int8 linear layers (CPU)
    compile: bool = False  # the decoder step compiled ahead of time (CPU; int8: weight-only)
    threads: int = 0  # CTranslate2's and ONNX Runtime's threads; 0 = their default

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}")
        if self.precision not in DECODE_PRECISIONS:
            raise ValueError(
                f"unknown decoding precision {self.precision!r}; choose one of "
                f"{', '.join(DECODE_PRECISIONS)}"
            )
        if self.engine != "aiayn" and self.compile:
            raise ValueError(f"--compile is for our own engine; drop it or --engine {self.engine}")
        if self.engine != "aiayn" and self.precision != "fp32":
            raise ValueError(f"--engine {self.engine} decodes in float32; drop --precision")
        if self.threads < 0:
            raise ValueError(
                f"threads must be 0 (the engine's default) or more, not {self.threads}"
            )


def recipe(name: str) -> TrainConfig:
    """A named training recipe."""
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]


# The paper's two models (Table 3), a CPU-sized model and a tiny one for tests.
PRESETS: dict[str, ModelConfig] = {
    "base": ModelConfig(),
    "big": ModelConfig(d_model=1024, d_ff=4096, n_heads=16, dropout=0.3),
    "small": ModelConfig(
        d_model=256, d_ff=1024, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, vocab_size=8000
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
