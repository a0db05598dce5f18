"""A tiny model learns to reverse sequences: the model, loss, schedule and decoding together."""

import torch

from aiayn import Transformer, preset
from aiayn.decode.greedy import greedy_decode
from aiayn.train.loss import label_smoothed_loss
from aiayn.train.schedule import learning_rate
from tests.conftest import seeded


def reverse_batch(g: torch.Generator, n: int, cfg):
    lengths = torch.randint(3, 8, (n,), generator=g)
    L = int(lengths.max())
    src = torch.full((n, L + 1), cfg.pad_id)
    tgt_in = torch.full((n, L + 1), cfg.pad_id)
    tgt_out = torch.full((n, L + 1), cfg.pad_id)
    for i, m in enumerate(lengths.tolist()):
        x = torch.randint(3, 13, (m,), generator=g)
        src[i, :m], src[i, m] = x, cfg.eos_id
        tgt_in[i, 0], tgt_in[i, 1 : m + 1] = cfg.bos_id, x.flip(0)
        tgt_out[i, :m], tgt_out[i, m] = x.flip(0), cfg.eos_id
    return src, tgt_in, tgt_out


def train_reversal(steps: int) -> tuple[Transformer, float]:
    """A tiny model trained to reverse sequences; returns it (in eval mode) and its last nll."""
    torch.manual_seed(0)
    cfg = preset("tiny", vocab_size=16, d_model=64, d_ff=128, dropout=0.0)
    model = Transformer(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98), eps=1e-9)
    g = seeded(1)
    for step in range(1, steps + 1):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, cfg.d_model, warmup=100, scale=0.2)
        src, tgt_in, tgt_out = reverse_batch(g, 64, cfg)
        loss, nll = label_smoothed_loss(model(src, tgt_in), tgt_out, 0.0, cfg.pad_id)
        n_tokens = (tgt_out != cfg.pad_id).sum()
        opt.zero_grad()
        (loss / n_tokens).backward()
        opt.step()
    return model.eval(), (nll / n_tokens).item()


def test_a_tiny_model_learns_to_reverse():
    model, nll = train_reversal(800)
    cfg = model.cfg
    assert nll < 0.05  # near zero (it starts at ln 16 = 2.8)
    src, _, tgt_out = reverse_batch(seeded(99), 32, cfg)
    hyps = greedy_decode(model, src)
    expected = [[t for t in row if t not in (cfg.pad_id, cfg.eos_id)] for row in tgt_out.tolist()]
    assert sum(h == e for h, e in zip(hyps, expected, strict=True)) >= 30
