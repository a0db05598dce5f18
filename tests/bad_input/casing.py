"""Bad case-robustness settings: `aiayn train --set case_augment=...` outside [0, 1] or not a
number, or beside guided alignment, an unknown case_augment_sides or case_augment_mode, an
unknown `aiayn evaluate --case`, `aiayn prepare --case-copies` outside [0, 1] (bilingual and
with --langs; the data directory left as it was), and `--case-markup` with an unknown value."""

from __future__ import annotations

from tests.bad_input.kit import TINY, Case, argv_case
from tests.bad_input.multilingual_prepare import prepare_over_data


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
        "train --set case_augment=0.1 case_augment_sides=target",
        train_with("case_augment=0.1", "case_augment_sides=target"),
        2,
        ("case_augment_sides='target'", "choose one of", "both", "source"),
    ),
    Case(
        "train --set case_augment=0.1 case_augment_mode=append",
        train_with("case_augment=0.1", "case_augment_mode=append"),
        2,
        ("case_augment_mode='append'", "choose one of", "replace", "add"),
    ),
    Case(
        "evaluate --case lower",
        argv_case("evaluate", "--model", "RUN", "--data", "DATA", "--case", "lower"),
        2,
        ("--case", "invalid choice: 'lower'", "as-is", "upper", "title"),
    ),
    Case(
        "prepare --case-copies 1.5",
        prepare_over_data("--corpus", "TSV", "--case-copies", "1.5"),
        2,
        ("--case-copies must be a fraction of the lines in [0, 1]", "got 1.5"),
    ),
    Case(
        "prepare --langs en,de --case-copies -0.2",
        prepare_over_data("--langs", "en,de", "--case-copies", "-0.2"),
        2,
        ("--case-copies must be a fraction of the lines in [0, 1]", "got -0.2"),
    ),
    Case(
        "prepare --case-markup title",
        prepare_over_data("--corpus", "TSV", "--case-markup", "title"),
        2,
        ("--case-markup", "invalid choice: 'title'", "all", "upper"),
    ),
]
