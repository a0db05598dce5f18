import json

import pytest
import torch

from aiayn import Transformer
from tests.conftest import TEST_DEVICE, padded_batch, tiny_model


@pytest.mark.parametrize("changes", [{}, {"tie_embeddings": False, "norm_first": True}])
def test_round_trip_reproduces_outputs_exactly(tmp_path, changes):
    model = tiny_model(seed=31, **changes)
    model.save(tmp_path / "model")
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == [
        "config.json",
        "model.safetensors",
    ]
    loaded = Transformer.load(tmp_path / "model", device=TEST_DEVICE).eval()
    assert loaded.cfg == model.cfg
    src = padded_batch([6, 4], model.cfg, seed=1)
    tgt_in = padded_batch([5, 3], model.cfg, seed=2, start_with_bos=True)
    with torch.no_grad():
        assert torch.equal(loaded(src, tgt_in), model(src, tgt_in))
    for (name, a), (_, b) in zip(
        model.state_dict().items(), loaded.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_the_weights_file_is_safetensors_not_pickle(tmp_path):
    tiny_model().save(tmp_path)
    header_size = int.from_bytes((tmp_path / "model.safetensors").read_bytes()[:8], "little")
    header = json.loads((tmp_path / "model.safetensors").read_bytes()[8 : 8 + header_size])
    assert "src_embed.weight" in header
    assert not (tmp_path / "model.safetensors").read_bytes().startswith(b"\x80")  # pickle magic


def test_no_temporary_files_are_left_behind(tmp_path):
    tiny_model().save(tmp_path)
    tiny_model(seed=2).save(tmp_path)  # overwrite in place
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json: no model config here"):
        Transformer.load(tmp_path)
    model = tiny_model()
    model.save(tmp_path)
    config = tmp_path / "config.json"
    values = json.loads(config.read_text())
    config.write_text(json.dumps({**values, "d_modle": 3}))
    unknown = r"config\.json: unknown ModelConfig key\(s\) \['d_modle'\]"
    with pytest.raises(ValueError, match=unknown):
        Transformer.load(tmp_path)
    config.write_text(json.dumps({**values, "d_ff": 128}))
    with pytest.raises(ValueError, match=r"model\.safetensors: does not match"):
        Transformer.load(tmp_path)
    config.write_text("{not json")
    with pytest.raises(ValueError, match=r"config\.json, line 1 column 2: not valid JSON"):
        Transformer.load(tmp_path)
    config.write_text(json.dumps(values))
    (tmp_path / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"model\.safetensors: not a readable safetensors file"):
        Transformer.load(tmp_path)
