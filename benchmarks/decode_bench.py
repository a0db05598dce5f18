"""Decoding throughput against Hugging Face `generate` and CTranslate2: like with like.

    .venv/bin/pip install -e ".[bench]"       # ctranslate2, benchmark-only
    .venv/bin/python benchmarks/decode_bench.py [--data data/en-de] [--repeats 5] [--out-len 50]

The `small` preset with random weights, the same weights for every system: aiayn loads them from
a model directory, Hugging Face holds them in a `MarianMTModel` (its default attention
implementation), and CTranslate2 converts that Marian model. Every system decodes exactly
`--out-len` tokens per sentence (end of sentence held back, then forced), so random weights
serve; greedy and beam 4, batch 1 and 32, 30-token sources.

Every timing is taken in a fresh child process that loads its system, warms it up on the same
batch and times one run of each configuration; the parent imports neither torch nor
CTranslate2 and only waits, so no idle thread pool of another library spins beside the one
being timed. The systems take turns (the order rotates each round), and each is timed
`--repeats` times: median and min-max. Printed with the CPU model, threads, versions and the
load average before each round (a shared host shows there).

`--compile` systems compile their steps in the set-up (about 20 s per precision and beam
width); every timed child loads them from disk, so the timings hold no compiling.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.machine import cpu_model

CONFIGS = [(1, 1), (1, 4), (32, 1), (32, 4)]  # (batch, beam)

# name -> (kind, precision, environment); CTranslate2 entries: (intra_threads, inter_threads).
SYSTEMS: dict[str, tuple[str, str, dict]] = {
    "aiayn fp32": ("aiayn", "fp32", {}),
    "aiayn bf16": ("aiayn", "bf16", {}),
    "aiayn int8": ("aiayn", "int8", {}),
    # --compile: the decoder step compiled ahead of time (int8: weight-only; a dynamic int8 encoder)
    "aiayn fp32 --compile": ("aiayn", "fp32", {"compile": True}),
    "aiayn bf16 --compile": ("aiayn", "bf16", {"compile": True}),
    "aiayn int8 --compile": ("aiayn", "int8", {"compile": True}),
    "HF generate fp32": ("hf", "fp32", {}),
    "CT2 fp32 2 thr": ("ct2", "float32", {"intra": 2}),
    "CT2 int8 1 thr": ("ct2", "int8", {"intra": 1}),
    "CT2 int8 2 thr": ("ct2", "int8", {"intra": 2}),
    "CT2 int8 2 thr, passive wait": ("ct2", "int8", {"intra": 2, "OMP_WAIT_POLICY": "PASSIVE"}),
    # Our own weights through `aiayn export`: CTranslate2's spec API and ONNX Runtime graphs.
    "aiayn export -> CT2 fp32 2 thr": ("ct2", "float32", {"intra": 2, "dir": "ct2-ours"}),
    "aiayn export -> CT2 int8 1 thr": ("ct2", "int8", {"intra": 1, "dir": "ct2-ours"}),
    "aiayn export -> ONNX Runtime fp32": ("onnx", "fp32", {}),
}
# Side by side in the tables: each aiayn precision with the peer entries of its class.
CLASSES = {
    "fp32": [
        "aiayn fp32",
        "aiayn fp32 --compile",
        "HF generate fp32",
        "CT2 fp32 2 thr",
        "aiayn export -> CT2 fp32 2 thr",
        "aiayn export -> ONNX Runtime fp32",
    ],
    "int8 / bf16": [
        "aiayn int8",
        "aiayn bf16",
        "aiayn int8 --compile",
        "aiayn bf16 --compile",
        "CT2 int8 1 thr",
        "CT2 int8 2 thr",
        "CT2 int8 2 thr, passive wait",
        "aiayn export -> CT2 int8 1 thr",
    ],
}


# -- set-up (a child process): weights, sources, the peers' model directories ---------------


def setup(data: Path, out: Path, src_len: int) -> None:
    """Write the shared weights (aiayn, HF and CTranslate2 forms) and the source batches."""
    import torch

    from aiayn import Transformer, preset
    from aiayn.data.data_dir import DataDir
    from aiayn.data.tokenizer import Tokenizer
    from harness.peers import marian_like

    torch.manual_seed(0)
    tok = Tokenizer(data)
    cfg = preset("small", vocab_size=tok.vocab_size, positional="concatenated")
    model = Transformer(cfg).eval()
    model.save(out / "aiayn")
    marian = marian_like(model)
    marian.save_pretrained(out / "hf")
    ct2_convert(model, DataDir(data).tokenizer, out)
    export_ours(out, DataDir(data).tokenizer)
    compile_steps(out)
    g = torch.Generator().manual_seed(0)
    sources = {}
    for batch in sorted({b for b, _ in CONFIGS}):
        src = torch.randint(4, cfg.vocab_size, (batch, src_len + 1), generator=g)
        src[:, -1] = cfg.eos_id
        pieces = [tok.pieces(row[:-1].tolist()) for row in src]
        sources[batch] = {"ids": src.tolist(), "pieces": pieces}
    (out / "sources.json").write_text(json.dumps(sources))


def compile_steps(out: Path) -> None:
    """The `--compile` systems' steps, compiled once for every child to load."""
    import torch

    from aiayn import Transformer
    from aiayn.decode.compiled import CompiledModel

    for name, (kind, precision, options) in SYSTEMS.items():
        if kind == "aiayn" and options.get("compile"):
            model = Transformer.load(out / "aiayn").eval()
            compiled = CompiledModel.from_float(model, precision, cache_dir=out / "compiled")
            for beam in sorted({beam for _, beam in CONFIGS}):
                with torch.inference_mode():
                    compiled.step(beam)
            print(f"compiled: {name}", file=sys.stderr, flush=True)


