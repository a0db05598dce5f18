"""Checkpoints: self-contained directories, written atomically, kept last-K plus the best.

A checkpoint `RUN/checkpoints/step_00001000/` holds the weights and config (`Transformer.save`),
the tokenizer (`spm.model`), the optimizer state (`optimizer.pt`, tensors only: read back with
`weights_only=True`) and `state.json` (step, data position, RNG states, metrics). It is written
into a temporary directory and renamed into place, so a crash leaves the previous checkpoint
whole and the new one either complete or absent.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from aiayn.config import TrainConfig
from aiayn.config.checks import check_keys, check_types
from aiayn.data.batches.sampler import SamplerState, TokenBatchSampler
from aiayn.files import atomic_directory, read_json
from aiayn.layout import (
    CHECKPOINTS,
    CONFIG_FILE,
    OPTIMIZER_FILE,
    STATE_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    latest,
    list_checkpoints,
)
from aiayn.model import Transformer

# What to do about a damaged checkpoint file.
DAMAGED_FIX = (
    "the checkpoint {checkpoint} is damaged: delete it, and --resume goes on from the one before"
)


def write_checkpoint(
    target: Path,
    model: Transformer,
    tokenizer_file: Path,
    state: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
) -> Path:
    """Write everything into a temporary directory beside `target`, then rename it into place."""
    target = Path(target)
    try:
        with atomic_directory(target) as tmp:
            _write_files(tmp, model, tokenizer_file, state, optimizer)
    except (OSError, RuntimeError) as err:
        _raise_if_disk_full(err, target, model, tokenizer_file, optimizer is not None)
        raise
    return target


def _write_files(directory: Path, model, tokenizer_file, state, optimizer) -> None:
    model.save(directory)
    shutil.copyfile(tokenizer_file, directory / TOKENIZER_FILE)
    write_training_files(directory, state, optimizer)


def write_training_files(
    directory: Path, state: dict[str, Any], optimizer: torch.optim.Optimizer | None = None
) -> None:
    """`state.json` (and `optimizer.pt`) beside a saved model, then every file of the directory
    flushed to disk: the last step before the directory is renamed into place."""
    if optimizer is not None:
        torch.save(optimizer.state_dict(), directory / OPTIMIZER_FILE)
    (directory / STATE_FILE).write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
    for path in directory.iterdir():
        with open(path, "rb") as f:
            os.fsync(f.fileno())


def _raise_if_disk_full(
    err: BaseException, target: Path, model: Transformer, tokenizer_file: Path, with_optimizer: bool
) -> None:
    """Turn a failed write on a full disk (torch.save says only "iostream error") into an error
    that says where, how much is needed, and which checkpoint is the last whole one."""
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    needed = params * (3 if with_optimizer else 1) + Path(tokenizer_file).stat().st_size
    free = shutil.disk_usage(target.parent).free
    if getattr(err, "errno", None) != errno.ENOSPC and free >= needed:
        return
    last = latest(target.parent.parent)
    raise CheckpointError(
        errno.ENOSPC,
        f"the disk holding {target.parent} is full ({free / 2**20:,.1f} MiB free): the "
        f"checkpoint {target.name} needs about {needed / 2**20:,.1f} MiB and was not written. "
        f"The last whole checkpoint is {last.path if last else '(none yet)'}. Free some space "
        "(or lower keep_last), then continue with --resume",
    ) from err


class CheckpointError(OSError):
    """A checkpoint could not be written or read; the message says why and what to do."""

    def __str__(self) -> str:
        return str(self.strerror)


def read_state(checkpoint: Path) -> dict[str, Any]:
    path = Path(checkpoint) / STATE_FILE
    return read_json(path, DAMAGED_FIX.format(checkpoint=checkpoint))


def read_resume_state(checkpoint: Path) -> dict[str, Any]:
    """A checkpoint's `state.json`, checked to hold what `restore_state` reads."""
    saved = read_state(checkpoint)
    try:
        check_state(saved)
    except ValueError as err:
        fix = DAMAGED_FIX.format(checkpoint=checkpoint)
        raise ValueError(f"{Path(checkpoint) / STATE_FILE}: {err}; {fix}") from None
    return saved


