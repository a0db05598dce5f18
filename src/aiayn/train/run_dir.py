"""A text run directory: what it was trained from (an opened data directory) and with (its
configuration). The names of its files are `aiayn.layout`'s."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from aiayn import layout
from aiayn.config import ModelConfig, TrainConfig, check_keys
from aiayn.data.data_dir import DataDir
from aiayn.data.vocab import BOS_ID, EOS_ID, PAD_ID
from aiayn.train.checkpoint import with_added_settings


@dataclass(frozen=True)
class RunDir:
    root: Path  # RUN/
    data: DataDir  # the prepared data directory, opened once

    @property
    def tokenizer(self) -> Path:
        return self.root / layout.TOKENIZER_FILE


def create_run(
    root: Path, data: DataDir | Path, model: ModelConfig, train: TrainConfig, write: bool = True
) -> RunDir:
    """A new run directory with its configuration and a copy of the tokenizer (written by the
    main process only: `write=False` elsewhere). data: opened, or its path (opened here)."""
    root = Path(root)
    layout.check_new_run(root)
    data = DataDir.open(data)
    if model.vocab_size != data.meta.vocab_size:
        raise ValueError(
            f"the model's vocab_size {model.vocab_size} differs from the data's "
            f"{data.meta.vocab_size} ({data.root})"
        )
    check_special_ids(model, data.tokenizer)
    run = RunDir(root, data)
    if not write:
        return run
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data.tokenizer, run.tokenizer)
    config = {"data": str(data.root.resolve()), "model": model.to_dict(), "train": train.__dict__}
    layout.write_run_config(root, config)
    return run


def check_special_ids(model: ModelConfig, tokenizer: Path) -> None:
    """The data's vocabulary decides pad, bos and eos: batches are padded with its pad id, so a
    model told another would attend to padding and learn from it, silently."""
    data = {"pad_id": PAD_ID, "bos_id": BOS_ID, "eos_id": EOS_ID}  # what spm.model holds
    for name, value in data.items():
        if getattr(model, name) != value:
            raise ValueError(
                f"the model's {name} {getattr(model, name)} differs from the data's {value} "
                f"({tokenizer}): special ids come from the data's vocabulary; drop --set {name}"
            )


def open_run(root: Path) -> tuple[RunDir, ModelConfig, TrainConfig]:
    """An existing run, to resume: its data (opened), model and training configuration."""
    config = layout.read_run_config(root, ["data", "model", "train"])
    path = Path(root) / layout.RUN_CONFIG
    check_keys(TrainConfig, config["train"], str(path))
    model = ModelConfig.from_dict(config["model"], str(path))
    train = TrainConfig(**with_added_settings(config["train"]))
    return RunDir(Path(root), DataDir.open(config["data"])), model, train


def save_train_config(run: RunDir, train: TrainConfig) -> None:
    """Record changed training settings (e.g. a longer max_steps when resuming)."""
    config = layout.read_run_config(run.root, [])
    config["train"] = train.__dict__
    layout.write_run_config(run.root, config)
