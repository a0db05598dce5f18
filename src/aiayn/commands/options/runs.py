"""What `aiayn train --resume` and `aiayn vision train --resume` do to the run they resume."""

from __future__ import annotations

import json
from pathlib import Path


def forget_metrics_after(run: Path, step: int) -> None:
    """Drop metrics logged after the checkpoint a run resumes from: they will be logged again."""
    from aiayn.files import atomic_write
    from aiayn.layout import METRICS_FILE
    from aiayn.train.metrics import read_metrics

    kept = [r for r in read_metrics(run) if r["step"] <= step]
    text = "".join(json.dumps(r) + "\n" for r in kept)
    atomic_write(run / METRICS_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))