def export_ours(out: Path, spm_model: Path) -> None:
    """The same weights exported by `aiayn export`: to CTranslate2 and to ONNX graphs."""
    from aiayn.export.ctranslate2 import export_ctranslate2
    from aiayn.export.onnx import export_onnx

    (out / "aiayn" / "spm.model").write_bytes(Path(spm_model).read_bytes())
    export_ctranslate2(out / "aiayn", out / "ct2-ours")
    export_onnx(out / "aiayn", out / "onnx")


def ct2_convert(model, spm_model: Path, out: Path) -> None:
    """CTranslate2's copy of our weights, through a Hugging Face Marian model in Marian's own
    conventions: padding is an extra last token (the converter drops it), so our V rows come
    first. (CTranslate2 starts decoding from its own start token; with the length fixed, the
    work is the same.)"""
    import torch
    from transformers import MarianMTModel

    from aiayn.data.tokenizer import Tokenizer
    from harness.peers import copy_to_marian, marian_config

    V = model.cfg.vocab_size
    cfg = model.cfg.replace(vocab_size=V + 1)  # padding last, in Marian's way
    config = marian_config(
        cfg,
        activation_function="relu",
        pad_token_id=V,
        decoder_start_token_id=V,
        max_position_embeddings=512,
    )
    marian = MarianMTModel(config).eval()
    padded = type(model)(cfg).eval()
    with torch.no_grad():
        padded.load_state_dict(
            {
                k: torch.cat((v, v[:1] * 0)) if v.shape[:1] == (V,) else v
                for k, v in model.state_dict().items()
            }
        )
    copy_to_marian(padded, marian)
    hf_dir = out / "ct2-hf"
    marian.save_pretrained(hf_dir)
    tok = Tokenizer(spm_model)
    vocab = {p: i for i, p in enumerate(tok.pieces(range(1, V)), 1)} | {"<blank>": 0, "<pad>": V}
    (hf_dir / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    for name in ("source.spm", "target.spm"):
        (hf_dir / name).write_bytes(Path(spm_model).read_bytes())
    (hf_dir / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "en", "target_lang": "de"})
    )
    import ctranslate2

    converter = ctranslate2.converters.TransformersConverter(str(hf_dir))
    converter.convert(str(out / "ct2"), force=True)


# -- one timing (a child process) -----------------------------------------------------------


