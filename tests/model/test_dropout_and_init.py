"""Dropout where the paper puts it (and nowhere else), and the initialisation."""

import torch
from torch import nn

from aiayn import Transformer, preset
from aiayn.model.dropout import Dropout
from tests.conftest import padded_batch, tiny_model


def count_dropout_calls(model: Transformer, src, tgt_in) -> int:
    calls = []
    hooks = [
        m.register_forward_hook(lambda *_: calls.append(1))
        for m in model.modules()
        if isinstance(m, Dropout | nn.Dropout)
    ]
    model(src, tgt_in)
    for h in hooks:
        h.remove()
    return len(calls)


def test_residual_dropout_on_every_sublayer_and_both_embeddings():
    model = tiny_model(seed=61).train()
    cfg = model.cfg
    src = padded_batch([5, 3], cfg, seed=1)
    tgt_in = padded_batch([4, 4], cfg, seed=2, start_with_bos=True)
    expected = 2 + 2 * cfg.n_encoder_layers + 3 * cfg.n_decoder_layers
    assert count_dropout_calls(model, src, tgt_in) == expected
    assert all(m.p == cfg.dropout for m in model.modules() if isinstance(m, Dropout | nn.Dropout))


def test_attention_dropout_is_off_by_default_and_only_in_training():
    src = padded_batch([6, 4], preset("tiny"), seed=3)
    tgt_in = padded_batch([5, 5], preset("tiny"), seed=4, start_with_bos=True)
    plain = tiny_model(seed=62, dropout=0.0)
    dropped = tiny_model(seed=62, dropout=0.0, attention_dropout=0.5)
    with torch.no_grad():
        torch.testing.assert_close(dropped(src, tgt_in), plain(src, tgt_in), rtol=0, atol=0)
        plain.train()
        dropped.train()
        torch.testing.assert_close(plain(src, tgt_in), plain(src, tgt_in), rtol=0, atol=0)
        assert (dropped(src, tgt_in) - plain(src, tgt_in)).abs().max() > 1e-3


def test_initialisation():
    model = tiny_model(seed=63)
    D = model.cfg.d_model
    embed = model.src_embed.weight
    assert torch.all(embed[model.cfg.pad_id] == 0)
    assert abs(embed[3:].std().item() - D**-0.5) < 0.2 * D**-0.5
    w_q = model.encoder_layers[0].self_attn.w_qkv.weight[:D]
    bound = (6 / (D + D)) ** 0.5  # Xavier-uniform for one D x D matrix, not the stacked 3D x D
    assert w_q.abs().max() <= bound and w_q.abs().max() > 0.9 * bound
    assert torch.all(model.encoder_layers[0].ffn.w_1.bias == 0)


def test_activation_and_word_dropout_are_off_by_default_and_only_in_training():
    src = padded_batch([6, 4], preset("tiny"), seed=5)
    tgt_in = padded_batch([5, 5], preset("tiny"), seed=6, start_with_bos=True)
    plain = tiny_model(seed=64, dropout=0.0)
    assert plain.encoder_layers[0].ffn.inner_dropout is None  # no module, so no call at 0
    for field in ("activation_dropout", "word_dropout"):
        dropped = tiny_model(seed=64, dropout=0.0, **{field: 0.5})
        with torch.no_grad():
            torch.testing.assert_close(dropped(src, tgt_in), plain(src, tgt_in), rtol=0, atol=0)
            plain.train()
            dropped.train()
            assert (dropped(src, tgt_in) - plain(src, tgt_in)).abs().max() > 1e-3, field
            plain.eval()


def test_word_dropout_zeroes_whole_tokens_and_keeps_the_expectation():
    from aiayn.model.dropout import word_dropout

    torch.manual_seed(0)
    e = torch.randn(64, 50, 16)
    out = word_dropout(e, 0.25, training=True)
    zeroed = (out == 0).all(-1)  # (B, L): whole rows or none
    assert ((out == 0) == zeroed.unsqueeze(-1)).all()
    assert abs(zeroed.float().mean().item() - 0.25) < 0.03
    kept = ~zeroed
    torch.testing.assert_close(out[kept], e[kept] / 0.75)
    assert word_dropout(e, 0.25, training=False) is e
