"""Bad models and settings of fine-tuning (`aiayn train --init MODEL`): a clear error that names
the model, the data or the setting, the value and what to do; the model and data untouched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiayn import layout
from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, argv_case, copy, digest

NEW_RUN = ["--no-progress", "--max-steps", "2", "--max-tokens", "160"]


def init_with(
    *flags: str, data: str = "data", model: Callable[[Fixtures, Path], Path] | None = None
) -> Callable[[Fixtures, Path], Outcome]:
    """`train --init MODEL --data DATA`, MODEL the tiny run (or what `model` makes), DATA the
    tiny data or the one with a larger vocabulary; neither may change."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        source = model(f, tmp) if model is not None else f.run
        directory = f.big_data if data == "big" else f.data
        before = digest(source), digest(directory)
        argv = ["train", "--init", str(source), "--data", str(directory), "--out", str(tmp / "ft")]
        out = aiayn([*argv, *NEW_RUN, *flags])
        kept = (digest(source), digest(directory)) == before
        return Outcome(out.code, out.message, kept, out.traceback)

    return case


def without_tokenizer(f: Fixtures, tmp: Path) -> Path:
    model = copy(layout.model_dir(f.run), tmp / "model")
    (model / layout.TOKENIZER_FILE).unlink()
    return model


def resume_with(*flags: str) -> Callable[[Fixtures, Path], Outcome]:
    """`train --resume` of a copy of the tiny run (begun from random weights, nothing frozen);
    RUN in `flags` is the tiny run itself."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        before = digest(run / layout.CHECKPOINTS)
        argv = ["train", "--out", str(run), "--resume", "--no-progress", "--max-steps", "8"]
        out = aiayn([*argv, *(str(f.run) if x == "RUN" else x for x in flags)])
        kept = digest(run / layout.CHECKPOINTS) == before
        return Outcome(out.code, out.message, kept, out.traceback)

    return case


CASES = [
    Case(
        "train --init DATA (a data directory, not a model)",
        argv_case("train", "--init", "DATA", "--data", "DATA", "--out", "TMP/ft"),
        2,
        ("--init", "no model here", "give a run directory"),
    ),
    Case(
        "train --init MODEL without spm.model",
        init_with(model=without_tokenizer),
        2,
        ("--init", "spm.model is missing", "not a whole model directory"),
    ),
    Case(
        "train --init RUN on data of another vocabulary",
        init_with(data="big"),
        2,
        ("big-data", "vocabulary", "is not the model's", "aiayn prepare --vocab"),
    ),
    Case(
        "train --init RUN --set d_model=64 (the model has 32)",
        init_with("--set", "d_model=64"),
        2,
        ("--set d_model=64", "d_model=32", "drop --set d_model"),
    ),
    Case(
        "train --init RUN --set n_decoder_layers=3 (the model has 2: fewer may be kept, not more)",
        init_with("--set", "n_decoder_layers=3"),
        2,
        ("--set n_decoder_layers=3", "n_decoder_layers=2", "fewer of its layers, not more"),
    ),
    Case(
        "train --init RUN --preset base (the model is tiny)",
        init_with("--preset", "base"),
        2,
        ("--preset base", "d_model is 512", "d_model=32", "drop --preset"),
    ),
    Case(
        "train --set freeze=decoder",
        init_with("--set", "freeze=decoder"),
        2,
        ("freeze='decoder'", "'none', 'embeddings', 'encoder'"),
    ),
    Case(
        "train --resume --set freeze=encoder (the run froze nothing)",
        resume_with("--set", "freeze=encoder"),
        2,
        ("--set freeze=encoder", "freezes 'none'", "start a new run with --init"),
    ),
    Case(
        "train --resume --init RUN (the run began from random weights)",
        resume_with("--init", "RUN"),
        2,
        ("--init", "began from random weights", "drop --init to resume it"),
    ),
]
