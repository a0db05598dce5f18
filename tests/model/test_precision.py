"""Training signals and reduced precision."""

import torch
import torch.nn.functional as F

from tests.conftest import TEST_DEVICE, padded_batch, tiny_model


def test_tied_matrix_gets_gradient_from_all_three_uses():
    model = tiny_model(seed=51).train()
    src = padded_batch([5, 3], model.cfg, seed=1)
    tgt_in = padded_batch([4, 4], model.cfg, seed=2, start_with_bos=True)
    logits = model(src, tgt_in)
    F.cross_entropy(logits.flatten(0, 1), tgt_in.flatten()).backward()
    grad = model.src_embed.weight.grad
    assert grad is not None
    used = set(src.flatten().tolist()) | set(tgt_in.flatten().tolist())
    unused = [i for i in range(model.cfg.vocab_size) if i not in used]
    assert grad[unused].abs().sum() > 0  # the output projection touches every row
    assert all(p.grad is not None for p in model.parameters())


def test_bf16_autocast_stays_close_to_fp32(norm_first):
    model = tiny_model(seed=52, norm_first=norm_first)
    src = padded_batch([7, 4], model.cfg, seed=3)
    tgt_in = padded_batch([6, 5], model.cfg, seed=4, start_with_bos=True)
    with torch.no_grad():
        fp32 = model(src, tgt_in)
        with torch.autocast(TEST_DEVICE.type, dtype=torch.bfloat16):
            bf16 = model(src, tgt_in)
            cached = model.decode(tgt_in[:, :1], cache=model.init_cache(model.encode(src))).logits
    assert bf16.dtype == torch.bfloat16
    assert torch.isfinite(bf16).all()
    torch.testing.assert_close(bf16.float(), fp32, rtol=0, atol=0.1)
    torch.testing.assert_close(cached.float(), fp32[:, :1], rtol=0, atol=0.1)
    assert (bf16.float() - fp32).abs().max() > 0  # autocast really ran in bf16


def test_a_bf16_model_keeps_float32_positions():
    model = tiny_model(seed=53)
    src = padded_batch([7, 4], model.cfg, seed=5)
    tgt_in = padded_batch([6, 5], model.cfg, seed=6, start_with_bos=True)
    with torch.no_grad():
        fp32 = model(src, tgt_in)
        bf16 = model.to(torch.bfloat16)
        assert bf16.inv_freq.dtype == torch.float32
        assert bf16.src_embed.weight.dtype == torch.bfloat16
        torch.testing.assert_close(bf16(src, tgt_in).float(), fp32, rtol=0, atol=0.15)
