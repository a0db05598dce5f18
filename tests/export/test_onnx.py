"""Export to ONNX: ONNX Runtime gives PyTorch's numbers, step by step on the KV cache, and
`--engine onnx` gives our translations."""

import pytest
import torch

from aiayn.cli import main
from aiayn.engines.onnx import OnnxModel
from aiayn.layout import model_dir
from aiayn.model import Transformer
from tests.conftest import padded_batch


@pytest.fixture(scope="module")
def exported(tiny_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx") / "model"
    assert main(["export", str(tiny_run), "--format", "onnx", "--out", str(out)]) == 0
    return out


def test_encoder_and_ten_cached_steps_match_pytorch(tiny_run, exported):
    ours = Transformer.load(model_dir(tiny_run)).eval()
    onnx = OnnxModel(exported)
    for lengths in ([9], [12, 3, 7]):  # dynamic batch and source length, with padding
        src = padded_batch(lengths, ours.cfg, seed=len(lengths))
        src[torch.arange(len(lengths)), torch.tensor(lengths) - 1] = ours.cfg.eos_id
        with torch.no_grad():
            cache = ours.init_cache(ours.encode(src))
        theirs = onnx.init_cache(onnx.encode(src))
        for mine, other in zip(
            cache.cross_k + cache.cross_v, theirs.cross_k + theirs.cross_v, strict=True
        ):
            torch.testing.assert_close(other, mine, rtol=0, atol=1e-4)
        step = torch.full((len(lengths), 1), ours.cfg.bos_id)
        for _ in range(10):
            with torch.no_grad():
                decoded = ours.decode(step, cache=cache)
            other = onnx.decode(step, cache=theirs)
            torch.testing.assert_close(other.logits, decoded.logits, rtol=0, atol=1e-4)
            cache, theirs = decoded.cache, other.cache
            step = decoded.logits[:, -1].argmax(-1, keepdim=True)  # (B, 1)
        assert theirs.length == 10


@pytest.mark.parametrize("beam", ["1", "3"])
def test_engine_onnx_translates_as_we_do(beam, tiny_run, tiny_data, exported, tmp_path):
    src = tiny_data / "test.src.txt"
    for engine, model in (("aiayn", tiny_run), ("onnx", exported)):
        assert (
            main(
                [
                    "translate",
                    "--model",
                    str(model),
                    "--engine",
                    engine,
                    "--beam",
                    beam,
                    "--nbest",
                    "1",
                    "--max-len-b",
                    "6",
                    "--input",
                    str(src),
                    "--output",
                    str(tmp_path / engine),
                ]
            )
            == 0
        )
    ours = (tmp_path / "aiayn").read_text().splitlines()
    assert (tmp_path / "onnx").read_text().splitlines() == ours
    assert len(ours) == len(src.read_text().splitlines())


def test_graphs_state_their_opset_and_dynamic_axes(exported):
    import onnx

    graph = onnx.load(str(exported / "decoder_step.onnx"))
    assert {o.domain: o.version for o in graph.opset_import}[""] == 18
    dims = {
        i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in graph.graph.input
    }
    assert isinstance(dims["self_k"][3], str) and isinstance(dims["tgt"][0], str)
    assert dims["self_k"][0] == OnnxModel(exported).cfg.n_decoder_layers  # N is fixed


def test_the_export_traces_on_the_cpu_whatever_torchs_default_device(tiny_run, exported, tmp_path):
    """A GPU session's `torch.set_default_device` (here the meta device, which every machine
    has) must not reach the traced graphs: they come out as the ordinary export's."""
    out = tmp_path / "model"
    before = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        assert main(["export", str(tiny_run), "--format", "onnx", "--out", str(out)]) == 0
        assert torch.get_default_device().type == "meta"  # the caller's, given back
    finally:
        torch.set_default_device(before)
    ordinary, traced = OnnxModel(exported), OnnxModel(out)
    src = torch.tensor([[5, 6, 7, ordinary.cfg.eos_id]])
    caches = [m.init_cache(m.encode(src)) for m in (ordinary, traced)]
    step = torch.full((1, 1), ordinary.cfg.bos_id)
    for _ in range(3):  # the decoder graph: its cache write is what a GPU default device broke
        mine, other = ordinary.decode(step, cache=caches[0]), traced.decode(step, cache=caches[1])
        torch.testing.assert_close(other.logits, mine.logits, rtol=0, atol=0)
        caches = [mine.cache, other.cache]
