"""Bad-input cases of damaged user files, several first found by the fuzzed readers
(tests/fuzz): each tried as a user would meet it, through the command line."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np

from aiayn import layout
from tests.bad_input.kit import (
    SMALL_PREPARE,
    TINY,
    Case,
    Fixtures,
    Outcome,
    aiayn,
    copy,
    cut,
    digest,
    with_data,
)


def prepare_corpus(make: Callable[[bytes], bytes], name: str = "corpus.tsv") -> Callable:
    """`aiayn prepare` on the good corpus changed by `make`."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        corpus = tmp / name
        corpus.write_bytes(make(f.corpus.read_bytes()))
        out = aiayn(
            ["prepare", "--corpus", str(corpus), "--out", str(tmp / "data"), *SMALL_PREPARE]
        )
        return Outcome(
            out.code, out.message, not (tmp / "data").exists() or out.code == 0, out.traceback
        )

    return case


def nul_byte_on_line_3(f: Fixtures, tmp: Path) -> Outcome:
    """One line with a NUL byte: dropped, and the report names it; the rest prepared."""
    lines = f.corpus.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b" ", b"\x00", 1)
    corpus = tmp / "corpus.tsv"
    corpus.write_bytes(b"\n".join(lines))
    out = aiayn(["prepare", "--corpus", str(corpus), "--out", str(tmp / "data"), *SMALL_PREPARE])
    report = json.loads((tmp / "data" / "report.json").read_text()) if out.code == 0 else {}
    examples = report.get("cleaning", {}).get("examples", {}).get("NUL byte", [])
    return Outcome(
        out.code, f"report: dropped (NUL byte) e.g. {examples}", examples == ["corpus.tsv:3"]
    )


def translate_with_damaged(name: str, damage: Callable[[Path], None]) -> Callable:
    """`aiayn translate` with a model directory whose file `name` was damaged."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        model = copy(layout.latest(f.run).path, tmp / "model")
        damage(model / name)
        (tmp / "in.txt").write_text("The dog sees a cat.\n")
        out = tmp / "out.txt"
        got = aiayn(
            [
                "translate",
                "--model",
                str(model),
                "--input",
                str(tmp / "in.txt"),
                "--output",
                str(out),
            ]
        )
        return Outcome(got.code, got.message, not out.exists(), got.traceback)

    return case


def half(path: Path) -> None:
    cut(path, path.stat().st_size // 2)


def json_changed(**changes) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))

    return change


def average_with_damaged_weights(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    half(layout.latest(run).path / layout.WEIGHTS_FILE)
    before = digest(run)
    out = aiayn(["average", str(run), "--last", "2", "--out", str(tmp / "avg")])
    kept = digest(run) == before and not (tmp / "avg").exists()
    return Outcome(out.code, out.message, kept, out.traceback)


def plot_metrics_of_garbage(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    (run / layout.METRICS_FILE).write_bytes(b"5\n\x00\x01garbage\n")
    out = aiayn(["plot", "metrics", str(run), "--out", str(tmp / "m.png")])
    return Outcome(out.code, out.message, not (tmp / "m.png").exists(), out.traceback)


def train_on_damaged_data(damage: Callable[[Path], None]) -> Callable:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        damage(data)
        out = aiayn(
            ["train", "--data", str(data), "--out", str(tmp / "run"), *TINY, "--max-steps", "2"]
        )
        return Outcome(
            out.code, out.message, not layout.list_checkpoints(tmp / "run"), out.traceback
        )

    return case


def float_offsets(data: Path) -> None:
    path = data / "train.src.offsets.npy"
    np.save(path, np.load(path).astype(np.float64))


def resume_where_the_data_is_gone(f: Fixtures, tmp: Path) -> Outcome:
    run = with_data(copy(f.run, tmp / "run"), tmp / "moved-away")
    before = digest(run)
    out = aiayn(["train", "--out", str(run), "--resume", "--max-steps", "8", "--no-progress"])
    return Outcome(out.code, out.message, digest(run) == before, out.traceback)


def resume_from_a_state_without_sampler(f: Fixtures, tmp: Path) -> Outcome:
    run = copy(f.run, tmp / "run")
    state = layout.latest(run).path / layout.STATE_FILE
    saved = json.loads(state.read_text())
    del saved["sampler"]
    state.write_text(json.dumps(saved))
    out = aiayn(["train", "--out", str(run), "--resume", "--max-steps", "8", "--no-progress"])
    return Outcome(out.code, out.message, layout.latest(run).step == 6, out.traceback)


def import_marian_with_damaged_spm(f: Fixtures, tmp: Path) -> Outcome:
    from tests.interop.test_marian import marian_dir

    marian_dir(f.data, tmp / "marian")
    (tmp / "marian" / "source.spm").write_bytes(b"\xff" * 16)
    out = aiayn(["import", "marian", str(tmp / "marian"), "--out", str(tmp / "ours")])
    return Outcome(out.code, out.message, not (tmp / "ours").exists(), out.traceback)


def evaluate_on_latin1_references(f: Fixtures, tmp: Path) -> Outcome:
    data = copy(f.data, tmp / "data")
    path = data / "test.tgt.txt"
    lines = path.read_bytes().split(b"\n")
    lines[2] = "Grüße".encode("latin-1")
    path.write_bytes(b"\n".join(lines))
    return aiayn(["evaluate", "--model", str(f.run), "--data", str(data), "--beam", "1"])


def torchrun_restart(*changes: str) -> Callable:
    """`aiayn train` as torchrun restarts it (TORCHELASTIC_RESTART_COUNT=1), on a directory
    holding the run that the same command began, or (with `changes`) another run."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        run = copy(f.run, tmp / "run")
        weights = layout.latest(run).path / layout.WEIGHTS_FILE
        before = weights.read_bytes()
        argv = ["train", "--data", str(f.data), "--out", str(run), *TINY, "--max-steps", "6"]
        with mock.patch.dict(os.environ, {"TORCHELASTIC_RESTART_COUNT": "1"}):
            out = aiayn([*argv, *changes])
        kept = layout.latest(run).step == 6 and weights.read_bytes() == before
        return Outcome(out.code, out.message, kept, out.traceback)

    return case