def runner(system: str, directory: Path, out_len: int):
    """A function (batch, beam) -> a callable that decodes that batch once."""
    kind, precision, options = SYSTEMS[system]
    sources = json.loads((directory / "sources.json").read_text())
    if kind == "ct2":
        import ctranslate2

        translator = ctranslate2.Translator(
            str(directory / options.get("dir", "ct2")),
            device="cpu",
            compute_type=precision,
            intra_threads=options["intra"],
            inter_threads=1,
        )

        def ct2_run(batch: int, beam: int):
            pieces = sources[str(batch)]["pieces"]
            return lambda: translator.translate_batch(
                pieces,
                beam_size=beam,
                max_batch_size=batch,
                min_decoding_length=out_len + 1,
                max_decoding_length=out_len + 1,
                return_scores=False,
            )

        return ct2_run
    import torch

    def ids(batch: int) -> torch.Tensor:
        return torch.tensor(sources[str(batch)]["ids"])

    if kind == "hf":
        from transformers import MarianMTModel

        marian = MarianMTModel.from_pretrained(directory / "hf").eval()  # default attention
        print(f"HF attention: {marian.config._attn_implementation}", file=sys.stderr)

        def hf_run(batch: int, beam: int):
            src = ids(batch)
            return lambda: marian.generate(
                input_ids=src,
                attention_mask=torch.ones_like(src),
                num_beams=beam,
                do_sample=False,
                max_new_tokens=out_len + 1,
                min_new_tokens=out_len + 1,
                early_stopping=True,
            )

        return hf_run
    from aiayn import Transformer
    from aiayn.config import DecodeConfig
    from aiayn.decode.beam import beam_search
    from aiayn.decode.compiled import CompiledModel
    from aiayn.decode.greedy import greedy_decode
    from aiayn.decode.precision import for_decoding

    if kind == "onnx":  # our search over the exported graphs on ONNX Runtime
        from aiayn.engines.onnx import OnnxModel

        model = OnnxModel(directory / "onnx", threads=2)
    else:
        model = Transformer.load(directory / "aiayn").eval()
        if options.get("compile", False):  # compiled in the set-up; loaded from disk here
            model = CompiledModel.from_float(model, precision, cache_dir=directory / "compiled")
        else:
            model = for_decoding(model, precision)

    def aiayn_run(batch: int, beam: int):
        """What `aiayn translate --beam N --precision P [--compile]` runs."""
        src = ids(batch)
        cfg = DecodeConfig(beam=beam, max_len_a=0.0, max_len_b=out_len + 1, min_len=out_len)

        def run():
            with torch.inference_mode():
                if beam == 1:
                    out = greedy_decode(model, src, cfg)
                else:
                    out = [h[0].tokens for h in beam_search(model, src, cfg)]
            assert all(len(x) == out_len for x in out), "not the fixed length"

        return run

    return aiayn_run


def child(system: str, directory: Path, out_len: int) -> None:
    """Print {"batch,beam": seconds} for one system: each configuration warmed up, then timed."""
    make = runner(system, directory, out_len)
    seconds = {}
    for batch, beam in CONFIGS:
        run = make(batch, beam)
        run()  # warm-up
        start = time.perf_counter()
        run()
        seconds[f"{batch},{beam}"] = time.perf_counter() - start
    print(json.dumps(seconds))


# -- the parent: rounds of fresh children, then the tables ---------------------------------


def spawn(args: list[str], env: dict | None = None) -> str:
    here = str(Path(__file__).resolve())
    done = subprocess.run(
        [sys.executable, here, *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""  # the set-up prints nothing


def machine() -> dict:
    """CPU model, cores, versions: printed with every figure."""
    versions = json.loads(spawn(["--versions"]))
    return {"cpu": cpu_model(), "cores": os.cpu_count(), **versions}


def versions() -> None:
    import ctranslate2
    import torch
    import transformers

    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "torch_threads": torch.get_num_threads(),
                "ctranslate2": ctranslate2.__version__,
                "transformers": transformers.__version__,
            }
        )
    )


