"""The training loop: the paper's recipe with checkpoints, validation, faults and DDP.

One update = `update_freq` token-budget batches per process, their summed loss divided by the
target tokens of the whole update (over all processes), so the gradient is the same whether
N batches are accumulated by one process or spread over N. With `case_augment_mode=add` the
cased copies of the update's pairs are one more batch of it (data/batches/case_augment.py).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from aiayn import layout
from aiayn.config import ModelConfig, TrainConfig
from aiayn.data.batches.case_augment import case_augment_for
from aiayn.data.batches.dataset import Batch, IdPair, ParallelData
from aiayn.data.batches.directions import batch_sampler
from aiayn.data.batches.subword_sampling import subword_sampling_for
from aiayn.model import Transformer
from aiayn.train import checkpoint as ckpt
from aiayn.train import guided
from aiayn.train.closing import average_at_close, tune_at_close
from aiayn.train.distributed import Distributed
from aiayn.train.freeze import trainable
from aiayn.train.host_memory import allocator, bound_kernel_cache, heap_trimmer
from aiayn.train.loss import projected_smoothed_loss
from aiayn.train.metrics import MetricsLog, perplexity
from aiayn.train.precision import precision_context
from aiayn.train.recovery import last_good
from aiayn.train.run_dir import RunDir
from aiayn.train.schedule import adam, scheduled_rate
from aiayn.train.step_stats import RunningTotals, StepStats, StopFlags, UpdateSums
from aiayn.train.stop_signals import StopSignals
from aiayn.train.update_passes import grouped, update_passes
from aiayn.train.validate import Validation, validate
from aiayn.train.validate_directions import check_held_out


class TrainingError(RuntimeError):
    """The run cannot go on; the message says why and what to do."""


class Trainer:
    """Builds the model, optimizer and data for a run directory and trains it."""

    def __init__(
        self,
        model_cfg: ModelConfig,
        train_cfg: TrainConfig,
        run: RunDir,
        dist: Distributed,
        progress: bool = True,
    ) -> None:
        self.cfg, self.run, self.dist = train_cfg, run, dist
        self.progress = progress and dist.is_main
        bound_kernel_cache()  # before the first bf16 matrix product: bounded memory
        torch.manual_seed(train_cfg.seed)  # the same initial weights on every process
        self.model = Transformer(model_cfg).to(dist.device)
        # frozen parameters (fine-tuning, `freeze`) take no gradient and no optimizer state
        self.optimizer = adam(trainable(self.model, train_cfg.freeze), train_cfg)
        self.scaler = torch.amp.GradScaler("cuda", enabled=train_cfg.precision == "fp16")
        self.train_data = ParallelData(run.data, "train")
        if self.train_data.directions is not None:  # multilingual: validated per direction
            check_held_out(run.data, "valid")
        # a fraction of pairs upper- or title-cased each epoch; None when off
        self.case_augment = case_augment_for(train_cfg, run.data, run.tokenizer, self.train_data)
        # the training pairs segmented anew each epoch; None when off
        self.subword_sampling = subword_sampling_for(
            train_cfg, run.data, run.tokenizer, self.train_data
        )
        self.sampler = batch_sampler(  # temperature-sampled directions on multilingual data
            self.train_data.src_lengths,
            self.train_data.tgt_lengths,
            self.train_data.directions,
            len(run.data.meta.directions),
            train_cfg.max_tokens,
            train_cfg.sampling_temperature,
            seed=train_cfg.seed,
            rank=dist.rank,
            world_size=dist.world_size,
            multiple_of=dist.world_size * train_cfg.update_freq,
            pad_to=train_cfg.pad_to,
            epoch_lengths=self.case_augment or self.subword_sampling,
        )
        # guided alignment: the decoder layer it trains (None: off)
        self.align_layer = guided.set_up(train_cfg, model_cfg, run.data, self.train_data)
        self.state = ckpt.TrainState()
        self.metrics = MetricsLog(run.root, enabled=dist.is_main)
        torch.manual_seed(train_cfg.seed + 1000 * dist.rank)  # dropout differs across ranks
        ids = [dist.device.index] if dist.device.type == "cuda" else None
        self.ddp = DistributedDataParallel(self.model, device_ids=ids) if dist.enabled else None
        self.net: torch.nn.Module = self.model if self.ddp is None else self.ddp
        self.stop_signals = StopSignals()  # SIGINT/SIGTERM: finish the update, save, stop
        # Bounded memory on batches of changing shapes (see host_memory): the CPU's tensors live
        # in the C heap; a GPU's do not, so there is nothing there worth a trim per update.
        self._release_heap = heap_trimmer(train_cfg.trim_heap and dist.device.type == "cpu")
        # the per-batch host reads of before, for the benchmark's before/after only (UpdateSums)
        self._sync_each_batch = os.environ.get("AIAYN_SYNC_EACH_BATCH") == "1"
        if train_cfg.precision == "fp16" and dist.device.type != "cuda":
            raise TrainingError("precision=fp16 needs a CUDA GPU; on a CPU use bf16 (or fp32)")

    # -- set-up ------------------------------------------------------------------------------

    def autocast(self) -> contextlib.AbstractContextManager:
        return precision_context(self.dist.device, self.cfg.precision)

    def resume(self, checkpoint: Path) -> None:
        """Load weights, optimizer, data position, RNG and counters from a checkpoint."""
        saved = Transformer.load(checkpoint, device=self.dist.device)
        self.model.load_state_dict(saved.state_dict())
        self.optimizer.load_state_dict(ckpt.read_optimizer(checkpoint))
        state = ckpt.read_resume_state(checkpoint)
        mismatch = ckpt.batching_mismatch(
            checkpoint, state, ckpt.batching(self.dist.world_size, self.cfg)
        )
        if mismatch:
            raise TrainingError(mismatch)
        dist = self.dist
        try:
            self.state = ckpt.restore_state(
                state, self.sampler, self.scaler, dist.rank, dist.world_size, dist.device
            )
        except ValueError as err:  # a data position of other data or settings
            raise ValueError(f"{checkpoint / ckpt.STATE_FILE}: {err}") from None

    # -- the loop ----------------------------------------------------------------------------

    def batches(self) -> Iterator[tuple[Batch, list[IdPair]]]:
        """Training batches of this process, epoch after epoch, until max_epochs; each with
        the cased copies of its pairs (case_augment_mode=add; else none)."""
        while not self.cfg.max_epochs or self.sampler.epoch < self.cfg.max_epochs:
            augment, sampling, epoch = self.case_augment, self.subword_sampling, self.sampler.epoch
            cased = augment.epoch(epoch) if augment is not None else None
            replaced, copied = (cased.replaced, cased.copied) if cased is not None else (None, {})
            data = sampling.epoch(epoch) if sampling is not None else self.train_data
            for indices in self.sampler:
                batch = data.collate(indices, self.cfg.pad_to, replaced)
                yield batch, data.copies(indices, copied) if copied else []

    def train(self) -> dict[str, Any]:
        """Train until a stopping rule holds; returns the summary (also printed)."""
        cfg = self.cfg
        started = last_save = time.monotonic()
        stream = grouped(self.batches(), cfg.update_freq, cfg.pad_to)
        bar = tqdm(
            total=cfg.max_steps,
            initial=self.state.step,
            desc="train",
            unit=" steps",
            disable=not self.progress,
            dynamic_ncols=True,
        )
        window = RunningTotals()
        stop_reason = "max_steps"
        with self.stop_signals.installed():
            while self.state.step < cfg.max_steps:
                batches, copies = next(stream, (None, None))
                if batches is None:
                    stop_reason = "max_epochs"
                    break
                stats = self.update(batches, self._stop_flags(started, last_save), copies)
                stepped = math.isfinite(stats.loss)  # a skipped update reports no loss
                if stepped:
                    window.add(stats)
                    bar.update(1)
                    bar.set_postfix(window.postfix(stats.loss, self._lr()), refresh=False)
                step = self.state.step
                if cfg.log_every and step % cfg.log_every == 0 and window.tokens:
                    self._log_train(window)
                    window = RunningTotals()
                if cfg.valid_every and step % cfg.valid_every == 0 and stepped:
                    validation_started = time.monotonic()
                    patience_ran_out = self._validate_and_keep_best(bar)
                    window.started += time.monotonic() - validation_started  # not training time
                    if patience_ran_out:
                        stop_reason = "patience"
                        break
                flags = stats.flags
                if flags.signal or flags.out_of_time:
                    stop_reason = "signal" if flags.signal else "max_minutes"
                    break
                saving = (cfg.save_every and step % cfg.save_every == 0) or flags.save_due
                if saving and stepped:
                    self.save()
                    last_save = time.monotonic()
        bar.close()
        return self._finish(stop_reason, started)

    def _stop_flags(self, started: float, last_save: float) -> StopFlags:
        """This process's reasons to stop or save. Only the main process reads the clocks: the
        update's all-reduce then gives every process the same answer."""
        cfg, now, main = self.cfg, time.monotonic(), self.dist.is_main
        return StopFlags(
            signal=self.stop_signals.received,
            out_of_time=main and bool(cfg.max_minutes) and now - started >= 60 * cfg.max_minutes,
            save_due=main and bool(cfg.save_minutes) and now - last_save >= 60 * cfg.save_minutes,
        )

    def update(
        self, batches: list[Batch], flags: StopFlags, copies: Batch | None = None
    ) -> StepStats:
        """One optimizer step over this process's batches of an update (and the cased copies
        of their pairs, case_augment_mode=add); returns the update's statistics and stop flags,
        summed over all processes (a skipped update: nan loss)."""
        cfg, device = self.cfg, self.dist.device
        self.net.train()
        # the backward passes divide by the update's target tokens, all processes'
        adding = self.case_augment is not None and self.case_augment.mode == "add"
        batches, local_tokens, total_tokens = update_passes(batches, copies, adding, self.dist.sum)
        lr = scheduled_rate(self.state.step + 1, self.model.cfg.d_model, cfg)
        for param_group in self.optimizer.param_groups:
            param_group["lr"] = lr
        sums = UpdateSums(self._sync_each_batch)  # on the device until read, once
        for i, batch in enumerate(batches):
            last = i == len(batches) - 1  # DDP all-reduces the gradients after the last only
            with contextlib.nullcontext() if last or self.ddp is None else self.ddp.no_sync():
                sums.add(*self._forward_backward(batch, total_tokens, device))
        self.scaler.unscale_(self.optimizer)
        # The gradient norm (the same on every process after DDP's all-reduce): clipped if asked,
        # and checked, since a finite loss can still give non-finite gradients.
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm or math.inf)
        # This process's part (its tokens too); one all-reduce makes it the whole update's.
        stats, bad_norm = sums.read(self.dist.all_reduce(sums.local(local_tokens, flags)), norm)
        if stats.non_finite or (bad_norm and cfg.precision != "fp16"):  # fp16: the scaler skips
            return self._skip_update(stats)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        self._release_heap()
        self.state.step += 1
        self.state.bad_steps_in_a_row = 0
        self.state.tokens_seen += int(total_tokens)
        return stats

    def _forward_backward(self, batch: Batch, total_tokens: float, device) -> tuple[Tensor, Tensor]:
        """One batch's forward and backward; its summed loss and nll, left on the device."""
        src, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
        try:
            real = tgt_out != self.model.cfg.pad_id  # (B, T)
            with self.autocast():
                if batch.alignment is None:
                    states = self.net(src, tgt_in, real, project=False)  # (N, D): real positions
                else:
                    head = (self.align_layer, self.cfg.alignment_head)
                    states, guided_loss = guided.forward(self.net, batch, (src, tgt_in), real, head)
                loss, nll = projected_smoothed_loss(
                    states,
                    self.model.output_weight,
                    tgt_out[real],
                    self.cfg.label_smoothing,
                    self.model.cfg.pad_id,
                )
            if batch.alignment is not None:
                loss = loss + self.cfg.guided_alignment * guided_loss
            # DDP averages gradients over processes; scaling by their number makes the result
            # the gradient of (summed loss of the update) / (its target tokens).
            scaled = loss * (self.dist.world_size / total_tokens)
            self.scaler.scale(scaled).backward()
        except torch.cuda.OutOfMemoryError:
            raise TrainingError(
                f"CUDA ran out of memory on a batch of {tuple(src.shape)} source and "
                f"{tuple(tgt_in.shape)} target tokens; lower --max-tokens (now "
                f"{self.cfg.max_tokens}) and raise --update-freq to keep the update size"
            ) from None
        return loss.detach(), nll

    def _skip_update(self, stats: StepStats) -> StepStats:
        """A non-finite loss (or gradient): no step is taken and the stats keep their flags but
        report no loss; too many in a row stop the run."""
        self.optimizer.zero_grad(set_to_none=True)
        if self.cfg.precision == "fp16":  # lower the scale, the usual cure for fp16 overflow
            self.scaler.update(self.scaler.get_scale() * self.scaler.get_backoff_factor())
        self.state.bad_steps_in_a_row += 1
        n = self.state.bad_steps_in_a_row
        if self.dist.is_main:
            message = f"step {self.state.step + 1}: non-finite loss, update skipped ({n} in a row)"
            tqdm.write(message, file=sys.stderr)
        if n >= self.cfg.max_bad_steps:
            last, why = last_good(self.run.root)
            raise TrainingError(
                f"{n} updates in a row had a non-finite loss; stopping. The last good checkpoint "
                f"is {last.path if last else '(none)'}: {why}. Try a lower lr_scale, "
                "clip_norm=1, or precision=fp32"
            )
        return replace(stats, loss_sum=math.nan, nll_sum=math.nan)

    # -- validation, saving, reporting --------------------------------------------------------

    def _validate_and_keep_best(self, bar: tqdm | None = None) -> bool:
        """Validate on the main process, keep the best checkpoint; True if patience ran out."""
        result: Validation | None = None
        if self.dist.is_main:
            result = validate(
                self.model, self.run.data, self.cfg, self.autocast, self.run.tokenizer
            )
            self.metrics.write("valid", self.state.step, **result.as_dict())
            if bar is not None:
                bar.write(f"step {self.state.step}: {result}", file=sys.stderr)
            self._keep_best(result)
            self._release_heap()
        (stop,) = self.dist.sum([float(self.dist.is_main and self._patience_ran_out())])
        self.model.train()
        return bool(stop)

    def _keep_best(self, result: Validation) -> None:
        state = self.state
        if state.best_bleu is None or result.bleu > state.best_bleu:
            state.best_bleu, state.best_step = result.bleu, state.step
            state.validations_without_improvement = 0
            ckpt.write_checkpoint(
                layout.best_dir(self.run.root),
                self.model,
                self.run.tokenizer,
                {"step": state.step, "valid": result.as_dict()},
            )
        else:
            state.validations_without_improvement += 1

    def _patience_ran_out(self) -> bool:
        patience = self.cfg.patience
        return bool(patience) and self.state.validations_without_improvement >= patience

    def save(self) -> None:
        """A step checkpoint (all processes take part: RNG states are gathered)."""
        all_rng = self.dist.gather(ckpt.rng_state(self.dist.device))
        if self.dist.is_main:
            batching = ckpt.batching(self.dist.world_size, self.cfg)
            state = ckpt.capture_state(self.state, self.sampler, self.scaler, all_rng, batching)
            target = layout.step_dir(self.run.root, self.state.step)
            ckpt.write_checkpoint(target, self.model, self.run.tokenizer, state, self.optimizer)
            ckpt.clean_up(self.run.root, self.cfg.keep_last)
        self.dist.barrier()

    def _lr(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    def _log_train(self, window: RunningTotals) -> None:
        nll = window.nll_sum / window.tokens
        self.metrics.write(
            "train",
            self.state.step,
            epoch=self.sampler.epoch,
            loss=window.loss_sum / window.tokens,
            nll_loss=nll,
            ppl=perplexity(nll),
            lr=self._lr(),
            tokens_per_s=window.tokens_per_s(),
            tokens=self.state.tokens_seen,
        )

    def _finish(self, reason: str, started: float) -> dict[str, Any]:
        """Final validation and checkpoint (unless just done), and the summary."""
        if self.state.step:
            self.save()  # first: a signal's grace period may not outlast a validation
            if not self.cfg.valid_every or self.state.step % self.cfg.valid_every:
                self._validate_and_keep_best()
                self.save()  # again, with the validation's outcome in its state
        averaged, tuned, closing = None, None, time.monotonic()
        if self.state.step and self.dist.is_main:
            averaged = average_at_close(
                self.run, self.cfg, self.state, self.metrics, self.autocast, self.dist.device
            )
            tuned = tune_at_close(self.run, self.cfg, self.state.step, self.metrics, self.dist)
        minutes, close_minutes = (
            (time.monotonic() - started) / 60,
            (time.monotonic() - closing) / 60,
        )
        summary = {
            "stopped_by": reason,
            "steps": self.state.step,
            "epochs": self.sampler.epoch,
            "tokens": self.state.tokens_seen,  # target tokens trained on, all processes
            "minutes": round(minutes, 2),
            "close_minutes": round(close_minutes, 2),  # averaging and choosing the search, in it
            "allocator": allocator(),  # host memory (train/host_memory.py)
            "best_bleu": self.state.best_bleu,
            "best_step": self.state.best_step,
            "averaged_bleu": averaged,
            "search": None if tuned is None else str(tuned.setting),
            "checkpoint": str(layout.step_dir(self.run.root, self.state.step)),
        }
        self.metrics.write("summary", self.state.step, **summary)
        self.metrics.close()
        return summary
