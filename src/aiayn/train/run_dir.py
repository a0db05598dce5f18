"""A run directory: what it was trained from and with, and its files."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from aiayn import layout
from aiayn.config import ModelConfig, TrainConfig, check_keys
from aiayn.data.data_dir import DataDir, DataMeta
from aiayn.data.vocab import BOS_ID, EOS_ID, PAD_ID
from aiayn.files import atomic_write, read_json, require_keys

# run.json is small: what to do when it is damaged
RUN_CONFIG_FIX = "repair it by hand (see another run's run.json), or start a new run with --data"


@dataclass(frozen=True)
class RunFiles:
    root: Path  # RUN/
    data: Path  # the prepared data directory

    @property
    def tokenizer(self) -> Path:
        return self.root / layout.TOKENIZER_FILE


def create_run(
    root: Path, data: Path, model: ModelConfig, train: TrainConfig, write: bool = True
) -> RunFiles:
    """A new run directory with its configuration and a copy of the tokenizer (written by the
    main process only: `write=False` elsewhere)."""
    root = Path(root)
    if layout.list_checkpoints(root):
        raise FileExistsError(
            f"{root} already holds checkpoints; add --resume to continue that run, or choose "
            "another --out"
        )
    meta = DataMeta.load(data)
    if model.vocab_size != meta.vocab_size:
        raise ValueError(
            f"the model's vocab_size {model.vocab_size} differs from the data's "
            f"{meta.vocab_size} ({data})"
        )
    check_special_ids(model, DataDir(Path(data)).tokenizer)
    if not write:
        return RunFiles(root, Path(data))
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DataDir(Path(data)).tokenizer, root / layout.TOKENIZER_FILE)
    config = {"data": str(Path(data).resolve()), "model": model.to_dict(), "train": train.__dict__}
    text = json.dumps(config, indent=2) + "\n"
    atomic_write(root / layout.RUN_CONFIG, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return RunFiles(root, Path(data))


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


def open_run(root: Path) -> tuple[RunFiles, ModelConfig, TrainConfig]:
    """An existing run, to resume: its data, model and training configuration."""
    path = Path(root) / layout.RUN_CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; {root} is not a run directory to resume")
    config = read_json(path, RUN_CONFIG_FIX)
    require_keys(config, ["data", "model", "train"], path, RUN_CONFIG_FIX)
    check_keys(TrainConfig, config["train"], str(path))
    config["train"].setdefault("pad_to", 1)  # a run from before pad_to: keep its batches
    return (
        RunFiles(Path(root), Path(config["data"])),
        ModelConfig.from_dict(config["model"], str(path)),
        TrainConfig(**config["train"]),
    )


def save_train_config(run: RunFiles, train: TrainConfig) -> None:
    """Record changed training settings (e.g. a longer max_steps when resuming)."""
    path = run.root / layout.RUN_CONFIG
    config = read_json(path, RUN_CONFIG_FIX)
    config["train"] = train.__dict__
    text = json.dumps(config, indent=2) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
