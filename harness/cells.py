"""Benchmarks made of cells (benchmarks/adaptation.py, backtranslation.py, learning_curve.py,
termbase.py): each cell a run of `aiayn` commands whose outputs stay in a work directory, so
that a table fills across sessions; runs trained for equal wall-clock minutes; and a model's
scores under one fixed search, kept."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from harness.machine import cpu_model

# Every model of a table decodes with the same search, so the table compares weights, not
# settings: beam 4, |Y|^1.0, fairseq's stopping rule (CTranslate2 has them too).
SEARCH: dict = {"beam": 4, "alpha": 1.0, "length_penalty": "power", "stop": "k-finished"}


def aiayn(*args: str, log: Path) -> None:
    """One `aiayn` command to completion, its output in `log`; a failure stops the table."""
    logged([sys.executable, "-m", "aiayn", *args], log)


def logged(cmd: list[str], log: Path) -> None:
    """A command to completion, its output in `log`; a failure stops the table."""
    with open(log, "w", encoding="utf-8") as out:
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed; see {log}")


def trained_for(
    run: Path, minutes: float, precision: str | None, args: list[str], sets: tuple[str, ...] = ()
) -> Path:
    """`aiayn train --out RUN ARGS` for `minutes` of wall clock, unless it finished before (one
    cut off is trained again from nothing: a resumed run would get all its minutes again). No
    search is tuned at the close (every model is scored with SEARCH); the CPU it trained on is
    written beside it (`cpu_of`), its output to RUN.log."""
    if any((run / "checkpoints" / name).is_dir() for name in ("averaged", "best")):
        return run
    if run.exists():
        print(f"{run}: cut off before its end; trained again from nothing", flush=True)
        shutil.rmtree(run)
    _cpu_file(run).write_text(cpu_model())
    args = [*args, "--out", str(run), "--max-minutes", f"{minutes:g}", "--no-progress"]
    args += ["--precision", precision] if precision else []
    aiayn("train", *args, "--set", "tune_search=false", *sets, log=run.parent / f"{run.name}.log")
    return run


def cpu_of(run: Path) -> str:
    """The CPU a run of `trained_for` trained on ("unknown" for one trained before it said)."""
    return _cpu_file(run).read_text() if _cpu_file(run).is_file() else "unknown"


def _cpu_file(run: Path) -> Path:
    return run.parent / f"{run.name}.cpu"  # beside it: `train --out` must not exist yet


def spread(values: list[float], digits: int = 2) -> str:
    """The mean, and the min-max where there are several (a table's seeds)."""
    mean = f"{statistics.mean(values):.{digits}f}"
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return mean if len(values) == 1 else f"{mean} ({low}-{high})"


def scored(model: Path, data: Path, memo: Path, split: str = "test") -> dict[str, float]:
    """BLEU and chrF of a model (a run: its best or averaged model) on a split, under SEARCH;
    kept in `memo` (`memoized`)."""

    def score() -> dict[str, float]:
        from aiayn.config import DecodeConfig
        from aiayn.engines import open_translator
        from aiayn.evaluate.split import evaluate_split

        translator = open_translator(model)
        cfg = DecodeConfig(**SEARCH)
        found = evaluate_split(data, split, lambda lines: translator.translate(lines, cfg))
        return {"bleu": round(found.scores.bleu, 2), "chrf": round(found.scores.chrf, 2)}

    return memoized(memo, {"model": model, "data": data, "split": split}, score)


def memoized(memo: Path, about: dict, compute: Callable[[], dict]) -> dict:
    """`compute()`'s result, kept in `memo` (JSON) and read back from it while what it was
    computed from is the same: `about` (paths, settings), the search, and the newest file of
    each path in `about`. A table that stopped while scoring goes on where it stopped, and a
    retrained cell is scored anew."""
    from aiayn.files import atomic_write

    key = {k: str(v) for k, v in about.items()} | {"search": SEARCH}
    key["newest"] = {k: _newest(v) for k, v in about.items() if isinstance(v, Path)}
    if memo.is_file() and (kept := json.loads(memo.read_text()))["key"] == key:
        return kept["scores"]
    scores = compute()
    memo.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(memo, lambda tmp: tmp.write_text(json.dumps({"key": key, "scores": scores})))
    return scores


def _newest(path: Path) -> int:
    """The latest modification time (ns) of a file, or of the files under a directory."""
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    return max((f.stat().st_mtime_ns for f in files), default=0)
