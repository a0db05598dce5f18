"""Which checkpoint to go on from: the newest intact one on resume, and the last good one when
a run diverges.

A checkpoint can be damaged although it was written atomically: a copy cut short, a disk
error, a hand edit. `damage` looks at each of its files cheaply (the safetensors header and
size, the optimizer archive's index, the JSON files) without loading the tensors.
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

from safetensors import SafetensorError, safe_open

from aiayn import layout
from aiayn.layout import CONFIG_FILE, WEIGHTS_FILE
from aiayn.train.metrics import read_metrics

# A checkpoint is "good" after a divergence if its training loss is at most this factor above
# the lowest one logged up to it (a loss gone from 6.2 to 389 is far above; noise is not).
GOOD_LOSS_FACTOR = 1.5


def damage(checkpoint: Path) -> str | None:
    """Why a step checkpoint cannot be resumed from, or None if its files look whole."""
    checkpoint = Path(checkpoint)
    for name in (layout.STATE_FILE, CONFIG_FILE):
        try:
            json.loads((checkpoint / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return f"{name} is missing"
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            return f"{name} is not valid JSON ({err})"
    try:
        with safe_open(str(checkpoint / WEIGHTS_FILE), "pt") as weights:
            weights.keys()
    except (SafetensorError, OSError) as err:
        return f"{WEIGHTS_FILE} is unreadable ({err})"
    try:
        with zipfile.ZipFile(checkpoint / layout.OPTIMIZER_FILE) as archive:
            broken = archive.testzip()  # every member's checksum: changed bytes are found
    # Damaged archives fail in many ways besides BadZipFile (found by the fuzzed readers: a
    # UnicodeDecodeError from a damaged file name, NotImplementedError from damaged flags).
    except Exception as err:
        return f"{layout.OPTIMIZER_FILE} is unreadable ({err})"
    if broken is not None:
        return f"{layout.OPTIMIZER_FILE} is damaged (a wrong checksum in {broken})"
    return None


@dataclass(frozen=True)
class Skipped:
    checkpoint: layout.Checkpoint
    reason: str


def newest_intact(run: Path) -> tuple[layout.Checkpoint | None, list[Skipped]]:
    """The newest step checkpoint whose files are whole, and the newer ones passed over."""
    skipped: list[Skipped] = []
    for found in reversed(layout.list_checkpoints(run)):
        reason = damage(found.path)
        if reason is None:
            return found, skipped
        skipped.append(Skipped(found, reason))
    return None, skipped


def set_aside(checkpoint: layout.Checkpoint) -> Path:
    """Rename a damaged checkpoint to `damaged-step_N[-k]`: kept, but no longer listed."""
    path = checkpoint.path
    target = path.with_name(f"damaged-{path.name}")
    k = 1
    while target.exists():
        target, k = path.with_name(f"damaged-{path.name}-{k}"), k + 1
    path.rename(target)
    return target


def last_good(run: Path) -> tuple[layout.Checkpoint | None, str]:
    """The newest intact checkpoint whose weights still gave a sane loss, and a sentence saying
    how it was chosen.

    The loss logged at step s was computed with the weights of step s - 1, so a checkpoint is
    judged by the first training loss logged after it: finite, and at most GOOD_LOSS_FACTOR x
    the lowest logged until then. A checkpoint with no finite loss after it is not trusted.
    """
    logged = {r["step"]: r.get("loss") for r in read_metrics(run) if r.get("kind") == "train"}
    losses: dict[int, float] = {
        s: v for s, v in logged.items() if isinstance(v, int | float) and math.isfinite(v)
    }
    if not losses:
        found, _ = newest_intact(run)
        return found, "the newest intact one (no training loss was logged to judge by)"
    for found in reversed(layout.list_checkpoints(run)):
        after = [s for s in losses if s > found.step]
        if not after or damage(found.path) is not None:
            continue
        judged = min(after)
        loss, lowest = losses[judged], min(losses[s] for s in losses if s <= judged)
        if loss <= GOOD_LOSS_FACTOR * lowest:
            return found, (
                f"the training loss of its weights, {loss:.3f} (logged at step {judged}), was "
                f"finite and within {GOOD_LOSS_FACTOR}x of the lowest until then, {lowest:.3f}"
            )
    return None, (
        f"no checkpoint's weights gave a finite training loss within {GOOD_LOSS_FACTOR}x of the "
        "lowest; start again"
    )
