"""Can a whole greedy search be one compiled call? A toy decoder layer's greedy loop as one
AOTInductor package (`torch.while_loop`), against a Python loop calling a compiled step.

    .venv/bin/python experiments/decode_compile/greedy_loop.py

One decoder layer of the student's shape (d 256, 4 heads, FFN 1024) over a 600-piece output
layer (a shortlist's cut), float32, batch 1, 32 source positions, a cache of 80 steps, 60 steps
decoded; one thread. The cache is carried through the loop and written functionally (a select
against the position), so the loop body mutates nothing. Checks that both agree with the eager
loop, then times them taking turns: us a step.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch._higher_order_ops import while_loop

D, HEADS, FFN, V, C, S, STEPS, EOS = 256, 4, 1024, 600, 80, 32, 60, 1


class Layer(nn.Module):
    """One pre-norm decoder layer and its output projection, on a fixed-size cache."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.cross_q, self.cross_o = nn.Linear(D, D), nn.Linear(D, D)
        self.ff1, self.ff2, self.out = nn.Linear(D, FFN), nn.Linear(FFN, D), nn.Linear(D, V)
        self.norms = nn.ModuleList(nn.LayerNorm(D) for _ in range(3))

    def step(self, token: Tensor, t: Tensor, k: Tensor, v: Tensor, memory: tuple[Tensor, Tensor]):
        """(B,) tokens at step t -> (B, V) logits and the cache (B, H, C, Dh) with step t in."""
        B = token.shape[0]

        def heads(x: Tensor) -> Tensor:
            return x.view(B, 1, HEADS, -1).transpose(1, 2)  # (B, H, 1, Dh)

        x = self.embed(token)[:, None]  # (B, 1, D)
        q, k_t, v_t = (heads(y) for y in self.qkv(self.norms[0](x)).split(D, -1))
        here = (torch.arange(C) == t)[None, None, :, None]  # (1, 1, C, 1)
        k, v = torch.where(here, k_t, k), torch.where(here, v_t, v)
        seen = (torch.arange(C) <= t)[None, None, None, :]  # (1, 1, 1, C)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=seen)
        x = x + self.o(a.transpose(1, 2).reshape(B, 1, D))
        q = heads(self.cross_q(self.norms[1](x)))
        a = F.scaled_dot_product_attention(q, *memory)
        x = x + self.cross_o(a.transpose(1, 2).reshape(B, 1, D))
        x = x + self.ff2(torch.relu(self.ff1(self.norms[2](x))))
        return self.out(x)[:, 0], k, v


class WholeLoop(nn.Module):
    """The greedy loop: until every row emitted eos or n steps."""

    def __init__(self, layer: Layer) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, token, k, v, memory_k, memory_v, out, n):
        def going(t, token, k, v, out, done):
            return (t < n) & ~done

        def body(t, token, k, v, out, done):
            logits, k, v = self.layer.step(token, t, k, v, (memory_k, memory_v))
            best = logits.argmax(-1)  # (B,)
            out = torch.where((torch.arange(out.shape[1]) == t)[None, :], best[:, None], out)
            return t + 1, best, k, v, out, (best == EOS).all()

        start = (torch.zeros((), dtype=torch.long), token, k, v, out, torch.zeros((), dtype=bool))
        return while_loop(going, body, start)[4]  # (B, C) the outputs


class OneStep(nn.Module):
    def __init__(self, layer: Layer) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, token, t, k, v, memory_k, memory_v):
        logits, k, v = self.layer.step(token, t, k, v, (memory_k, memory_v))
        return logits.argmax(-1), k, v


def compiled(module: nn.Module, args: tuple, path: str) -> Callable:
    program = torch.export.export(module, args)
    return torch._inductor.aoti_load_package(
        torch._inductor.aoti_compile_and_package(program, package_path=path)
    )


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layer = Layer().eval()
    with torch.no_grad():
        layer.out.bias[EOS] = -100.0  # decode all STEPS steps
    dh = D // HEADS
    token = torch.tensor([2])
    cache = (torch.zeros(1, HEADS, C, dh), torch.zeros(1, HEADS, C, dh))
    memory = (torch.randn(1, HEADS, S, dh), torch.randn(1, HEADS, S, dh))
    out, n = torch.zeros(1, C, dtype=torch.long), torch.tensor(STEPS)
    where = tempfile.mkdtemp()
    with torch.no_grad():
        started = time.perf_counter()
        loop_args = (token, *cache, *memory, out, n)
        loop = compiled(WholeLoop(layer), loop_args, f"{where}/loop.pt2")
        print(f"the loop compiled in {time.perf_counter() - started:.0f} s")
        step = compiled(OneStep(layer), (token, torch.tensor(0), *cache, *memory), f"{where}/s.pt2")

        def python_loop() -> Tensor:
            best, k, v, found = token, *cache, []
            for t in range(STEPS):
                best, k, v = step(best, torch.tensor(t), k, v, *memory)
                found.append(best)
            return torch.stack(found, 1)

        got = loop(*loop_args)
        print("the loop agrees with eager:", torch.equal(WholeLoop(layer)(*loop_args), got))
        print("the Python loop agrees:", torch.equal(python_loop(), got[:, :STEPS]))
        systems = {"one call, the whole loop": lambda: loop(*loop_args), "Python loop": python_loop}
        for _ in range(3):
            for name, run in systems.items():
                for _ in range(3):
                    run()
                start = time.perf_counter()
                for _ in range(20):
                    run()
                print(f"{name}: {(time.perf_counter() - start) / 20 / STEPS * 1e6:.0f} us a step")


if __name__ == "__main__":
    main()
