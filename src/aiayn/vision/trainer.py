"""Training a vision model: AdamW, warmup then cosine, fixed steps; checkpoints, exact resume,
metrics.jsonl, a progress bar. The run directory is the text trainer's (`aiayn.layout`)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from aiayn import layout
from aiayn.files import atomic_directory
from aiayn.train import checkpoint as ckpt
from aiayn.train.metrics import MetricsLog
from aiayn.vision.batches import DigitBatch, ImageBatch, training_batch
from aiayn.vision.build import build_vision_model, load_vision_model, save_vision_model
from aiayn.vision.config import VisionConfig, VisionTrainConfig
from aiayn.vision.evaluate import evaluate_images
from aiayn.vision.losses import HungarianLossWeights, hungarian_loss


def warmup_cosine_lr(step: int, cfg: VisionTrainConfig) -> float:
    """Linear warmup to `lr`, then a cosine down to 0 at `max_steps` (step counts from 1)."""
    if step <= cfg.warmup:
        return cfg.lr * step / max(cfg.warmup, 1)
    progress = (step - cfg.warmup) / max(cfg.max_steps - cfg.warmup, 1)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def task_loss(
    model: torch.nn.Module, batch: ImageBatch, task: str, cfg: VisionTrainConfig
) -> torch.Tensor:
    """Cross-entropy of the digit (classify) or of every pixel (segment); DETR's Hungarian loss."""
    out = model(batch.images)
    if isinstance(batch, DigitBatch):  # classify
        return F.cross_entropy(out, batch.labels)
    if task == "segment":
        return F.cross_entropy(out, batch.masks)
    weights = HungarianLossWeights(
        cfg.no_object_weight, cfg.class_weight, cfg.l1_weight, cfg.giou_weight
    )
    return hungarian_loss(
        out, [s.labels for s in batch.scenes], [s.boxes for s in batch.scenes], weights
    )


def write_run(root: Path, model: VisionConfig, train: VisionTrainConfig) -> None:
    """RUN/run.json: what the run trains, and how."""
    layout.write_run_config(root, {"model": model.to_dict(), "train": train.__dict__})


def read_run(root: Path) -> tuple[VisionConfig, VisionTrainConfig]:
    config = layout.read_run_config(root, ["model", "train"])
    path = str(Path(root) / layout.RUN_CONFIG)
    model = VisionConfig.from_dict(config["model"], path)
    return model, VisionTrainConfig.from_dict(config["train"], path)


class VisionTrainer:
    def __init__(
        self,
        model_cfg: VisionConfig,
        train_cfg: VisionTrainConfig,
        run: Path,
        progress: bool = True,
    ) -> None:
        self.model_cfg, self.train_cfg, self.run = model_cfg, train_cfg, Path(run)
        torch.manual_seed(train_cfg.seed)
        self.model = build_vision_model(model_cfg)
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=train_cfg.lr, weight_decay=train_cfg.weight_decay
        )
        self.step = 0
        self.progress = progress
        self.log = MetricsLog(self.run)

    def resume(self, checkpoint: Path) -> None:
        """Continue exactly: weights, optimizer moments, step and the random state of dropout."""
        model, _ = load_vision_model(checkpoint)
        self.model.load_state_dict(model.state_dict())
        self.optimizer.load_state_dict(ckpt.read_optimizer(checkpoint))
        state = ckpt.read_state(checkpoint)
        self.step = state["step"]
        torch.set_rng_state(torch.tensor(state["rng"], dtype=torch.uint8))

    def save(self) -> Path:
        """RUN/checkpoints/step_N/, written in a temporary directory and renamed into place."""
        target = layout.step_dir(self.run, self.step)
        with atomic_directory(target) as tmp:
            save_vision_model(self.model, self.model_cfg, tmp)
            state = {"step": self.step, "rng": torch.get_rng_state().tolist()}
            ckpt.write_training_files(tmp, state, self.optimizer)
        ckpt.clean_up(self.run, self.train_cfg.keep_last)
        return target

    def validate(self) -> dict:
        scores = evaluate_images(self.model, self.model_cfg, "valid", self.train_cfg.valid_size)
        self.log.write("valid", self.step, **scores)
        return scores

    def train(self) -> dict:
        """Train to `max_steps` (or `max_minutes`); returns the last validation and timings."""
        cfg, start, start_step = self.train_cfg, time.monotonic(), self.step
        self.model.train()
        bar = tqdm(
            total=cfg.max_steps,
            initial=self.step,
            disable=not self.progress,
            file=sys.stderr,
            desc=f"train {self.model_cfg.task}",
        )
        while self.step < cfg.max_steps:
            self.step += 1
            loss = self.train_step()
            bar.update(1)
            if self.step % cfg.log_every == 0:
                bar.set_postfix(loss=f"{loss:.3f}")
                self.log.write("train", self.step, loss=loss, lr=warmup_cosine_lr(self.step, cfg))
            if cfg.eval_every and self.step % cfg.eval_every == 0 and self.step < cfg.max_steps:
                self.validate()
            if self.step % cfg.save_every == 0:
                self.save()
            if cfg.max_minutes and time.monotonic() - start > 60 * cfg.max_minutes:
                break
        bar.close()
        scores = self.validate()
        self.save()
        self.log.close()
        minutes = (time.monotonic() - start) / 60
        return {
            "step": self.step,
            "steps_this_run": self.step - start_step,
            "minutes": round(minutes, 2),
            "valid": scores,
        }

    def train_step(self) -> float:
        cfg = self.train_cfg
        for group in self.optimizer.param_groups:
            group["lr"] = warmup_cosine_lr(self.step, cfg)
        batch = training_batch(
            self.model_cfg.task,
            self.step,
            cfg.batch_size,
            cfg.seed,
            self.model_cfg.image_size,
            cfg.augment,
        )
        loss = task_loss(self.model, batch, self.model_cfg.task, cfg)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"step {self.step}: the loss is {loss.item()}")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.clip_norm:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm)
        self.optimizer.step()
        return loss.item()
