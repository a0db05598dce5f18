"""The training recipe (`TrainConfig`), with the paper's section 5 as defaults, and the named
recipes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from aiayn.config.base import FrozenConfig

Precision = Literal["fp32", "bf16", "fp16"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
Sides = Literal["both", "source"]  # what case_augment cases, or subword_sampling samples
SIDES: tuple[Sides, ...] = get_args(Sides)
CaseMode = Literal["replace", "add"]  # case_augment: a cased pair in place of its own, or beside it
CASE_MODES: tuple[CaseMode, ...] = get_args(CaseMode)
LrSchedule = Literal["inverse_sqrt", "constant"]  # after the warmup: the paper's decay, or none
LR_SCHEDULES: tuple[LrSchedule, ...] = get_args(LrSchedule)
Freeze = Literal["none", "embeddings", "encoder"]  # what a fine-tuning run leaves as it found it
FREEZES: tuple[Freeze, ...] = get_args(Freeze)


@dataclass(frozen=True)
class TrainConfig(FrozenConfig):
    """The training recipe. Defaults are the paper's (section 5) where it gives one."""

    max_tokens: int = 4096  # token budget of one batch, per process, padding included
    pad_to: int = 8  # batch lengths rounded up to a multiple: few shapes, kernels reused; 1 = off
    trim_heap: bool = True  # free heap pages back to the OS after each update: bounded memory
    update_freq: int = 1  # batches accumulated per update (the paper: ~25k tokens per update)
    lr_scale: float = 1.0  # multiplies d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
    warmup: int = 4000  # warmup_steps
    # After the warmup: "inverse_sqrt" (section 5.3) decays with step^-0.5; "constant" keeps
    # the peak (fine-tuning: fairseq's fixed rate, Marian's rate without --lr-decay).
    lr_schedule: LrSchedule = "inverse_sqrt"
    # The rate at the end of the warmup; 0 = the paper's (d_model * warmup)^-0.5. lr_scale
    # multiplies either.
    lr_peak: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_eps: float = 1e-9
    label_smoothing: float = 0.1  # epsilon_ls
    clip_norm: float = 0.0  # gradient-norm clipping; 0 = off (the paper does not clip)
    precision: Precision = "fp32"  # fp32 | bf16 (autocast, CPU or CUDA) | fp16 (CUDA, grad scaler)
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
    case_augment_sides: Sides = "both"
    # "add": the chosen pairs' cased copies join the batch that holds them, so every update keeps
    # the ordinary pairs it has at case_augment=0 (the same batches) and costs a little more
    case_augment_mode: CaseMode = "replace"
    # Subword regularisation (Kudo 2018; BPE-dropout, Provilkov et al. 2020): each epoch the
    # training sources are segmented anew, every merge of the BPE left out with this probability
    # (0.1 is BPE-dropout's; a unigram model: the smoothing alpha of its sampling); 0 = off.
    subword_sampling: float = 0.0
    # "both": the targets are sampled too (as BPE-dropout does); "source": the decoder learns
    # the prepared segmentation, the one it writes at translation time
    subword_sampling_sides: Sides = "source"
    # Fine-tuning (`train --init`): parameters that get no gradient and no optimizer state.
    # "embeddings": the embedding tables (tied: the one shared matrix, which is also the output
    # projection); "encoder": what only the encoder uses (its layers, and the source embedding
    # where it is not shared with the decoder).
    freeze: Freeze = "none"

    def __post_init__(self) -> None:
        problems = [
            f"{name}={getattr(self, name)!r}; choose one of {choices}"
            for name, choices in CHOICES.items()
            if getattr(self, name) not in choices
        ]
        if self.guided_alignment < 0:
            problems.append(
                f"guided_alignment must be 0 (off) or more, got {self.guided_alignment}"
            )
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
        if not self.lr_peak >= 0:
            problems.append(f"lr_peak must be 0 (the paper's peak) or more, got {self.lr_peak}")
        problems += self._resegmenting_problems()
        if problems:
            raise ValueError("Invalid TrainConfig: " + "; ".join(problems))

    def _resegmenting_problems(self) -> list[str]:
        """What is wrong with the settings that change the training pairs each epoch
        (case_augment, subword_sampling)."""
        problems = []
        if not 0 <= self.case_augment <= 1:
            problems.append(
                f"case_augment must be a fraction of the pairs in [0, 1] (0.2 = a fifth cased), "
                f"got {self.case_augment}"
            )
        if not 0 <= self.subword_sampling < 1:
            problems.append(
                f"subword_sampling must be in [0, 1) (0.1 = BPE-dropout's; 0 = off), got "
                f"{self.subword_sampling}"
            )
        for name in ("case_augment", "subword_sampling"):
            if getattr(self, name) and self.guided_alignment:
                problems.append(
                    f"{name} cannot be combined with guided_alignment: the alignments are of "
                    "the pairs' prepared pieces; set one of them to 0"
                )
        if self.subword_sampling and self.case_augment:
            problems.append(
                "subword_sampling cannot be combined with case_augment: both re-encode the "
                "training pairs each epoch, and one run does only one; set one of them to 0"
            )
        return problems


# The fields that take one of a few values, and those values.
CHOICES: dict[str, tuple[str, ...]] = {
    "precision": PRECISIONS,
    "case_augment_sides": SIDES,
    "case_augment_mode": CASE_MODES,
    "subword_sampling_sides": SIDES,
    "lr_schedule": LR_SCHEDULES,
    "freeze": FREEZES,
}

# Named training recipes. `paper`: section 5 as written, for 100k steps on GPUs. `short`: a run
# of minutes to an hour on a CPU - bf16, a short warmup and a gentler peak than 4,000 warmup
# steps give, frequent small validations, checkpoints every 100 steps, the last 5 averaged.
SHORT = TrainConfig(
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
)
# `finetune` (`train --init MODEL`): the weights are trained already, so the rate neither
# climbs back to the paper's peak (7e-4 for base) nor restarts its decay. A 100-step warmup,
# while Adam's fresh moment estimates settle (their first steps are nearly sign steps of the
# full rate), to a constant 1e-4: a third of the 3e-4 that Marian trains the OPUS-MT models
# with, so that the new data moves the weights without undoing them (continued training:
# Luong & Manning 2015, Freitag & Al-Onaizan 2016). Constant, as a fine-tuning run is stopped
# by the clock or by validation, and a decay would tie the rate to a length chosen beforehand.
# The rest is `short`'s bookkeeping.
FINETUNE = SHORT.replace(warmup=100, lr_scale=1.0, lr_schedule="constant", lr_peak=1e-4)
RECIPES: dict[str, TrainConfig] = {"paper": TrainConfig(), "short": SHORT, "finetune": FINETUNE}


# No recipe is switched by the corpus's size: at a recipe's own work (issue 56's learning curve
# at equal tokens, benchmarks/README.md) 1,024-token batches and a 2,000-piece vocabulary lost 4.9
# and 7.7 test BLEU on 2,000 and 5,000 Bible verses and gained 1.0 and 2.1 on 5,000 and 15,000
# software messages; they won only in minutes on a CPU too slow for 4,096-token batches to leave
# their warmup.


def recipe(name: str) -> TrainConfig:
    """A named training recipe."""
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return RECIPES[name]
