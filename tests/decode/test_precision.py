"""Decoding precisions: int8 (dynamic int8 linear layers) and bf16 against fp32."""

import copy
from functools import partial

import pytest
import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

from aiayn import Transformer, preset
from aiayn.decode.greedy import greedy_decode
from aiayn.decode.precision import for_decoding
from aiayn.train.loss import label_smoothed_loss
from aiayn.train.schedule import learning_rate
from tests.conftest import padded_batch, seeded, tiny_model


def copy_batch(g: torch.Generator, n: int, cfg):
    """Random sequences to copy: (n, L) sources ending in eos, decoder inputs and targets."""
    lengths = torch.randint(3, 8, (n,), generator=g)
    src = torch.full((n, int(lengths.max()) + 1), cfg.pad_id)
    tgt_in = torch.full_like(src, cfg.pad_id)
    for i, m in enumerate(lengths.tolist()):
        src[i, :m], src[i, m] = torch.randint(3, 16, (m,), generator=g), cfg.eos_id
        tgt_in[i, 0], tgt_in[i, 1 : m + 1] = cfg.bos_id, src[i, :m]
    return src, tgt_in, src


def train_copying(steps: int = 400):
    """A tiny model trained to copy its input (one thread: seconds, even on a busy host)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        model = Transformer(preset("tiny", vocab_size=16, dropout=0.0))
        cfg, g = model.cfg, seeded(1)
        opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        rate = partial(learning_rate, d_model=cfg.d_model, warmup=40, scale=1.0)
        schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: rate(step + 1))
        for _ in range(steps):
            src, tgt_in, tgt_out = copy_batch(g, 32, cfg)
            loss, _ = label_smoothed_loss(model(src, tgt_in), tgt_out, 0.0, cfg.pad_id)
            opt.zero_grad()
            (loss / (tgt_out != cfg.pad_id).sum()).backward()
            opt.step()
            schedule.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval()


def test_int8_picks_the_same_greedy_tokens_as_fp32_on_a_trained_model(on_cpu):
    model = train_copying()
    cfg = model.cfg
    src, _, tgt_out = copy_batch(seeded(98), 48, cfg)
    fp32 = greedy_decode(model, src)
    int8 = greedy_decode(for_decoding(copy.deepcopy(model), "int8"), src)
    expected = [[t for t in row if t not in (cfg.pad_id, cfg.eos_id)] for row in tgt_out.tolist()]
    assert sum(h == e for h, e in zip(fp32, expected, strict=True)) >= 36, "not trained enough"
    assert len({tuple(h) for h in fp32}) > 36  # the outputs differ: agreement means something
    assert sum(a == b for a, b in zip(fp32, int8, strict=True)) >= 43  # most of 48 (9 in 10)


def test_int8_quantizes_the_linear_layers_and_the_output_projection(on_cpu):
    model = tiny_model(seed=3)
    embedding = model.src_embed.weight.detach().clone()
    int8 = for_decoding(copy.deepcopy(model), "int8")
    quantized = {n for n, m in int8.named_modules() if isinstance(m, DynamicLinear)}
    floats = {n for n, m in int8.named_modules() if type(m) is nn.Linear}
    assert "out_proj" in quantized and "decoder_layers.0.ffn.w_1" in quantized
    assert "encoder_layers.1.self_attn.w_qkv" in quantized
    assert floats == {f"decoder_layers.{i}.cross_attn.w_qkv" for i in range(2)}
    torch.testing.assert_close(int8.src_embed.weight, embedding, rtol=0, atol=0)  # lookups
    src = padded_batch([6, 3], model.cfg, seed=4)
    tgt = padded_batch([5, 5], model.cfg, seed=5, start_with_bos=True)
    with torch.no_grad():
        ref, got = model(src, tgt), int8(src, tgt)
    assert (got - ref).abs().max() < 0.05 * ref.abs().max()  # close, but int8 rounding shows
    assert not torch.equal(got, ref)


def test_bf16_and_unknown_precisions():
    model = for_decoding(tiny_model(), "bf16")
    assert model.src_embed.weight.dtype == torch.bfloat16
    assert for_decoding(tiny_model(), "fp32").src_embed.weight.dtype == torch.float32
    with pytest.raises(ValueError, match=r"precision 'int4': choose one of \('fp32'"):
        for_decoding(tiny_model(), "int4")
