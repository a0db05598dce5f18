"""`aiayn train --init MODEL`: a run that starts from the weights of a model directory (a run's
best checkpoint, a step or averaged checkpoint, an imported Marian model) with a new optimizer
and schedule. The architecture is MODEL's, and the data must be encoded with MODEL's ids. A
student may keep fewer of its layers (`--set n_decoder_layers=1`): the layers kept are spread
over MODEL's stack, its first and last among them ("shrink and fine-tune", Shleifer & Rush 2020).

The run records where it began (`StartedFrom`, in run.json); a resumed run goes on from its own
checkpoints and reads MODEL again only when it had saved none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from aiayn import layout
from aiayn.config import ModelConfig, TrainConfig
from aiayn.config.model import PRESETS, REGULARIZATION
from aiayn.config.overrides import apply_overrides
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer
from aiayn.model import Transformer
from aiayn.model.weights import weights_digest

# What a user runs when the data's vocabulary is not MODEL's.
PREPARE_WITH_IT = (
    "the model's weights are rows of its own ids: use the data directory it was trained on, or "
    "prepare this corpus with its vocabulary: `aiayn prepare --vocab {model} ...`"
)


@dataclass(frozen=True)
class StartedFrom:
    """The model directory a run's weights began as, and a digest of those weights."""

    model: Path  # the model directory itself (a run given as MODEL: its best checkpoint)
    weights_sha256: str  # of its model.safetensors when the run began

    def to_json(self) -> dict[str, str]:
        return {"model": str(self.model), "weights_sha256": self.weights_sha256}

    @classmethod
    def from_json(cls, values: Any, source: Path) -> StartedFrom:
        if not (
            isinstance(values, dict)
            and all(isinstance(values.get(k), str) for k in ("model", "weights_sha256"))
        ):
            raise ValueError(
                f"{source}: init is {str(values)[:60]!r}, not {{'model': PATH, "
                f"'weights_sha256': HEX}}; {layout.RUN_CONFIG_FIX}"
            )
        return cls(Path(values["model"]), values["weights_sha256"])


def open_init(path: Path) -> StartedFrom:
    """The model directory that `--init PATH` names, its files checked and its weights hashed."""
    try:
        directory = layout.model_dir(path).resolve()
    except FileNotFoundError as err:
        raise ValueError(f"--init {err}") from None
    for name in (layout.CONFIG_FILE, layout.WEIGHTS_FILE, layout.TOKENIZER_FILE):
        if not (directory / name).is_file():
            raise ValueError(
                f"--init {path}: {directory / name} is missing, so {directory} is not a whole "
                "model directory; give a run, a checkpoint, or one written by `aiayn average` "
                "or `aiayn import marian`"
            )
    return StartedFrom(directory, weights_digest(directory / layout.WEIGHTS_FILE))


def settings_from(
    init: StartedFrom, preset_name: str | None, train: TrainConfig, overrides: list[str]
) -> tuple[ModelConfig, TrainConfig]:
    """MODEL's model settings (dropout may change, depths may shrink) and the recipe with --set
    over it. A --preset or --set that contradicts MODEL's architecture is refused by name."""
    model = ModelConfig.load_json(init.model / layout.CONFIG_FILE)
    changed, train = apply_overrides(model, train, overrides)
    for name in architecture(model):
        if name in DEPTHS and getattr(changed, name) > getattr(model, name):
            raise ValueError(
                f"--set {name}={getattr(changed, name)}: the model in --init has {name}="
                f"{getattr(model, name)} ({init.model}); a run started from it may keep fewer "
                f"of its layers, not more: --set {name}=1 to {getattr(model, name)}"
            )
        if name not in DEPTHS and getattr(changed, name) != getattr(model, name):
            raise ValueError(
                f"--set {name}={getattr(changed, name)}: the model in --init has {name}="
                f"{getattr(model, name)} ({init.model}); the architecture comes from --init: "
                f"drop --set {name} (a fine-tuning run may change only {', '.join(REGULARIZATION)})"
            )
    if preset_name is not None:
        check_preset(preset_name, model, init.model)
    return changed, train


DEPTHS = ("n_encoder_layers", "n_decoder_layers")  # --init may shrink these: `kept_layers`


def kept_layers(have: int, keep: int) -> list[int]:
    """Which of a stack's `have` layers a shallower copy of `keep` layers starts from: spread
    evenly, the first and the last among them (the first alone for one), as Shleifer & Rush's
    "shrink and fine-tune" copies a teacher's layers into its student."""
    if keep == 1:
        return [0]
    return [round(i * (have - 1) / (keep - 1)) for i in range(keep)]


