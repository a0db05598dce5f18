"""Bad multilingual training data and settings (`aiayn train` on a directory with
directions): a clear error that names the file or setting, the value and what to do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.bad_input.kit import TINY, Case, Fixtures, Outcome, aiayn, copy, digest
from tests.train.multilingual_fixture import make_multilingual_dir


def multi_data(f: Fixtures, tmp: Path) -> Path:
    """A copy of a tiny multilingual directory (made once, beside the shared fixtures)."""
    made = f.data.parent / "multilingual-data"
    if not made.is_dir():
        make_multilingual_dir(made)
    return copy(made, tmp / "data")


def train_on(change: Callable[[Path], None], *sets: str) -> Callable[[Fixtures, Path], Outcome]:
    """Train on a multilingual copy after `change(data)`; the data must stay as it was."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = multi_data(f, tmp)
        change(data)
        before = digest(data)
        argv = ["train", "--data", str(data), "--out", str(tmp / "run"), *TINY, "--max-steps", "2"]
        out = aiayn([*argv, *(x for s in sets for x in ("--set", s))])
        return Outcome(out.code, out.message, digest(data) == before, out.traceback)

    return case


def directions(values) -> Callable[[Path], None]:
    return lambda data: np.save(data / "train.dir.npy", np.asarray(values))


def short_directions(data: Path) -> None:
    np.save(data / "train.dir.npy", np.load(data / "train.dir.npy")[:-1])


def out_of_range(data: Path) -> None:
    values = np.load(data / "train.dir.npy")
    values[7] = 9
    np.save(data / "train.dir.npy", values)


CASES = [
    Case(
        "train: multilingual data without train.dir.npy",
        train_on(lambda data: (data / "train.dir.npy").unlink()),
        2,
        ("train.dir.npy: missing", "en-de", "aiayn prepare --langs"),
    ),
    Case(
        "train: a damaged train.dir.npy",
        train_on(lambda data: (data / "train.dir.npy").write_bytes(b"\x93NUMPY garbage")),
        2,
        ("train.dir.npy: not a NumPy array", "aiayn prepare --langs"),
    ),
    Case(
        "train: train.dir.npy one pair short",
        train_on(short_directions),
        2,
        ("train.dir.npy", "not one integer per pair of train (800)"),
    ),
    Case(
        "train: train.dir.npy names direction 9 of 4",
        train_on(out_of_range),
        2,
        ("train.dir.npy: pair 7 has direction 9", "lists 4 (en-de, de-en, en-fr, fr-en)"),
    ),
    Case(
        "train: train.dir.npy of floats",
        train_on(directions(np.zeros(800))),
        2,
        ("train.dir.npy: holds float64[800]",),
    ),
    Case(
        "train: multilingual validation without valid.fr.txt",
        train_on(lambda data: (data / "valid.fr.txt").unlink()),  # found before training
        2,
        ("valid.fr.txt: missing",),
    ),
    Case(
        "train --set sampling_temperature=0",
        train_on(lambda data: None, "sampling_temperature=0"),
        2,
        ("sampling_temperature must be above 0", "got 0"),
    ),
]
