"""Fuzzed `metrics.jsonl`: read by `aiayn plot metrics`, by `train --resume` (which drops the
records after its checkpoint) and after a divergence (which judges checkpoints by the loss)."""

from __future__ import annotations

import json

import matplotlib
from hypothesis import example, given, settings
from hypothesis import strategies as st

from aiayn import layout
from aiayn.plot import metrics_figure
from aiayn.train.metrics import forget_metrics_after, read_metrics
from aiayn.train.recovery import last_good
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import edited_json, mutated, no_leftovers, read_or_refuse, scratch

matplotlib.use("Agg")

TRAIN = {"kind": "train", "step": 3, "time": 1.5, "loss": 5.2, "lr": 0.001, "tokens_per_s": 900}
VALID = {"kind": "valid", "step": 4, "time": 2.5, "loss": 5.0, "bleu": 1.0, "chrf": 9.0}
VALID_LINES = [json.dumps({**TRAIN, "step": s}) for s in (1, 2, 3)] + [json.dumps(VALID)]


@st.composite
def metrics_files(draw: st.DrawFn) -> bytes:
    """Good records with some edited (a field gone, a value changed, another document)."""
    lines = [
        draw(edited_json(json.loads(line))).decode() if draw(st.booleans()) else line
        for line in VALID_LINES
    ]
    return "".join(line + "\n" for line in lines).encode()


@FUZZ
@given(metrics_files() | mutated("".join(line + "\n" for line in VALID_LINES).encode()))
@example(b"5\n")  # a JSON value, but no record
@example(json.dumps({**TRAIN, "loss": "low"}).encode() + b"\n")
def test_metrics_readers(raw: bytes):
    with scratch() as run:
        path = run / layout.METRICS_FILE
        path.write_bytes(raw)
        records = read_or_refuse(lambda: read_metrics(run), path)
        if records is None:
            return
        assert all(isinstance(r, dict) for r in records)
        read_or_refuse(lambda: last_good(run), path)
        read_or_refuse(lambda: forget_metrics_after(run, 2), path)
        assert not no_leftovers(run)


@settings(FUZZ, max_examples=min(FUZZ.max_examples, 8))  # a figure takes a while to draw
@given(metrics_files())
@example(json.dumps({k: v for k, v in TRAIN.items() if k != "lr"}).encode() + b"\n")
def test_plot_metrics(raw: bytes):
    with scratch() as run:
        path = run / layout.METRICS_FILE
        path.write_bytes(raw)
        figure = read_or_refuse(lambda: metrics_figure(run), path)
        if figure is not None:
            import matplotlib.pyplot as plt

            plt.close(figure)
