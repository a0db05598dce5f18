"""The steps every `aiayn prepare` shares, with or without `--langs`.

Each kind reads, splits and binarizes in its own way; around that, both build the directory
aside and swap it in whole, time their stages, say what they do, learn the joint BPE with the
common options (`CommonOptions`), and report the vocabulary and the time the same way.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from aiayn.data.prepare.bpe import train_bpe
from aiayn.data.prepare.options import CommonOptions
from aiayn.data.sources import DataError
from aiayn.files import atomic_directory
from aiayn.layout import DataFiles

Options = TypeVar("Options", bound=CommonOptions)


def check_out(out: Path) -> None:
    """`out` is new, empty, or a data directory that prepare may replace."""
    meta_file = DataFiles(out).meta_file
    if out.is_dir() and any(out.iterdir()) and not meta_file.is_file():
        raise DataError(
            f"--out {out}: holds files but no {meta_file.name}, so it is not a data "
            "directory that prepare may replace; give a new or empty directory"
        )


def build_aside(opts: Options, build: Callable[[Options], dict]) -> dict:
    """`build` the directory into an empty one beside `opts.out`, swapped in only when it is
    complete: a run that fails leaves an earlier directory there as it was."""
    with atomic_directory(Path(opts.out)) as tmp:
        result = build(replace(opts, out=tmp))
    return result


class StageClock:
    """The seconds of each stage of a build, and of the whole."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def done(self, stage: str) -> None:
        """`stage` ends now: it took the time since the previous one ended."""
        self.seconds[stage] = time.perf_counter() - self.started - sum(self.seconds.values())

    def report(self) -> dict[str, Any]:
        """The report's "seconds" (the whole build so far) and "stage_seconds"."""
        return {
            "seconds": round(time.perf_counter() - self.started, 1),
            "stage_seconds": {stage: round(t, 1) for stage, t in self.seconds.items()},
        }


def say(opts: CommonOptions, message: str) -> None:
    """A line of progress on stderr, unless `--no-progress`."""
    if opts.progress:
        print(message, file=sys.stderr)


def learn_bpe(
    opts: CommonOptions, texts: list[Path], vocab_size: int, **kind: Any
) -> tuple[Path, int]:
    """The joint BPE of `texts` learned into `opts.out` (`train_bpe`) with the common options;
    `kind`: what the directory's kind adds (`max_sentences`, `exact`, `user_symbols`, ...).
    Returns the model file and its vocabulary size."""
    say(opts, f"learning a {vocab_size:,}-piece joint BPE vocabulary...")
    return train_bpe(
        texts,
        Path(opts.out),
        vocab_size,
        threads=opts.workers,
        seed=opts.seed,
        case_copies=opts.case_copies,
        case_markup=opts.case_markup,
        **kind,
    )


def vocabulary_report(
    opts: CommonOptions, model_file: Path, vocab_size: int, **kind: Any
) -> dict[str, Any]:
    """The report's "vocabulary": its size and file, `kind`'s details, the case options."""
    return {
        "size": vocab_size,
        "model": model_file.name,
        "type": "joint BPE",
        **kind,
        "case_copies": opts.case_copies,
        "case_markup": opts.case_markup,
    }
