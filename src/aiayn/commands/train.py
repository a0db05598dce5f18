"""`aiayn train`: the paper's recipe on a prepared data directory; under torchrun, DDP."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiayn.config import PRECISIONS, PRESETS, RECIPES
from aiayn.train.metrics import forget_metrics_after

DEFAULT_PRESET = "small"

if TYPE_CHECKING:
    import torch

    from aiayn.config import ModelConfig, TrainConfig
    from aiayn.data.data_dir import DataDir
    from aiayn.layout import Checkpoint
    from aiayn.train.distributed import Distributed
    from aiayn.train.finetune import StartedFrom
    from aiayn.train.run_dir import RunDir


def add(commands) -> None:
    p = commands.add_parser(
        "train",
        help="train a model on a prepared data directory",
        description="Train with the paper's recipe. Several processes: "
        "torchrun --nproc-per-node N -m aiayn train ...",
    )
    p.add_argument("--data", type=Path, help="directory made by `aiayn prepare`")
    p.add_argument("--out", type=Path, required=True, help="run directory (checkpoints, logs)")
    p.add_argument(
        "--init",
        type=Path,
        metavar="MODEL",
        help="fine-tune: start from the weights of MODEL (a run: its best checkpoint; a "
        "checkpoint; an averaged or imported model), with its architecture, a new optimizer "
        "and schedule; the data must be encoded with MODEL's vocabulary",
    )
    p.add_argument(
        "--preset",
        choices=list(PRESETS),
        help=f"the model's size (default: {DEFAULT_PRESET}; with --init, MODEL's)",
    )
    p.add_argument(
        "--recipe",
        choices=list(RECIPES),
        default="paper",
        help="training settings: paper (section 5, for long GPU runs), short (minutes to an "
        "hour on a CPU: bf16 (fp32 on a CPU without AVX-512), warmup 500, lr_scale 0.5, "
        "1,000 steps, the last 5 checkpoints averaged) or finetune (for --init: short's, with a "
        "100-step warmup to a constant rate of 1e-4); --set and the flags below change any of them",
    )
    p.add_argument(
        "--set",
        nargs="+",
        action="extend",  # repeated --set groups add up
        default=[],
        metavar="KEY=VALUE",
        help="change any model or training setting, e.g. --set dropout=0.2 warmup=800",
    )
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its latest checkpoint"
    )
    p.add_argument("--max-steps", type=int)
    p.add_argument("--max-epochs", type=int)
    p.add_argument("--max-minutes", type=float, help="wall-clock budget for this invocation")
    p.add_argument(
        "--max-tokens",
        type=int,
        help="token budget of one batch, per process (default: the recipe's)",
    )
    p.add_argument("--update-freq", type=int, help="batches accumulated per update")
    p.add_argument("--precision", choices=PRECISIONS)
    p.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda if available)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(run=run_train)


def flag_overrides(args: argparse.Namespace) -> list[str]:
    """The explicit flags, as --set items."""
    names = ["max_steps", "max_epochs", "max_minutes", "max_tokens", "update_freq", "precision"]
    return [f"{n}={getattr(args, n)}" for n in names if getattr(args, n) is not None]


def run_train(args: argparse.Namespace) -> int:
    from aiayn.train.host_memory import restart_with_tcmalloc

    if getattr(args, "own_process", False):
        restart_with_tcmalloc(sys.orig_argv)  # tcmalloc, where installed (train/host_memory.py)
    from aiayn.train.distributed import Distributed
    from aiayn.train.trainer import TrainingError

    dist = Distributed.from_env(args.device)
    try:
        summary = train_run(args, dist)
    except TrainingError as err:
        print(f"aiayn train: stopped: {err}", file=sys.stderr)
        return 3
    finally:
        dist.close()
    if dist.is_main:
        print(json.dumps(summary, indent=2))
    return 0


def train_run(args: argparse.Namespace, dist: Distributed) -> dict[str, Any]:
    """Open the run in --out (resumed, or new), bring its trainer to its latest checkpoint, and
    train; the summary."""
    from aiayn import layout
    from aiayn.train import checkpoint as ckpt
    from aiayn.train.distributed import restarts
    from aiayn.train.finetune import load_into
    from aiayn.train.run_dir import save_train_config
    from aiayn.train.trainer import Trainer

    # Restarted by torchrun (--max-restarts): the same command goes on from its checkpoints.
    elastic = not args.resume and restarts() > 0 and (args.out / layout.RUN_CONFIG).is_file()
    resuming = (args.resume or elastic) and (args.out / layout.RUN_CONFIG).is_file()
    if args.resume and not resuming:
        no_run = f"--resume: {args.out} holds no run to resume (no run.json)"
        if args.data is None:
            raise ValueError(f"{no_run}; check --out, or add --data DIR to start a new run")
        if dist.is_main:
            print(f"{no_run}: starting a new run there", file=sys.stderr)
    run, model_cfg, train_cfg = open_run_for(args, dist, resuming, elastic)
    dist.barrier()
    trainer = Trainer(model_cfg, train_cfg, run, dist, progress=not args.no_progress)
    last = resume_point(run.root, dist.is_main) if resuming else None
    if last is None and run.init is not None:  # a resumed run: from its own checkpoints
        load_into(trainer.model, run.init)
    if last is not None:
        trainer.resume(last.path)
        if dist.is_main:
            ckpt.clean_up(run.root, train_cfg.keep_last)
            print(f"resumed from {last.path} (step {last.step})", file=sys.stderr)
    if resuming and dist.is_main:  # nothing logged twice: what came after is done again
        forget_metrics_after(run.root, last.step if last is not None else 0)
    if elastic and dist.is_main:
        print(f"torchrun restart {restarts()}: the run goes on by itself", file=sys.stderr)
    if resuming and dist.is_main:  # recorded once the checkpoint accepted the settings
        save_train_config(run, train_cfg)
    return trainer.train()


def open_run_for(
    args: argparse.Namespace, dist: Distributed, resuming: bool, elastic: bool
) -> tuple[RunDir, ModelConfig, TrainConfig]:
    """The run and its settings: the one in --out with --set's training settings over its own,
    or a new one from --data, the preset, the recipe and --set."""
    from aiayn.data.data_dir import DataDir
    from aiayn.train.finetune import check_vocabulary, open_init
    from aiayn.train.run_dir import create_run

    overrides = [*args.set, *flag_overrides(args)]
    if resuming:
        return reopened(args, dist, elastic, overrides)
    if args.data is None:
        raise ValueError("--data is required for a new run")
    data = DataDir.open(args.data)  # once: the run, the trainer and validation share it
    init = None if args.init is None else open_init(args.init)
    if init is not None:
        check_vocabulary(init, data)
    model_cfg, train_cfg, notes = asked_for(args, data, overrides, init, dist.device)
    for note in notes if dist.is_main else []:
        print(note, file=sys.stderr)
    return (
        create_run(args.out, data, model_cfg, train_cfg, write=dist.is_main, init=init),
        model_cfg,
        train_cfg,
    )


def reopened(
    args: argparse.Namespace, dist: Distributed, elastic: bool, overrides: list[str]
) -> tuple[RunDir, ModelConfig, TrainConfig]:
    """The run in --out with --set's training settings over its own; it keeps its model and
    what it freezes (its optimizer holds state for the others)."""
    from aiayn.config.overrides import apply_overrides
    from aiayn.train.finetune import check_same_start, open_init
    from aiayn.train.run_dir import check_same_run, open_run

    run, model_cfg, train_cfg = open_run(args.out, args.data)
    if args.data is not None and dist.is_main:
        print(f"data: {run.data.root}", file=sys.stderr)
    if args.init is not None:
        check_same_start(run.init, args.init, run.root)
    if elastic:  # the run there must be the one this command would start
        init = None if args.init is None else open_init(args.init)
        asked = asked_for(args, run.data, overrides, init, dist.device)
        check_same_run(run, model_cfg, train_cfg, asked[:2])
    changed, resumed_cfg = apply_overrides(model_cfg, train_cfg, overrides)
    if changed != model_cfg:
        raise ValueError("a resumed run keeps its model; --set only training settings")
    if resumed_cfg.freeze != train_cfg.freeze:
        raise ValueError(
            f"--set freeze={resumed_cfg.freeze}: this run freezes {train_cfg.freeze!r}, and a "
            "resumed run keeps what it freezes (its optimizer holds state only for the rest); "
            f"start a new run with --init {args.out} to change it"
        )
    return run, model_cfg, resumed_cfg


def asked_for(
    args: argparse.Namespace,
    data: DataDir,
    overrides: list[str],
    init: StartedFrom | None,
    device: torch.device,
) -> tuple[ModelConfig, TrainConfig, list[str]]:
    """The (model, training) settings the command line gives for a new run on `data` on
    `device`: the preset's model, or with --init MODEL's; and the lines to print where the
    layers kept of MODEL's or the device (precision) changed what was asked."""
    from aiayn.config import preset, recipe
    from aiayn.config.overrides import apply_overrides
    from aiayn.train.finetune import kept_note, settings_from
    from aiayn.train.precision import precision_for

    if init is not None:
        model, train = settings_from(init, args.preset, recipe(args.recipe), overrides)
    else:
        model = preset(args.preset or DEFAULT_PRESET, vocab_size=data.meta.vocab_size)
        model, train = apply_overrides(model, recipe(args.recipe), overrides)
    named = {item.partition("=")[0] for item in overrides}  # as --set reads them
    first_note = None if init is None else kept_note(init, model)  # where it keeps fewer layers
    train, precision_note = precision_for(train, device, "precision" in named)
    return model, train, [n for n in (first_note, precision_note) if n is not None]


def resume_point(run: Path, is_main: bool) -> Checkpoint | None:
    """The newest intact checkpoint. Newer damaged ones are named (with why) and set aside
    under another name, kept for a look but no longer counted among the last `keep_last`."""
    from aiayn.train.recovery import newest_intact, set_aside

    found, skipped = newest_intact(run)
    for s in skipped if is_main else []:
        kept = set_aside(s.checkpoint)
        print(
            f"skipped the damaged checkpoint {s.checkpoint.path}: {s.reason} (moved to "
            f"{kept.name})",
            file=sys.stderr,
        )
    if found is None and skipped:
        raise ValueError(
            f"{run}: every checkpoint is damaged (the oldest: {skipped[-1].reason}); "
            "start a new run in another --out"
        )
    return found
