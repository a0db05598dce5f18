"""The figures show the model's own numbers."""

import json

import numpy as np
import pytest
import torch

from aiayn import plot
from aiayn.cli import main
from aiayn.decode.attention_maps import attention_for
from aiayn.decode.translate import load_model
from aiayn.model.positional import sinusoidal_encoding
from aiayn.train.schedule import learning_rate


def test_positional_figure_plots_the_encoding(tmp_path):
    fig = plot.positional_figure(d_model=64, positions=50, dims=(0, 1, 20, 21))
    curves, heat = fig.axes[0], fig.axes[1]
    pe = sinusoidal_encoding(torch.arange(50), 64).numpy()
    for line, d in zip(curves.lines, (0, 1, 20, 21), strict=True):
        np.testing.assert_allclose(line.get_ydata(), pe[:, d])
    np.testing.assert_allclose(heat.images[0].get_array(), pe)
    assert plot.save(fig, tmp_path / "pe.svg").read_text().startswith("<?xml")


def test_lr_figure_plots_the_schedule(tmp_path):
    fig = plot.lr_figure(d_model=256, warmup=100, scale=2.0, steps=500)
    y = fig.axes[0].lines[0].get_ydata()
    assert y[0] == pytest.approx(learning_rate(1, 256, 100, 2.0))
    assert y[99] == pytest.approx(max(y)) == pytest.approx(learning_rate(100, 256, 100, 2.0))
    assert plot.save(fig, tmp_path / "lr.png").stat().st_size > 1000
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        plot.save(plot.lr_figure(steps=10), tmp_path / "lr.jpg")


def test_metrics_figure_plots_the_log(tmp_path):
    records = [
        {"kind": "train", "step": s, "loss": 5.0 - s / 10, "lr": s * 1e-4, "tokens_per_s": 900 + s}
        for s in (1, 2)
    ]
    records.append({"kind": "valid", "step": 2, "loss": 4.5, "bleu": 3.0, "chrf": 20.0})
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    fig = plot.metrics_figure(tmp_path)
    loss, bleu, lr, speed = fig.axes
    assert list(speed.lines[0].get_ydata()) == [901, 902]
    assert list(loss.lines[0].get_ydata()) == [4.9, 4.8]
    assert list(bleu.lines[0].get_ydata()) == [3.0] and list(lr.lines[0].get_ydata()) == [
        1e-4,
        2e-4,
    ]
    with pytest.raises(FileNotFoundError, match="no metrics"):
        plot.metrics_figure(tmp_path / "none")


def test_attention_plots_are_the_models_weights(tiny_run, tmp_path, capsys):
    run = tiny_run
    model, tokenizer = load_model(run)
    found = attention_for(model, tokenizer, "The dog sees a cat.", beam=2)
    S, T = len(found.source), len(found.target_in)
    assert len(found.cross) == model.cfg.n_decoder_layers and found.cross[0].shape == (T, S)
    assert found.encoder[0].shape == (S, S) and found.decoder[0].shape == (T, T)
    ids = tokenizer.encode(["The dog sees a cat."])[0]
    src = torch.tensor([[*ids, 2]])
    tgt_in = torch.tensor([tokenizer.piece_ids(found.target_in)])  # <s> -> 1
    assert tgt_in[0, 0] == 1
    with torch.no_grad():
        expected = model.attention_maps(src, tgt_in).cross[0][0].mean(0).numpy()
    np.testing.assert_allclose(found.cross[0], expected, atol=1e-6)
    np.testing.assert_allclose(found.cross[0].sum(-1), np.ones(T), atol=1e-5)
    one = attention_for(model, tokenizer, "The dog sees a cat.", beam=2, head=1)
    assert not np.allclose(one.cross[0], found.cross[0])  # one head is not the mean
    capsys.readouterr()
    out = tmp_path / "att.png"
    assert (
        main(["plot", "attention", "The dog sees a cat.", "--model", str(run), "--out", str(out)])
        == 0
    )
    for name in ("encoder", "decoder", "cross"):
        assert (tmp_path / f"att-{name}.png").stat().st_size > 1000
    assert main(["plot", "attention", "x", "--model", str(run), "--head", "9"]) == 2
    assert "heads 0..3" in capsys.readouterr().err