def measure(directory: Path, systems: list[str], repeats: int, out_len: int) -> dict:
    """{system: {config: [tokens/s per round]}}, and the load average before each round."""
    found: dict[str, dict[str, list[float]]] = {s: {} for s in systems}
    loads = []
    for r in range(repeats):
        loads.append(os.getloadavg()[0])
        order = systems[r % len(systems) :] + systems[: r % len(systems)]  # rotate each round
        for system in order:
            env = {k: v for k, v in SYSTEMS[system][2].items() if k.isupper()}
            seconds = json.loads(
                spawn(["--child", system, "--dir", str(directory), "--out-len", str(out_len)], env)
            )
            for config, s in seconds.items():
                batch = int(config.split(",")[0])
                found[system].setdefault(config, []).append(batch * out_len / s)
            print(f"round {r + 1}/{repeats} {system}: done", file=sys.stderr, flush=True)
    return {"tokens_per_s": found, "load_average_1min": loads}


def table(results: dict, systems: list[str]) -> str:
    """Markdown: target tokens/s, median (min-max), one row per configuration."""
    found = results["tokens_per_s"]
    head = "| batch, beam | " + " | ".join(systems) + " |\n|---|" + "---|" * len(systems) + "\n"
    rows = []
    for batch, beam in CONFIGS:
        cells = []
        for s in systems:
            v = found[s][f"{batch},{beam}"]
            cells.append(f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})")
        name = "greedy" if beam == 1 else f"beam {beam}"
        rows.append(f"| {batch}, {name} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def ratios(results: dict) -> dict:
    """The issue's targets: aiayn's best against CTranslate2's best (any configuration) at
    batch 1, and against CTranslate2 at the same precision class at batch 32, beam 4."""
    med = {
        s: {c: statistics.median(v) for c, v in d.items()}
        for s, d in results["tokens_per_s"].items()
    }
    ct2 = [s for s in med if s.startswith("CT2")]
    ours = [s for s in med if SYSTEMS[s][0] == "aiayn"]  # our own decoding, not the exports
    out = {}
    if not ct2 or not ours:
        return out
    for config in ("1,1", "1,4", "32,4"):
        best_ct2 = max(ct2, key=lambda s: med[s][config])
        best_ours = max(ours, key=lambda s: med[s][config])
        out[config] = {
            "best aiayn": best_ours,
            "best CT2": best_ct2,
            "ratio": round(med[best_ours][config] / med[best_ct2][config], 2),
        }
    for members in CLASSES.values():
        peers = [s for s in members if s in ct2]
        for s in (m for m in members if m in med and m not in ct2 and peers):
            best = max(peers, key=lambda p: med[p]["32,4"])
            out[f"32,4 {s} vs {best}"] = round(med[s]["32,4"] / med[best]["32,4"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/en-de"), help="for spm.model")
    parser.add_argument("--src-len", type=int, default=30)
    parser.add_argument("--out-len", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--setup", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=list(SYSTEMS), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--versions", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.versions:
        return versions()
    if args.setup is not None:
        return setup(args.data, args.setup, args.src_len)
    if args.child is not None:
        return child(args.child, args.dir, args.out_len)
    info = machine()
    with tempfile.TemporaryDirectory() as tmp:
        spawn(["--setup", tmp, "--data", str(args.data), "--src-len", str(args.src_len)])
        results = measure(Path(tmp), args.systems, args.repeats, args.out_len)
    results |= {
        "machine": info,
        "repeats": args.repeats,
        "out_len": args.out_len,
        "src_len": args.src_len,
        "ratios": ratios(results),
    }
    print(
        f"{info['cpu']}, {info['cores']} cores; torch {info['torch']} "
        f"({info['torch_threads']} threads), ctranslate2 {info['ctranslate2']}, transformers "
        f"{info['transformers']}; load average before each round: "
        f"{results['load_average_1min']}"
    )
    print(f"target tokens/s, median (min-max) of {args.repeats}, each in a fresh process:")
    for cls, members in CLASSES.items():
        print(f"\n{cls}:\n" + table(results, [s for s in members if s in args.systems]))
    print(json.dumps(results["ratios"], indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
