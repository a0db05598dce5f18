"""aiayn.nn loads torch.nn's state_dicts and computes the same function, for every mask kind;
cached incremental decoding equals the full pass."""

import pytest
import torch
from torch import nn as tnn

from aiayn import nn as ann
from tests.conftest import seeded

D, H, F_, B, S, T = 16, 4, 32, 3, 7, 5
ARGS = {"d_model": D, "nhead": H, "dim_feedforward": F_, "dropout": 0.0}


def pair(norm_first: bool, batch_first: bool, activation: str = "relu"):
    torch.manual_seed(0)
    kw = ARGS | {"norm_first": norm_first, "batch_first": batch_first, "activation": activation}
    theirs = tnn.Transformer(num_encoder_layers=2, num_decoder_layers=2, **kw).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            if p.ndim == 1:  # biases and LayerNorm gains off their initial values
                p.add_(torch.randn_like(p) * 0.2)
    ours = ann.Transformer(num_encoder_layers=2, num_decoder_layers=2, **kw).eval()
    ours.load_state_dict(theirs.state_dict())  # strict: every key and shape the same
    return theirs, ours


def inputs(batch_first: bool):
    g = seeded(1)
    src, tgt = torch.randn(B, S, D, generator=g), torch.randn(B, T, D, generator=g)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[0, 5:], pad[2, 3:] = True, True  # True = padding (PyTorch's convention)
    return (src, tgt, pad) if batch_first else (src.transpose(0, 1), tgt.transpose(0, 1), pad)


def masks():
    causal_bool = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = masked
    bias = torch.randn(T, T, generator=seeded(2))
    return {
        "bool": {"tgt_mask": causal_bool},
        "float": {"tgt_mask": tnn.Transformer.generate_square_subsequent_mask(T) + bias},
        "is_causal": {
            "tgt_mask": tnn.Transformer.generate_square_subsequent_mask(T),
            "tgt_is_causal": True,
        },
        "per-head": {"tgt_mask": causal_bool.repeat(B * H, 1, 1)},
        "none": {},
    }


@pytest.mark.parametrize("mask_kind", list(masks()))
@pytest.mark.parametrize(
    ("norm_first", "batch_first"),
    [(False, False), (True, True)],
    ids=["post-norm-seq-first", "pre-norm-batch-first"],
)
def test_same_outputs_as_torch_nn(mask_kind, norm_first, batch_first):
    theirs, ours = pair(norm_first, batch_first, "gelu" if norm_first else "relu")
    src, tgt, pad = inputs(batch_first)
    kw = masks()[mask_kind] | {"src_key_padding_mask": pad, "memory_key_padding_mask": pad}
    with torch.no_grad():
        expected, got = theirs(src, tgt, **kw), ours(src, tgt, **kw)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


def test_float_key_padding_and_memory_masks():
    theirs, ours = pair(False, True)
    src, tgt, pad = inputs(True)
    float_pad = torch.zeros(B, S).masked_fill(pad, float("-inf"))
    memory_mask = torch.zeros(T, S, dtype=torch.bool)
    memory_mask[:, 1] = True  # no target position may see source position 1
    kw = {
        "src_key_padding_mask": float_pad,
        "memory_mask": memory_mask,
        "memory_key_padding_mask": pad,
    }
    with torch.no_grad():
        torch.testing.assert_close(ours(src, tgt, **kw), theirs(src, tgt, **kw), rtol=0, atol=1e-5)


def test_cached_steps_equal_the_full_causal_pass():
    _, ours = pair(False, True)
    src, tgt, pad = inputs(True)
    with torch.no_grad():
        memory = ours.encoder(src, src_key_padding_mask=pad)
        full = ours.decoder(tgt, memory, tgt_is_causal=True, memory_key_padding_mask=pad)
        cache = ours.decoder.init_cache(memory, memory_key_padding_mask=pad)
        out, cache = ours.decoder.step(tgt[:, :2], cache)  # two at once, then one by one
        steps = [out]
        for t in range(2, T):
            out, cache = ours.decoder.step(tgt[:, t : t + 1], cache)
            steps.append(out)
    assert cache.length == T
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-5)


def test_attention_weights_on_request():
    _, ours = pair(False, True)
    src, tgt, pad = inputs(True)
    with torch.no_grad():
        memory, enc_w = ours.encoder(src, src_key_padding_mask=pad, need_weights=True)
        out, dec_w = ours.decoder(
            tgt, memory, tgt_is_causal=True, memory_key_padding_mask=pad, need_weights=True
        )
    assert len(enc_w) == len(dec_w) == 2 and enc_w[0].shape == (B, H, S, S)
    self_w, cross_w = dec_w[0]
    torch.testing.assert_close(cross_w.sum(-1), torch.ones(B, H, T))
    assert cross_w[0, :, :, 5:].abs().max() == 0  # padding gets no weight
    assert self_w[:, :, 0, 1:].abs().max() == 0  # the first step sees only itself
    torch.testing.assert_close(
        out, ours.decoder(tgt, memory, tgt_is_causal=True, memory_key_padding_mask=pad)
    )


def test_layers_alone_match_and_keys_are_torchs():
    torch.manual_seed(3)
    theirs = tnn.TransformerDecoderLayer(**ARGS, batch_first=True).eval()
    ours = ann.TransformerDecoderLayer(**ARGS, batch_first=True).eval()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    src, tgt, pad = inputs(True)
    causal = tnn.Transformer.generate_square_subsequent_mask(T)
    with torch.no_grad():
        expected = theirs(tgt, src, tgt_mask=causal, memory_key_padding_mask=pad)
        got = ours(tgt, src, tgt_mask=causal, memory_key_padding_mask=pad)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)
