"""A text run directory: what it was trained from (an opened data directory) and with (its
configuration). The names of its files are `aiayn.layout`'s."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from aiayn import layout
from aiayn.config import ModelConfig, TrainConfig
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import BOS_ID, EOS_ID, PAD_ID
from aiayn.files import make_dir
from aiayn.layout import DataFiles
from aiayn.train.checkpoint import with_added_settings
from aiayn.train.finetune import StartedFrom


@dataclass(frozen=True)
class RunDir:
    root: Path  # RUN/
    data: DataDir  # the prepared data directory, opened once
    init: StartedFrom | None = None  # the model its weights began as (`--init`); None: random

    @property
    def tokenizer(self) -> Path:
        return self.root / layout.TOKENIZER_FILE


def create_run(
    root: Path,
    data: DataDir | Path,
    model: ModelConfig,
    train: TrainConfig,
    write: bool = True,
    init: StartedFrom | None = None,
) -> RunDir:
    """A new run directory with its configuration and a copy of the tokenizer (written by the
    main process only: `write=False` elsewhere). data: opened, or its path (opened here);
    init: the model its weights begin as (None: random), recorded in run.json."""
    root = Path(root)
    layout.check_new_run(root)
    data = DataDir.open(data)
    if model.vocab_size != data.meta.vocab_size:
        raise ValueError(
            f"the model's vocab_size {model.vocab_size} differs from the data's "
            f"{data.meta.vocab_size} ({data.root})"
        )
    check_special_ids(model, data.tokenizer)
    run = RunDir(root, data, init)
    if not write:
        return run
    make_dir(root)
    shutil.copyfile(data.tokenizer, run.tokenizer)
    config = {
        "data": str(data.root.resolve()),
        "data_meta": data.meta.__dict__,  # to know the same data again where it was moved
        "model": model.to_dict(),
        "train": train.__dict__,
    }
    if init is not None:
        config["init"] = init.to_json()
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


def open_run(root: Path, data: Path | None = None) -> tuple[RunDir, ModelConfig, TrainConfig]:
    """An existing run, to resume: its data (opened), model and training configuration.

    data: where the run's data directory is now, if it moved (None: where run.json says). It
    must hold the same data: the same meta.json as when the run began, and the same spm.model
    as the run's copy.
    """
    config = layout.read_run_config(root, ["data", "model", "train"])
    path = Path(root) / layout.RUN_CONFIG
    if not isinstance(config["data"], str):
        raise ValueError(f"{path}: data is {config['data']!r}, not a path; {layout.RUN_CONFIG_FIX}")
    model = ModelConfig.from_dict(config["model"], f"{path}, model")
    train = config["train"]
    if isinstance(train, dict):
        train = with_added_settings(train)
    train = TrainConfig.from_dict(train, f"{path}, train")
    init = StartedFrom.from_json(config["init"], path) if "init" in config else None
    if data is None or Path(data).resolve() == Path(config["data"]).resolve():
        if not DataFiles(Path(config["data"])).meta_file.is_file():
            raise FileNotFoundError(
                f"{path}: the run's data directory {config['data']} is gone (no "
                f"{layout.META_FILE} there); if it moved, add --data WHERE_IT_IS_NOW"
            )
        return RunDir(Path(root), DataDir.open(config["data"]), init), model, train
    given = DataDir.open(data)
    check_same_data(given, config, Path(root))
    return RunDir(Path(root), given, init), model, train


def check_same_data(given: DataDir, config: dict, root: Path) -> None:
    """A data directory named when resuming must be the run's own, moved: refused otherwise."""
    stored = Path(config["data"])
    meta = config.get("data_meta")  # runs begun before it was recorded: the old directory's
    if meta is None and DataFiles(stored).meta_file.is_file():
        meta = DataDir.open(stored).meta.__dict__
    same_vocabulary = (
        given.tokenizer.read_bytes() == (root / layout.TOKENIZER_FILE).read_bytes()
        if (root / layout.TOKENIZER_FILE).is_file()
        else True
    )
    if not same_vocabulary or (meta is not None and given.meta.__dict__ != meta):
        what = "spm.model" if not same_vocabulary else "meta.json"
        raise ValueError(
            f"--data {given.root}: not the data this run was trained on (its {what} differs "
            f"from the run's, begun on {stored}); give the run's data directory where it is "
            "now, or start a new run with another --out"
        )


def check_same_run(
    run: RunDir, model: ModelConfig, train: TrainConfig, wanted: tuple[ModelConfig, TrainConfig]
) -> None:
    """Under a torchrun restart, the run directory must hold the run the command starts (the
    same data, checked by `open_run`; the same model and training settings), to be resumed
    without --resume: refused otherwise, naming what differs."""
    differs = [
        f"{name} {getattr(stored, name)!r} there, {getattr(asked, name)!r} asked"
        for stored, asked in zip((model, train), wanted, strict=True)
        for name in stored.__dataclass_fields__
        if getattr(stored, name) != getattr(asked, name)
    ]
    if differs:
        raise ValueError(
            f"--out {run.root}: torchrun restarted this job, but the run there is not the one "
            f"this command starts ({'; '.join(differs[:3])}): it is not resumed. Give another "
            "--out, or add --resume to continue that run with its own settings"
        )


def save_train_config(run: RunDir, train: TrainConfig) -> None:
    """Record changed training settings (e.g. a longer max_steps when resuming) and where the
    data is now."""
    config = layout.read_run_config(run.root, [])
    config["train"] = train.__dict__
    config["data"] = str(run.data.root.resolve())  # where it is now, if it moved
    layout.write_run_config(run.root, config)
