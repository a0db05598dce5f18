"""One way to open a translator: `aiayn translate`, `aiayn evaluate` and the server give, for
every engine, the lines the Python API gives."""

import shutil

import pytest
import torch
from fastapi.testclient import TestClient

from aiayn import DecodeConfig, EngineConfig, open_translator
from aiayn.cli import main
from aiayn.evaluate.scores import score
from aiayn.serve.app import create_app
from tests.conftest import tiny_model

ENGINES = ("aiayn", "ctranslate2", "onnx")
# A search every engine can run (CTranslate2 has no GNMT penalty), outputs of up to 6 tokens
SEARCH = DecodeConfig(beam=2, length_penalty="power", max_len_a=0.0, max_len_b=6)
SEARCH_FLAGS = ["--beam", "2", "--length-penalty", "power", "--max-len-a", "0", "--max-len-b", "6"]


@pytest.fixture(scope="module")
def models(tiny_data, tmp_path_factory):
    """Each engine's directory: a model of random weights, scrambled so that sentences get
    outputs of their own (an untrained or initial model says the same to all), and its two
    exports."""
    out = tmp_path_factory.mktemp("engines")
    model = tiny_model(seed=2, d_model=64)
    with torch.no_grad():
        for weight in model.parameters():
            weight.add_(torch.randn_like(weight) * 0.5)
    model.save(out / "aiayn")
    shutil.copyfile(tiny_data / "spm.model", out / "aiayn" / "spm.model")
    for fmt in ("ctranslate2", "onnx"):
        assert main(["export", str(out / "aiayn"), "--format", fmt, "--out", str(out / fmt)]) == 0
    return {engine: out / engine for engine in ENGINES}


@pytest.fixture(scope="module")
def lines(tiny_data):
    """Test sentences with an empty line among them, and their references."""
    sources = (tiny_data / "test.src.txt").read_text(encoding="utf-8").splitlines()[:12]
    refs = (tiny_data / "test.tgt.txt").read_text(encoding="utf-8").splitlines()[:12]
    return [*sources[:5], "", *sources[5:]], [*refs[:5], "", *refs[5:]]


@pytest.mark.parametrize("engine", ENGINES)
def test_translate_and_evaluate_give_the_python_apis_lines(engine, models, lines, tmp_path, capsys):
    sources, refs = lines
    translator = open_translator(models[engine], engine=engine)
    expected = translator.translate(sources, SEARCH)
    assert expected[5] == "" and all(expected[:5] + expected[6:])
    assert len(set(expected)) > len(sources) // 2  # a wrong line order would show
    (tmp_path / "src.txt").write_text("".join(s + "\n" for s in sources), encoding="utf-8")
    (tmp_path / "ref.txt").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    model = ["--model", str(models[engine]), "--engine", engine, *SEARCH_FLAGS]
    out = tmp_path / "out.txt"
    assert (
        main(["translate", *model, "--input", str(tmp_path / "src.txt"), "--output", str(out)]) == 0
    )
    assert out.read_text(encoding="utf-8").splitlines() == expected

    nbest = translator.nbest(sources, SEARCH.replace(nbest=2))
    assert [line[0].text for line in nbest] == expected
    assert main(["translate", *model, "--nbest", "2", "--input", str(tmp_path / "src.txt")]) == 0
    written = [line.split(" ||| ") for line in capsys.readouterr().out.splitlines()]
    assert [(int(i), text) for i, text, _ in written] == [
        (i, t.text) for i, line in enumerate(nbest) for t in line
    ]

    src, ref = str(tmp_path / "src.txt"), str(tmp_path / "ref.txt")
    assert main(["evaluate", *model, "--src-file", src, "--ref-file", ref]) == 0
    assert f"BLEU {score(expected, [refs]).bleu:.2f} " in capsys.readouterr().out


@pytest.mark.parametrize("engine", ENGINES)
def test_the_server_gives_the_python_apis_lines(engine, models, lines):
    sources = [s for s in lines[0] if s][:6]
    translator = open_translator(models[engine], EngineConfig(engine=engine))
    expected = translator.nbest(sources, translator.default_search.replace(beam=2, nbest=2))
    with TestClient(create_app(models[engine], engine=EngineConfig(engine=engine))) as client:
        got = client.post("/translate", json={"text": sources, "beam": 2, "nbest": 2})
        assert got.status_code == 200, got.text
        items = got.json()["translations"]
        assert [item["text"] for item in items] == [line[0].text for line in expected]
        assert [[n["text"] for n in item["nbest"]] for item in items] == [
            [t.text for t in line] for line in expected
        ]
        attention = client.post("/translate", json={"text": sources[0], "attention": True})
    if engine == "aiayn":
        assert attention.status_code == 200 and attention.json()["translations"][0]["attention"]
    else:  # the engine says why it cannot, and what to use
        assert attention.status_code == 422 and "--engine aiayn" in attention.json()["detail"]


def test_options_an_engine_cannot_honour_are_refused_before_anything_loads(models):
    with pytest.raises(ValueError, match="--compile is for our own engine"):
        open_translator(models["onnx"], engine="onnx", compile=True)
    with pytest.raises(ValueError, match="decodes in float32; drop --precision"):
        open_translator(models["ctranslate2"], engine="ctranslate2", precision="bf16")
    with pytest.raises(ValueError, match="unknown engine 'marian'"):
        open_translator(models["aiayn"], engine="marian")
    with pytest.raises(ValueError, match="unknown EngineConfig key"):
        open_translator(models["aiayn"], beam=4)  # a search option, not how to open


def test_our_engines_threads_are_pytorchs(models, lines):
    """`threads` of our engine sets PyTorch's threads (the process's), and the translations do
    not depend on them."""
    before = torch.get_num_threads()
    default = open_translator(models["aiayn"]).translate(lines[0], SEARCH)
    try:
        one = open_translator(models["aiayn"], threads=1)
        assert torch.get_num_threads() == 1
        assert one.translate(lines[0], SEARCH) == default
    finally:
        torch.set_num_threads(before)