CASES = [
    Case(
        "prepare a UTF-16 corpus",
        prepare_corpus(lambda b: b.decode().encode("utf-16")),
        2,
        ("corpus.tsv", "UTF-16", "iconv"),
    ),
    Case(
        "prepare a .gz corpus cut in half",
        prepare_corpus(lambda b: (z := gzip.compress(b))[: len(z) // 2], "corpus.tsv.gz"),
        2,
        ("corpus.tsv.gz", "damaged or cut short", "gzip -t"),
    ),
    Case("prepare a corpus with a NUL byte on line 3", nul_byte_on_line_3, 0, ("corpus.tsv:3",)),
    Case(
        "translate: spm.model cut in half",
        translate_with_damaged(layout.TOKENIZER_FILE, half),
        2,
        ("spm.model", "not a SentencePiece model"),
    ),
    Case(
        "translate: config.json says 10^9 layers",
        translate_with_damaged(layout.CONFIG_FILE, json_changed(n_encoder_layers=10**9)),
        2,
        ("model.safetensors", "does not match", "config.json"),
    ),
    Case(
        'translate: config.json d_model "32"',
        translate_with_damaged(layout.CONFIG_FILE, json_changed(d_model="32")),
        2,
        ("config.json", "d_model", "not a finite int"),
    ),
    Case(
        "average a checkpoint with cut weights",
        average_with_damaged_weights,
        2,
        ("model.safetensors", "not a readable safetensors file"),
    ),
    Case(
        "plot metrics of garbage",
        plot_metrics_of_garbage,
        2,
        ("metrics.jsonl, line 1", "not a record of ours"),
    ),
    Case(
        'meta.json vocab_size "64"',
        train_on_damaged_data(lambda d: json_changed(vocab_size="64")(d / "meta.json")),
        2,
        ("meta.json", "vocab_size", "not a finite int"),
    ),
    Case(
        "train.src.offsets.npy of floats",
        train_on_damaged_data(float_offsets),
        2,
        ("train.src.offsets.npy", "integer offsets", "aiayn prepare"),
    ),
    Case(
        "train --resume, the run's data directory gone",
        resume_where_the_data_is_gone,
        2,
        ("run.json", "is gone", "--data"),
    ),
    Case(
        "train --resume, state.json without sampler",
        resume_from_a_state_without_sampler,
        2,
        ("state.json", "missing key(s) ['sampler']", "delete it"),
    ),
    Case(
        "import marian, source.spm damaged",
        import_marian_with_damaged_spm,
        2,
        ("source.spm", "not a SentencePiece model"),
    ),
    Case(
        "evaluate --data, a Latin-1 line in test.tgt.txt",
        evaluate_on_latin1_references,
        2,
        ("test.tgt.txt, line 3", "not UTF-8"),
    ),
    Case(
        "torchrun restart, --out holds this run",
        torchrun_restart(),
        0,
        ("torchrun restart 1: the run goes on by itself", "resumed from", "step_00000006"),
    ),
    Case(
        "torchrun restart, --out holds another run",
        torchrun_restart("--set", "dropout=0.3"),
        2,
        ("torchrun restarted this job", "dropout 0.1 there, 0.3 asked", "--resume"),
    ),
]