def check_state(saved: Any) -> None:
    """What `capture_state` writes, each part of the right kind, else a ValueError saying
    which is not (found by the fuzzed readers: a state.json that was valid JSON but lacked its
    sampler, or held a string for a counter, escaped as a KeyError or TypeError)."""
    if not isinstance(saved, dict):
        raise ValueError(f"expected a JSON object, found {type(saved).__name__}")
    missing = [k for k in ("train_state", "sampler", "rng") if k not in saved]
    if missing:
        raise ValueError(f"missing key(s) {missing}")
    for name, kind in (("train_state", TrainState), ("sampler", SamplerState)):
        check_keys(kind, saved[name], name)
        check_types(kind, saved[name], name)
    counters = ("epoch", "position", "seed")
    if not set(counters) <= set(saved["sampler"]):
        raise ValueError("sampler lacks epoch, position or seed")
    if min(saved["sampler"][k] for k in counters) < 0:
        raise ValueError(f"sampler {saved['sampler']} counts below 0")
    temperature = saved["sampler"].get("temperature")  # multilingual data only
    if temperature is not None and not (_is_number(temperature) and 0 < temperature < math.inf):
        raise ValueError(f"sampler temperature {temperature!r} is not a number above 0")
    for name in ("best_bleu", "best_step"):
        if not isinstance(saved["train_state"].get(name), int | float | None):
            raise ValueError(f"train_state.{name} is not a number")
    size = torch.get_rng_state().numel()
    rng = saved["rng"]
    if not isinstance(rng, list) or not all(
        isinstance(r, dict) and isinstance(r.get("cpu"), list) and len(r["cpu"]) == size
        for r in rng
    ):
        raise ValueError(f"rng is not a list of random states of {size} bytes per process")
    if not all(isinstance(b, int) and 0 <= b < 256 for r in rng for b in r["cpu"]):
        raise ValueError("rng holds values that are not bytes")
    if saved.get("scaler") is not None and not isinstance(saved["scaler"], dict):
        raise ValueError("scaler is neither null nor an object")
    for key in BATCHING_KEYS:
        if key in saved and (type(saved[key]) is not int or saved[key] < 1):
            raise ValueError(f"{key} is {saved[key]!r}, not a count")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass
class TrainState:
    """Everything besides weights and optimizer that a resumed run needs to go on exactly."""

    step: int = 0
    best_bleu: float | None = None
    best_step: int | None = None
    validations_without_improvement: int = 0
    bad_steps_in_a_row: int = 0
    tokens_seen: int = 0


def train_state_to_json(state: TrainState) -> dict[str, Any]:
    """The entry of `state.json` that holds a TrainState (the trainer adds the rest)."""
    return {"train_state": asdict(state)}


def train_state_from_json(saved: dict[str, Any]) -> TrainState:
    """The TrainState of a `state.json` as `read_state` returns it. A field added since the
    checkpoint was written (tokens_seen) takes its default."""
    return TrainState(**saved["train_state"])


# Settings added since the first runs, with the value a run written before them had: run.json's
# training settings and state.json's batching are read through `with_added_settings`.
ADDED_SETTINGS: dict[str, Any] = {"pad_to": 1}  # before pad_to, batches padded to no multiple

# What a data position depends on: a run resumes only with the same values.
BATCHING_KEYS = ("world_size", "update_freq", "max_tokens", "pad_to")


def with_added_settings(values: dict[str, Any]) -> dict[str, Any]:
    """`values` as written by an older version, with the settings added since at their old value."""
    return {**ADDED_SETTINGS, **values}


def batching(world_size: int, cfg: TrainConfig) -> dict[str, int]:
    """The values of BATCHING_KEYS for a run of `world_size` processes."""
    return {
        "world_size": world_size,
        "update_freq": cfg.update_freq,
        "max_tokens": cfg.max_tokens,
        "pad_to": cfg.pad_to,
    }


def batching_mismatch(checkpoint: Path, saved: dict[str, Any], now: dict[str, int]) -> str | None:
    """Why a checkpoint's data position would mean other batches now (None if it would not)."""
    before = tuple(with_added_settings(saved).get(k) for k in BATCHING_KEYS)
    after = tuple(now[k] for k in BATCHING_KEYS)
    if before == after:
        return None
    return (
        f"{checkpoint} was written with (processes, update_freq, max_tokens, pad_to) = "
        f"{before}; resume with the same (now {after}), so that the data position means "
        "the same batches"
    )


def rng_state(device: torch.device) -> dict[str, list[int]]:
    """This process's random streams (CPU, and the GPU's when training on one)."""
    rng = {"cpu": torch.get_rng_state().tolist()}
    if device.type == "cuda":
        rng["cuda"] = torch.cuda.get_rng_state(device).tolist()
    return rng


def capture_state(
    state: TrainState,
    sampler: TokenBatchSampler,
    scaler: torch.amp.GradScaler,
    rng: list[dict[str, list[int]]],
    batching: dict[str, int],
) -> dict[str, Any]:
    """The `state.json` of a step checkpoint: counters, data position, every process's random
    streams (`rng_state`, gathered), the fp16 loss scale, and what the data position depends on."""
    return {
        **train_state_to_json(state),
        "sampler": sampler.state_dict(),
        "rng": rng,
        "scaler": scaler.state_dict() if scaler.is_enabled() else None,
        **batching,
    }


