"""What a run does when it closes, on the main process: the paper's averaged model, and the
length setting of its best and averaged models chosen on validation (aiayn.tune)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable

from aiayn import layout
from aiayn.config import TrainConfig
from aiayn.evaluate.tune import run_models, tune_model_dirs
from aiayn.evaluate.tuned import TunedSearch
from aiayn.model import Transformer
from aiayn.train import checkpoint as ckpt
from aiayn.train.distributed import Distributed
from aiayn.train.metrics import MetricsLog
from aiayn.train.run_dir import RunDir
from aiayn.train.validate import validate


def average_at_close(
    run: RunDir,
    cfg: TrainConfig,
    state: ckpt.TrainState,
    metrics: MetricsLog,
    autocast: Callable[[], contextlib.AbstractContextManager],
    device,
) -> float | None:
    """The mean of the last `average_last` checkpoints, written to RUN/checkpoints/averaged and
    validated; it becomes the run's best (in `state`) if it scores at least as well. Returns its
    validation BLEU (None when off or too few checkpoints)."""
    found = layout.list_checkpoints(run.root)[-cfg.average_last :]
    if cfg.average_last < 2 or len(found) < 2:
        return None
    out = ckpt.average_checkpoints([c.path for c in found], layout.averaged_dir(run.root))
    model = Transformer.load(out, device=device)
    result = validate(model, run.data, cfg, autocast, run.tokenizer)
    steps = [c.step for c in found]
    metrics.write("averaged", state.step, checkpoints=steps, **result.as_dict())
    print(f"averaged steps {steps}: {result}", file=sys.stderr)
    if state.best_bleu is None or result.bleu >= state.best_bleu:
        state.best_bleu, state.best_step = result.bleu, state.step
        info = {"step": state.step, "averaged": steps, "valid": result.as_dict()}
        ckpt.write_checkpoint(layout.best_dir(run.root), model, run.tokenizer, info)
    return result.bleu


def tune_at_close(
    run: RunDir, cfg: TrainConfig, step: int, metrics: MetricsLog, dist: Distributed
) -> TunedSearch | None:
    """The length setting of the run's best and averaged models, stored beside their weights;
    the best's, or None when off."""
    models = run_models(run.root)
    if not cfg.tune_search or not models:
        return None
    per_direction = cfg.valid_direction_sentences  # as validation samples a multilingual split
    chosen = tune_model_dirs(models, run.data, dist.device, per_direction=per_direction)
    for model, tuned in zip(models, chosen, strict=True):
        metrics.write("tuned", step, model=model.name, **tuned.as_record())
        print(f"search for {model.name}: {tuned.summary()}", file=sys.stderr)
    return chosen[0]
