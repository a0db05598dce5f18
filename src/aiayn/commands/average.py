"""`aiayn average`: the last checkpoints of a run averaged (the paper's final model), with the
run's length setting carried over."""

from __future__ import annotations

import argparse
from pathlib import Path


def add(commands) -> None:
    a = commands.add_parser(
        "average", help="average the last checkpoints of a run (the paper's final model)"
    )
    a.add_argument("run_dir", type=Path, metavar="RUN")
    a.add_argument("--last", type=int, default=5, help="how many (paper: 5 base, 20 big)")
    a.add_argument("--out", type=Path, required=True, help="model directory to write")
    a.set_defaults(run=run_average)


def run_average(args: argparse.Namespace) -> int:
    from aiayn import layout
    from aiayn.train import checkpoint as ckpt

    if args.last < 1:
        raise ValueError(f"--last {args.last}: give how many checkpoints to average (1 or more)")
    found = layout.list_checkpoints(args.run_dir)
    if not found:
        raise FileNotFoundError(f"{args.run_dir}: no step checkpoints to average")
    chosen = found[-args.last :]
    ckpt.average_checkpoints([c.path for c in chosen], args.out)
    steps = ", ".join(str(c.step) for c in chosen)
    print(f"averaged {len(chosen)} checkpoints (steps {steps}) into {args.out}")
    carry_run_search(args.run_dir, args.out)
    return 0


def carry_run_search(run: Path, out: Path) -> None:
    """The run's length setting (chosen for its best model when it closed) carried to a new
    average of its checkpoints, and said so; `aiayn tune` chooses one for the average itself."""
    from aiayn import layout
    from aiayn.evaluate.tuned import carry_tuned

    for source in (layout.best_dir(run), layout.averaged_dir(run)):
        if carry_tuned(source, out, note=f"the run's model in {source}"):
            print(
                f"length setting: carried from {source / layout.SEARCH_FILE}; `aiayn tune {out} "
                "--data DATA` chooses one for this average"
            )
            return
    print(f"length setting: the paper's ({run} has none stored; `aiayn tune {out}` chooses one)")
