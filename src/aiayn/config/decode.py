"""How a trained model translates (`DecodeConfig`, the paper's section 6.1 as defaults) and
how it is opened (`EngineConfig`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from aiayn.config.base import FrozenConfig

LengthPenalty = Literal["gnmt", "power", "none"]  # the paper's (GNMT's), |Y|^alpha, none
LENGTH_PENALTIES: tuple[LengthPenalty, ...] = get_args(LengthPenalty)
StopRule = Literal["bound", "k-finished"]  # beam search: the paper's (tensor2tensor's), fairseq's
STOP_RULES: tuple[StopRule, ...] = get_args(StopRule)
# an input line longer than the limit: cut into chunks each translated (line mode and
# documents; an engine called directly truncates), truncated, left out, or refused
TooLongPolicy = Literal["split", "truncate", "skip", "error"]
TOO_LONG_POLICIES: tuple[TooLongPolicy, ...] = get_args(TooLongPolicy)
DecodePrecision = Literal["fp32", "bf16", "int8"]  # int8: dynamic int8 linear layers, CPU only
DECODE_PRECISIONS: tuple[DecodePrecision, ...] = get_args(DecodePrecision)
Engine = Literal["aiayn", "ctranslate2", "onnx"]  # our model; exported for CTranslate2 or ONNX
ENGINES: tuple[Engine, ...] = get_args(Engine)
# What a translation reads: a sentence per line, or one whole document (aiayn.documents)
DocumentFormat = Literal["lines", "text", "markdown", "html", "po", "xliff", "srt", "docx", "odt"]
DOCUMENT_FORMATS: tuple[DocumentFormat, ...] = get_args(DocumentFormat)


def guards_text(no_repeat_ngram: int, stutter_guard: int) -> str:
    """The repetition guards in words, e.g. ", no repeated 3-gram, stutter guard 3"; "" if off."""
    return (f", no repeated {no_repeat_ngram}-gram" if no_repeat_ngram else "") + (
        f", stutter guard {stutter_guard}" if stutter_guard else ""
    )


@dataclass(frozen=True)
class DecodeConfig(FrozenConfig):
    """How a trained model translates: the search, its limits, and how input is batched.
    (How the model is opened - engine, device, precision - is an `EngineConfig`.)

    Defaults are the paper's (section 6.1: beam 4, alpha 0.6, at most input length + 50 output
    tokens). `aiayn translate`, `aiayn evaluate` and `aiayn serve` take their defaults from here.
    """

    beam: int = 4  # K hypotheses kept per sentence; 1 = greedy decoding
    alpha: float = 0.6  # the length penalty's exponent
    length_penalty: LengthPenalty = "gnmt"  # gnmt: ((5 + |Y|) / 6)^alpha; power: |Y|^alpha; none
    stop: StopRule = "bound"  # bound: no live hypothesis can still win; k-finished: K have ended
    # a sentence with glossary terms: its own length setting (None: as above; decode/tuned.py)
    terms_alpha: float | None = None
    terms_length_penalty: LengthPenalty | None = None
    terms_stop: StopRule | None = None
    nbest: int = 1  # hypotheses returned per sentence, best first (at most beam)
    max_len_a: float = 1.0  # at most a * source length + b output tokens, eos included
    max_len_b: int = 50
    min_len: int = 0  # output tokens before eos may come (benchmarks fix lengths with it)
    no_repeat_ngram: int = 0  # no n-gram of this size twice in an output (fairseq's); 0 = off
    stutter_guard: int = 0  # a unit of 1-3 pieces at most this many times back to back; 0 = off
    sample: bool = False  # draw each token instead of searching (beam is then unused)
    temperature: float = 1.0  # sampling: divides the logits; lower is more conservative
    top_k: int = 0  # sampling: among the k most probable tokens; 0 = all
    top_p: float = 1.0  # sampling: among the fewest tokens holding this much probability
    seed: int = 0  # sampling: the same seed, the same samples
    max_tokens: int = 4096  # padded source tokens per batch
    max_input_tokens: int = 1024  # the longest input line, in pieces...
    too_long: TooLongPolicy = "split"  # ...and a longer one: split | truncate | skip | error
    max_output_tokens: int = 0  # a cap on a * S + b (eos included); 0 = none (the server's budget)
    deadline: float = 0.0  # time.monotonic() past which a search stops (OverBudgetError); 0 = none
    shortlist: bool = True  # decode over the model's lexical shortlist, where it has one

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
        if self.stutter_guard < 0:
            raise ValueError(
                "stutter_guard must be 0 (off) or the copies of a unit allowed back to back "
                f"(3 is safe for human text), not {self.stutter_guard}"
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


@dataclass(frozen=True)
class EngineConfig(FrozenConfig):
    """How a translator is opened (`aiayn.open_translator`): fixed for its lifetime, where a
    `DecodeConfig` may change from call to call. `aiayn translate`, `evaluate` and `serve`
    take their defaults from here."""

    engine: Engine = "aiayn"  # aiayn: a run or model directory; ctranslate2 | onnx: an export
    device: str = "cpu"  # cpu, cuda, cuda:1, ... (ONNX Runtime runs on the CPU)
    # fp32; bf16: weights cast; int8: dynamic int8 linear layers (CPU); other engines: fp32 only
    precision: DecodePrecision = "fp32"
    compile: bool = (
        False  # our engine's decoder step compiled ahead of time (CPU; int8: decode.int8_kernel)
    )
    # CPU threads: CTranslate2's and ONNX Runtime's own; ours sets PyTorch's, which are the
    # whole process's (torch.set_num_threads); 0 = each one's default
    threads: int = 0

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; choose one of {', '.join(ENGINES)}")
        if self.precision not in DECODE_PRECISIONS:
            raise ValueError(
                f"unknown decoding precision {self.precision!r}; choose one of "
                f"{', '.join(DECODE_PRECISIONS)}"
            )
        if self.threads < 0:
            raise ValueError(
                f"threads must be 0 (the engine's default) or more, not {self.threads}"
            )
