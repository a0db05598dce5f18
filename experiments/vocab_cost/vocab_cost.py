"""What a larger vocabulary costs in decoding: the same `small` model at two output sizes.

    .venv/bin/python experiments/vocab_cost/vocab_cost.py --vocab 8000 32000 [--repeats 5] \
        [--out-len 50] [--precisions 'aiayn fp32' 'aiayn bf16']

A multilingual model needs a larger joint vocabulary than a bilingual one (issue 31), so its
embedding and output layers grow: every decoding step multiplies the decoder's output by a
d_model x V matrix and takes a softmax over V. This times `aiayn translate`'s own search
(`benchmarks/decode_bench.py`'s children: random weights, a fixed output length, greedy and beam
4 at batch 1 and 32, 30-token sources) for each vocabulary size, in fresh child processes, the
sizes and precisions interleaved (the order rotates each round), `--repeats` rounds: target
tokens/s, median (min-max). It also prints the share of a step's multiply-adds that the output
layer takes at each size, which is what the measured difference should follow.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # decode_bench times it

from decode_bench import CONFIGS, machine, spawn

PRECISIONS = ["aiayn fp32", "aiayn bf16"]


def setup(vocab: int, out: Path, src_len: int) -> None:
    """A `small` model of `vocab` pieces with random weights, and random sources (a child)."""
    import torch

    from aiayn import Transformer, preset

    torch.manual_seed(0)
    cfg = preset("small", vocab_size=vocab, positional="concatenated")
    Transformer(cfg).eval().save(out / "aiayn")
    g = torch.Generator().manual_seed(0)
    sources = {}
    for batch in sorted({b for b, _ in CONFIGS}):
        src = torch.randint(4, vocab, (batch, src_len + 1), generator=g)
        src[:, -1] = cfg.eos_id
        sources[batch] = {"ids": src.tolist()}
    (out / "sources.json").write_text(json.dumps(sources))


def output_share(vocab: int, src_len: int) -> float:
    """The output layer's share of one decoder step's multiply-adds per beam row (the `small`
    preset's shapes; self-attention over half the output, cross-attention over the source)."""
    from aiayn import preset

    cfg = preset("small", vocab_size=vocab)
    d, ff, layers = cfg.d_model, cfg.d_ff, cfg.n_decoder_layers
    per_layer = 4 * d * d + 4 * d * d + 2 * d * ff  # self- and cross-attention, feed-forward
    per_layer += 2 * d * (25 + src_len)  # attention scores and sums, about 25 earlier tokens
    return d * vocab / (layers * per_layer + d * vocab)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, nargs="+", default=[8000, 32000])
    parser.add_argument("--src-len", type=int, default=30)
    parser.add_argument("--out-len", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--precisions", nargs="+", default=PRECISIONS, choices=PRECISIONS, help="systems to time"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--setup", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--setup-vocab", type=int, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.setup:
        setup(a.setup_vocab, a.setup, a.src_len)
        return
    info = machine()
    print(json.dumps(info), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {v: Path(tmp) / str(v) for v in a.vocab}
        for v, d in dirs.items():
            here = str(Path(__file__).resolve())
            done = os.spawnv(
                os.P_WAIT,
                sys.executable,
                [sys.executable, here, "--setup", str(d), "--setup-vocab", str(v)],
            )
            if done:
                sys.exit(f"set-up for vocabulary {v} failed")
        runs = [(v, s) for v in a.vocab for s in a.precisions]
        found: dict = {f"{s} V={v}": {} for v, s in runs}
        loads = []
        for r in range(a.repeats):
            loads.append(os.getloadavg()[0])
            for v, system in runs[r % len(runs) :] + runs[: r % len(runs)]:
                args = ["--child", system, "--dir", str(dirs[v]), "--out-len", str(a.out_len)]
                for config, s in json.loads(spawn(args)).items():
                    batch = int(config.split(",")[0])
                    found[f"{system} V={v}"].setdefault(config, []).append(batch * a.out_len / s)
            print(f"round {r + 1}/{a.repeats} done", file=sys.stderr, flush=True)
    print(table(found))
    shares = {v: round(output_share(v, a.src_len), 3) for v in a.vocab}
    print("output layer's share of a decoder step's multiply-adds:", shares)
    if a.json:
        result = {"machine": info, "tokens_per_s": found, "load_average_1min": loads}
        a.json.write_text(json.dumps(result | {"output_share": shares}, indent=2) + "\n")


def table(found: dict) -> str:
    """Markdown: target tokens/s, median (min-max), a row per configuration."""
    names = list(found)
    lines = ["| batch, search | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for batch, beam in CONFIGS:
        cells = []
        for name in names:
            v = found[name][f"{batch},{beam}"]
            cells.append(f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})")
        search = "greedy" if beam == 1 else f"beam {beam}"
        lines.append(f"| {batch}, {search} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