def shrunk(
    state: dict[str, torch.Tensor], have: ModelConfig, keep: ModelConfig
) -> dict[str, torch.Tensor]:
    """A state dict of a `have` model with only the layers `keep`'s depths keep, renumbered."""
    renumbered = {
        f"{name.split('_')[1]}_layers": kept_layers(getattr(have, name), getattr(keep, name))
        for name in DEPTHS
    }
    out = {}
    for name, tensor in state.items():
        stack, *rest = name.split(".", 2)
        if stack not in renumbered:
            out[name] = tensor
        elif int(rest[0]) in renumbered[stack]:
            out[f"{stack}.{renumbered[stack].index(int(rest[0]))}.{rest[1]}"] = tensor
    return out


def kept_note(init: StartedFrom, cfg: ModelConfig) -> str | None:
    """The run's first line where it keeps fewer of MODEL's layers than MODEL has: which."""
    model = ModelConfig.load_json(init.model / layout.CONFIG_FILE)
    kept = [
        f"{name.split('_')[1]} layers {kept_layers(getattr(model, name), getattr(cfg, name))} "
        f"of {getattr(model, name)}"
        for name in DEPTHS
        if getattr(cfg, name) != getattr(model, name)
    ]
    return f"init: {init.model}, {' and '.join(kept)} kept" if kept else None


def architecture(model: ModelConfig) -> list[str]:
    """The fields that say what the weights compute: all but the regularization's."""
    return [f.name for f in dataclasses.fields(model) if f.name not in REGULARIZATION]


def check_preset(name: str, model: ModelConfig, where: Path) -> None:
    """A --preset given with --init must describe MODEL (its vocabulary and special ids are
    the data's, never a preset's)."""
    chosen = PRESETS[name]
    ids = ("vocab_size", "pad_id", "bos_id", "eos_id")
    for field in (f for f in architecture(model) if f not in ids):
        if getattr(chosen, field) != getattr(model, field):
            raise ValueError(
                f"--preset {name}: its {field} is {getattr(chosen, field)}, the model in --init "
                f"has {field}={getattr(model, field)} ({where}); the architecture comes from "
                "--init: drop --preset"
            )


def check_vocabulary(init: StartedFrom, data: DataDir) -> None:
    """The data's pieces must be MODEL's, under the same ids: the weights' rows are ids."""
    mine, theirs = init.model / layout.TOKENIZER_FILE, data.tokenizer
    if mine.read_bytes() == theirs.read_bytes():
        return
    model_pieces, data_pieces = (pieces(Tokenizer(path)) for path in (mine, theirs))
    if model_pieces == data_pieces:
        return  # the same table of pieces, written by another program (an import)
    if len(model_pieces) != len(data_pieces):
        what = f"it has {len(data_pieces):,} pieces, the model {len(model_pieces):,}"
    else:
        pairs = zip(model_pieces, data_pieces, strict=True)
        i = next(i for i, (a, b) in enumerate(pairs) if a != b)
        what = f"id {i} is {data_pieces[i]!r} there and {model_pieces[i]!r} in the model"
    raise ValueError(
        f"--data {data.root}: its vocabulary ({theirs}) is not the model's ({mine}): {what}; "
        + PREPARE_WITH_IT.format(model=init.model)
    )


def pieces(tokenizer: Tokenizer) -> list[str]:
    return tokenizer.pieces(range(tokenizer.vocab_size))


def load_into(model: Transformer, init: StartedFrom) -> None:
    """MODEL's weights (the layers the run keeps) into the run's new model, once they are
    checked to be the ones the run recorded (a MODEL changed since would start another run than
    the one begun)."""
    found = weights_digest(init.model / layout.WEIGHTS_FILE)
    if found != init.weights_sha256:
        raise ValueError(
            f"{init.model / layout.WEIGHTS_FILE}: changed since this run began from it (sha256 "
            f"{found[:12]}..., run.json says {init.weights_sha256[:12]}...) and the run saved no "
            "checkpoint of its own; start a new run with --init"
        )
    saved = Transformer.load(init.model, device=next(model.parameters()).device)
    with torch.no_grad():
        model.load_state_dict(shrunk(saved.state_dict(), saved.cfg, model.cfg))


def check_same_start(init: StartedFrom | None, given: Path, run: Path) -> None:
    """`--init` with a resumed run must name the model the run began from: a resumed run goes
    on from its own checkpoints, never from another model."""
    try:
        directory: Path | None = layout.model_dir(given).resolve()
    except FileNotFoundError:
        directory = None
    if init is None or init.model != directory:
        began = "random weights" if init is None else str(init.model)
        raise ValueError(
            f"--init {given}: the run in {run} began from {began} ({layout.RUN_CONFIG}) and "
            "goes on from its own checkpoints; drop --init to resume it, or give another --out "
            "for a new run"
        )
