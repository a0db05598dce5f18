import pytest

from aiayn.config import PRESETS, ModelConfig, preset


def test_defaults_are_the_papers_base_model():
    cfg = ModelConfig()
    assert (cfg.d_model, cfg.d_ff, cfg.n_heads, cfg.d_head) == (512, 2048, 8, 64)
    assert (cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.dropout) == (6, 6, 0.1)
    assert cfg.norm_first is False and cfg.activation == "relu"
    assert cfg.tie_embeddings is True and cfg.positional == "interleaved"


def test_presets():
    big = PRESETS["big"]
    assert (big.d_model, big.d_ff, big.n_heads, big.dropout) == (1024, 4096, 16, 0.3)
    small = PRESETS["small"]
    assert (small.n_encoder_layers, small.n_decoder_layers) == (3, 3)
    assert (small.d_model, small.n_heads, small.d_ff) == (256, 4, 1024)
    assert preset("base", vocab_size=1000).vocab_size == 1000


def test_config_is_frozen():
    with pytest.raises(AttributeError):
        setattr(ModelConfig(), "d_model", 3)  # noqa: B010 (an assignment mypy would reject)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"d_model": 30, "n_heads": 4}, "not divisible"),
        ({"activation": "tanh"}, "activation='tanh'"),
        ({"positional": "learned"}, "positional='learned'"),
        ({"pad_id": 5, "vocab_size": 4}, "outside the vocabulary"),
        ({"bos_id": 0}, "must differ"),
        ({"dropout": 1.5}, "dropout must be in"),
    ],
)
def test_invalid_configs_say_why(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**changes)


def test_unknown_keys_are_rejected_with_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown ModelConfig key\(s\) \['d_modle'\].*d_model"):
        ModelConfig().replace(d_modle=3)
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        preset("huge")
