"""Where numbers go: RUN/metrics.jsonl (one JSON object a line), and TensorBoard if installed."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from aiayn.files import atomic_write
from aiayn.layout import METRICS_FILE

# exp(50) ~ 5e21: far above any perplexity worth reading, and far below float overflow (exp(710))
# that a diverged run's loss would otherwise reach.
MAX_LOG_PERPLEXITY = 50.0


def perplexity(nll: float) -> float:
    """exp(nll per token), capped so that a diverged run logs a large number, not inf."""
    return math.exp(min(nll, MAX_LOG_PERPLEXITY))


class MetricsLog:
    """Appends records to metrics.jsonl (flushed at once, so a crash loses nothing written)."""

    def __init__(self, run: Path, enabled: bool = True) -> None:
        self.enabled = enabled
        self.path = Path(run) / METRICS_FILE
        self.tensorboard = None
        if enabled:
            try:  # optional: only when the tensorboard package is installed
                from torch.utils.tensorboard import SummaryWriter

                self.tensorboard = SummaryWriter(str(Path(run) / "tensorboard"))
            except ImportError:
                pass

    def write(self, kind: str, step: int, **values: Any) -> None:
        if not self.enabled:
            return
        record = {"kind": kind, "step": step, "time": round(time.time(), 3), **values}
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        if self.tensorboard is not None:
            for name, value in values.items():
                if isinstance(value, int | float):
                    self.tensorboard.add_scalar(f"{kind}/{name}", value, step)

    def close(self) -> None:
        if self.tensorboard is not None:
            self.tensorboard.close()


def read_metrics(run: Path) -> list[dict[str, Any]]:
    """The records of RUN/metrics.jsonl. A torn last line (a run killed while writing it) is
    skipped with a warning; a damaged line before it is an error naming the line."""
    path = Path(run) / METRICS_FILE
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    records = []
    for n, line in enumerate(lines, start=1):
        if not line:
            continue
        try:
            records.append(_record(line))
        except ValueError as err:
            if n == len(lines):  # no line end after it: the write was cut short
                print(
                    f"warning: {path}, line {n}: incomplete last record skipped (the run was "
                    "stopped while writing it)",
                    file=sys.stderr,
                )
                continue
            raise ValueError(
                f"{path}, line {n}: not a record of ours ({err}); delete or repair that line"
            ) from None
    return records


# What every record holds, and the numbers a record may hold (the plots and checks read them).
NUMBERS = ("time", "loss", "lr", "bleu", "chrf", "tokens_per_s")


def forget_metrics_after(run: Path, step: int) -> None:
    """Drop metrics logged after the checkpoint a run resumes from (`aiayn train --resume`,
    `aiayn vision train --resume`): they will be logged again."""
    kept = [r for r in read_metrics(run) if r["step"] <= step]
    text = "".join(json.dumps(r) + "\n" for r in kept)
    atomic_write(Path(run) / METRICS_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _record(line: str) -> dict[str, Any]:
    """One line as a record: a JSON object with a kind and a step, its numbers numbers. Found
    by the fuzzed readers: other JSON values escaped as KeyErrors and TypeErrors from the plot."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(err.msg) from None
    except RecursionError:
        raise ValueError("nested far too deep") from None
    if not isinstance(record, dict):
        raise ValueError(f"a JSON {type(record).__name__}, not an object")
    if not isinstance(record.get("kind"), str) or type(record.get("step")) is not int:
        raise ValueError('no "kind" string or "step" integer')
    wrong = [k for k in NUMBERS if k in record and not _is_number(record[k])]
    if wrong:
        raise ValueError(f"{wrong[0]} is {json.dumps(record[wrong[0]])[:30]}, not a number")
    return record


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
