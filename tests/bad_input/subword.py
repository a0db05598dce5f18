"""Bad settings of the small-data regularisers. Subword sampling (`aiayn train --set
subword_sampling=ALPHA`): alpha outside [0, 1) or not a number, an unknown
subword_sampling_sides, beside guided alignment or case augmentation, and a data directory whose
training text no longer matches its ids (the data directory left as it was). Word and activation
dropout outside [0, 1)."""

from __future__ import annotations

from pathlib import Path

from tests.bad_input.casing import train_with
from tests.bad_input.kit import TINY, Case, Fixtures, Outcome, aiayn, copy, digest


def text_cut_short(f: Fixtures, tmp: Path) -> Outcome:
    """The training sources lose their last lines after `aiayn prepare` wrote the ids."""
    data = copy(f.data, tmp / "data")
    lines = (data / "train.src.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.src.txt").write_text("".join(lines[:-5]), encoding="utf-8")
    before = digest(data)
    argv = ["train", "--data", str(data), "--out", str(tmp / "run"), *TINY, "--max-steps", "2"]
    out = aiayn([*argv, "--set", "subword_sampling=0.1"])
    return Outcome(out.code, out.message, digest(data) == before, out.traceback)


CASES = [
    Case(
        "train --set word_dropout=1",
        train_with("word_dropout=1"),
        2,
        ("word_dropout must be in [0, 1)", "got 1"),
    ),
    Case(
        "train --set activation_dropout=-0.1",
        train_with("activation_dropout=-0.1"),
        2,
        ("activation_dropout must be in [0, 1)", "got -0.1"),
    ),
    Case(
        "train --set subword_sampling=1",
        train_with("subword_sampling=1"),
        2,
        ("subword_sampling must be in [0, 1)", "0.1 = BPE-dropout's", "got 1"),
    ),
    Case(
        "train --set subword_sampling=-0.1",
        train_with("subword_sampling=-0.1"),
        2,
        ("subword_sampling must be in [0, 1)", "got -0.1"),
    ),
    Case(
        "train --set subword_sampling=nan",
        train_with("subword_sampling=nan"),
        2,
        ("subword_sampling must be in [0, 1)", "got nan"),
    ),
    Case(
        "train --set subword_sampling=some (not a number)",
        train_with("subword_sampling=some"),
        2,
        ("subword_sampling", "some", "float"),
    ),
    Case(
        "train --set subword_sampling=0.1 subword_sampling_sides=target",
        train_with("subword_sampling=0.1", "subword_sampling_sides=target"),
        2,
        ("subword_sampling_sides='target'", "choose one of", "both", "source"),
    ),
    Case(
        "train --set subword_sampling=0.1 guided_alignment=0.05",
        train_with("subword_sampling=0.1", "guided_alignment=0.05"),
        2,
        ("subword_sampling cannot be combined with guided_alignment", "set one of them to 0"),
    ),
    Case(
        "train --set subword_sampling=0.1 case_augment=0.2",
        train_with("subword_sampling=0.1", "case_augment=0.2"),
        2,
        ("subword_sampling cannot be combined with case_augment", "set one of them to 0"),
    ),
    Case(
        "train --set subword_sampling=0.1: train.src.txt shorter than its ids",
        text_cut_short,
        2,
        ("train.src.txt", "lines for", "encoded pairs", "re-run `aiayn prepare"),
    ),
]
