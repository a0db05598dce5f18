"""What the directories aiayn writes hold, named in one place.

Three kinds of directory, each written by one part of the pipeline and read by the others:

- a **model directory** (a checkpoint, an average, an import): `config.json` (the ModelConfig),
  `model.safetensors` (the weights) and `spm.model` (the tokenizer);
- a **run directory** (`aiayn train --out RUN`): `run.json`, `metrics.jsonl`, `spm.model`, and
  `checkpoints/` with `step_00001000/`... (model directories plus `state.json` and
  `optimizer.pt`), `best/` and `averaged/`;
- a **data directory** (`aiayn prepare --out DIR`): see `aiayn.data.data_dir.DataDir`.

Training writes run directories; decoding, evaluation and the commands only read them, through
the names and functions here. This module imports nothing from aiayn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# A model directory
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "spm.model"

# A run directory
RUN_CONFIG = "run.json"
METRICS_FILE = "metrics.jsonl"
CHECKPOINTS = "checkpoints"
BEST = "best"
AVERAGED = "averaged"  # the last checkpoints averaged at the end of a run (average_last)
STATE_FILE = "state.json"  # in a step checkpoint: step, data position, RNG states, metrics
OPTIMIZER_FILE = "optimizer.pt"  # in a step checkpoint: tensors only
_STEP_DIR = re.compile(r"^step_(\d{8})$")


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    step: int


def step_dir(run: Path, step: int) -> Path:
    return Path(run) / CHECKPOINTS / f"step_{step:08d}"


def list_checkpoints(run: Path) -> list[Checkpoint]:
    """Complete step checkpoints, oldest first (temporary directories are not listed)."""
    root = Path(run) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = [
        Checkpoint(p, int(m.group(1)))
        for p in root.iterdir()
        if (m := _STEP_DIR.match(p.name)) and (p / STATE_FILE).is_file()
    ]
    return sorted(found, key=lambda c: c.step)


def latest(run: Path) -> Checkpoint | None:
    found = list_checkpoints(run)
    return found[-1] if found else None


def model_dir(path: str | Path) -> Path:
    """A model directory from what a user names: a model directory itself, or a run directory
    (its best checkpoint, else its latest)."""
    path = Path(path)
    if (path / WEIGHTS_FILE).is_file():
        return path
    best = path / CHECKPOINTS / BEST
    if (best / WEIGHTS_FILE).is_file():
        return best
    last = latest(path)
    if last is not None:
        return last.path
    raise FileNotFoundError(
        f"{path}: no model here (no {WEIGHTS_FILE}, no checkpoints); give a run directory, a "
        "checkpoint directory or one written by `aiayn average`"
    )
