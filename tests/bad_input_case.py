"""Bad case-robustness settings: `aiayn train --set case_augment=...` outside [0, 1] or not a
number, or beside guided alignment, and an unknown `aiayn evaluate --case`."""

from __future__ import annotations

from tests.bad_input_kit import TINY, Case, argv_case


def train_with(*sets: str):
    argv = ["train", "--data", "DATA", "--out", "TMP/run", *TINY, "--max-steps", "2"]
    return argv_case(*argv, *(x for s in sets for x in ("--set", s)))


CASES = [
    Case(
        "train --set case_augment=1.5",
        train_with("case_augment=1.5"),
        2,
        ("case_augment must be a fraction of the pairs in [0, 1]", "got 1.5"),
    ),
    Case(
        "train --set case_augment=-0.1",
        train_with("case_augment=-0.1"),
        2,
        ("case_augment must be a fraction of the pairs in [0, 1]", "got -0.1"),
    ),
    Case(
        "train --set case_augment=some (not a number)",
        train_with("case_augment=some"),
        2,
        ("case_augment", "some", "float"),
    ),
    Case(
        "train --set case_augment=0.2 guided_alignment=0.05",
        train_with("case_augment=0.2", "guided_alignment=0.05"),
        2,
        ("case_augment cannot be combined with guided_alignment", "set one of them to 0"),
    ),
    Case(
        "evaluate --case lower",
        argv_case("evaluate", "--model", "RUN", "--data", "DATA", "--case", "lower"),
        2,
        ("--case", "invalid choice: 'lower'", "as-is", "upper", "title"),
    ),
]
