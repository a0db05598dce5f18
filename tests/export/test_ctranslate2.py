"""Export to CTranslate2: its Translator gives our translations on our own weights."""

import shutil

import pytest
import torch

from aiayn.cli import main
from aiayn.config import DecodeConfig, EngineConfig
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.translate import load_model, translate_lines
from aiayn.engines.ctranslate2 import CTranslate2Translator
from aiayn.evaluate.scores import score
from aiayn.export.ctranslate2 import export_ctranslate2
from tests.conftest import perturb_vectors, tiny_model


@pytest.fixture(scope="module")
def exported(tiny_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("ct2") / "model"
    assert main(["export", str(tiny_run), "--format", "ctranslate2", "--out", str(out)]) == 0
    return out


def test_greedy_translations_of_the_test_split_are_ours(tiny_run, tiny_data, exported, tmp_path):
    src = tiny_data / "test.src.txt"
    for engine, model in (("aiayn", tiny_run), ("ctranslate2", exported)):
        assert (
            main(
                [
                    "translate",
                    "--model",
                    str(model),
                    "--engine",
                    engine,
                    "--beam",
                    "1",
                    "--no-repeat-ngram",  # the run's close may have chosen a guard for ours
                    "0",
                    "--stutter-guard",
                    "0",
                    "--input",
                    str(src),
                    "--output",
                    str(tmp_path / engine),
                ]
            )
            == 0
        )
    ours = (tmp_path / "aiayn").read_text().splitlines()
    theirs = (tmp_path / "ctranslate2").read_text().splitlines()
    assert len(ours) == len(src.read_text().splitlines()) > 10
    same = sum(a == b for a, b in zip(ours, theirs, strict=True))
    assert same >= 0.99 * len(ours), list(zip(ours, theirs, strict=True))


def test_beam_bleu_matches_ours_with_the_power_penalty(tiny_run, tiny_data, exported):
    lines = (tiny_data / "test.src.txt").read_text().splitlines()
    refs = [(tiny_data / "test.tgt.txt").read_text().splitlines()]
    opts = DecodeConfig(beam=4, length_penalty="power", alpha=0.6)
    model, tokenizer = load_model(tiny_run)
    ours = score(translate_lines(model, tokenizer, lines, opts), refs)
    theirs = score(CTranslate2Translator(exported).translate(lines, opts), refs)
    assert abs(ours.bleu - theirs.bleu) <= 0.2


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"norm_first": True, "activation": "gelu", "positional": "concatenated"},
        {"tie_embeddings": False, "activation": "swish"},
    ],
    ids=["paper", "pre-norm-gelu-concatenated", "untied-swish"],
)
def test_layouts_survive_the_export(layout, tiny_run, tiny_data, tmp_path):
    """Random weights (moved off their initial values) decode alike in both engines, to the
    length limit: a misplaced position table, norm or activation would show at once."""
    model = tiny_model(seed=1, **layout)
    perturb_vectors(model, 0.5)
    model.save(tmp_path / "ours")
    shutil.copyfile(tiny_data / "spm.model", tmp_path / "ours" / "spm.model")
    export_ctranslate2(tmp_path / "ours", tmp_path / "ct2")
    lines = (tiny_data / "test.src.txt").read_text().splitlines()
    opts = DecodeConfig(beam=1, max_len_b=7)
    with torch.no_grad():
        ours = translate_lines(model, Tokenizer(tiny_data), lines, opts)
    assert CTranslate2Translator(tmp_path / "ct2").translate(lines, opts) == ours
    assert len(set(ours)) > 1


def test_the_gnmt_penalty_is_refused_by_name(exported, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("The dog sees a cat.\n")
    assert (
        main(
            [
                "translate",
                "--model",
                str(exported),
                "--engine",
                "ctranslate2",
                "--input",
                str(tmp_path / "in.txt"),
                "--length-penalty",
                "gnmt",
            ]
        )
        == 2
    )
    assert "--length-penalty power" in capsys.readouterr().err
    assert (
        main(
            [
                "translate",
                "--model",
                str(tmp_path),
                "--engine",
                "ctranslate2",
                "--input",
                str(tmp_path / "in.txt"),
            ]
        )
        == 2
    )
    assert "model.bin: missing" in capsys.readouterr().err


def test_serve_with_the_ctranslate2_engine(exported):
    from fastapi.testclient import TestClient

    from aiayn.serve.app import create_app

    texts = ["The dog sees a cat.", "The old man reads a book."]
    expected = CTranslate2Translator(exported).translate(
        texts, DecodeConfig(beam=2, length_penalty="power")
    )
    with TestClient(create_app(exported, engine=EngineConfig(engine="ctranslate2"))) as client:
        got = client.post("/translate", json={"text": texts, "beam": 2}).json()["translations"]
        assert [g["text"] for g in got] == expected
        refused = client.post("/translate", json={"text": texts[0], "attention": True})
        assert refused.status_code == 422 and "--engine aiayn" in refused.json()["detail"]