def restore_state(
    saved: dict[str, Any],
    sampler: TokenBatchSampler,
    scaler: torch.amp.GradScaler,
    rank: int,
    world_size: int,
    device: torch.device,
) -> TrainState:
    """Apply a `capture_state` to the sampler, the scaler and this process's random streams
    (those of the same processes only: other processes start theirs afresh); returns the
    counters."""
    counters = train_state_from_json(saved)
    sampler.load_state_dict(saved["sampler"])
    if saved.get("scaler"):
        scaler.load_state_dict(saved["scaler"])
    rng = saved["rng"]
    if len(rng) == world_size:  # the same processes: continue their streams
        torch.set_rng_state(torch.tensor(rng[rank]["cpu"], dtype=torch.uint8, device="cpu"))
        if device.type == "cuda" and rng[rank].get("cuda") is not None:
            cuda_state = torch.tensor(rng[rank]["cuda"], dtype=torch.uint8, device="cpu")
            torch.cuda.set_rng_state(cuda_state, device)
    return counters


def read_optimizer(checkpoint: Path) -> dict[str, Any]:
    """The optimizer state: tensors and numbers only, so loaded with weights_only=True."""
    path = Path(checkpoint) / OPTIMIZER_FILE
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: missing; {DAMAGED_FIX.format(**locals())}") from None
    # Damaged bytes make torch's safe unpickler fail in many ways (found by the fuzzed readers:
    # IndexError, KeyError, UnicodeDecodeError, OSError besides these): each means "damaged".
    except Exception as err:
        reason = (str(err).splitlines() or [type(err).__name__])[0]  # EOFError: no text
        raise ValueError(
            f"{path}: not a readable optimizer state ({reason}); "
            + DAMAGED_FIX.format(checkpoint=checkpoint)
        ) from None


def clean_up(run: Path, keep_last: int) -> None:
    """Remove all but the last `keep_last` step checkpoints, and leftovers of crashed writes."""
    root = Path(run) / CHECKPOINTS
    for checkpoint in list_checkpoints(run)[: max(0, len(list_checkpoints(run)) - keep_last)]:
        shutil.rmtree(checkpoint.path, ignore_errors=True)
    if root.is_dir():
        for leftover in root.glob(".tmp-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        for old in root.glob(".old-*"):  # moved aside for a replacement that may not have come
            target = root / old.name.removeprefix(".old-").rsplit("-", 1)[0]
            if target.exists():
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(old, target)


def _load_weights(path: Path) -> dict[str, torch.Tensor]:
    """A checkpoint's weights; damaged ones are an error naming the file (found by the fuzzed
    readers: `aiayn average` let safetensors' own error escape as a traceback)."""
    try:
        return load_file(str(path))
    except (SafetensorError, OSError) as err:
        raise ValueError(
            f"{path}: not a readable safetensors file ({err}); "
            + DAMAGED_FIX.format(checkpoint=path.parent)
        ) from None


def average_checkpoints(paths: list[Path], out: Path) -> Path:
    """The paper's checkpoint averaging: the element-wise mean of the weights, saved as a model
    directory (config, weights, tokenizer) that translates like any checkpoint."""
    if not paths:
        raise ValueError("no checkpoints to average")
    out = Path(out)
    for path in paths:  # replacing `out` would delete what is being averaged
        if out.resolve() == Path(path).resolve() or out.resolve() in Path(path).resolve().parents:
            raise ValueError(
                f"--out {out}: is or contains the checkpoint {path} being averaged, and would "
                "replace it; write the average to a new directory, e.g. --out "
                f"{out.resolve().parent / (out.resolve().name + '-averaged')}"
            )
    total: dict[str, torch.Tensor] = {}
    for path in paths:
        weights = _load_weights(Path(path) / WEIGHTS_FILE)
        shapes = {k: v.shape for k, v in weights.items()}
        if total and shapes != {k: v.shape for k, v in total.items()}:
            raise ValueError(f"{path}: its weights do not match {paths[0]}'s; same run only")
        for name, tensor in weights.items():
            total[name] = total.get(name, 0) + tensor.double()
    with atomic_directory(out) as tmp:
        averaged = {k: (v / len(paths)).to(torch.float32).contiguous() for k, v in total.items()}
        save_file(averaged, str(tmp / WEIGHTS_FILE))
        shutil.copyfile(Path(paths[-1]) / CONFIG_FILE, tmp / CONFIG_FILE)
        shutil.copyfile(Path(paths[-1]) / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
    return out
