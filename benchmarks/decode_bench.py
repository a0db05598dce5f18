"""Decoding throughput against Hugging Face `generate` and CTranslate2, in one run.

    .venv/bin/pip install ctranslate2          # benchmark-only
    .venv/bin/python benchmarks/decode_bench.py [--data data/en-de] [--out-len 50]

The `small` preset with random weights; every system decodes exactly `--out-len` tokens per
sentence (end of sentence held back until then, then forced), so random weights serve. The
Hugging Face model is a MarianMTModel of the same shape holding our weights, and CTranslate2
converts that Hugging Face model (its tokenizer files are made from the data's SentencePiece
model). Our own weights also go through `aiayn export`: to CTranslate2 (built with its spec
API) and to ONNX graphs that our search decodes on ONNX Runtime ("aiayn export -> ...").
Reported: sentences/s and target tokens/s, greedy and beam 4, batch 1 and 32.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if not os.environ.get("AIAYN_BENCH_NO_TORCH"):  # the CTranslate2 child process skips these
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.* peers

    from aiayn import Transformer, preset
    from aiayn.data.vocab import Tokenizer
    from aiayn.decode.beam import BeamOptions, beam_search
    from aiayn.decode.greedy import greedy_decode
    from tests.model.test_parity_marian import marian_like


def sources(cfg, n: int, length: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, cfg.vocab_size, (n, length + 1), generator=g)
    src[:, -1] = cfg.eos_id
    return src


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ours(model, src, beam: int, out_len: int):
    """What `aiayn translate --beam N [--precision bf16]` runs (bf16: the weights are cast)."""
    opts = BeamOptions(beam=beam, max_len_a=0.0, max_len_b=out_len + 1, min_len=out_len)

    def run():
        with torch.inference_mode():
            if beam == 1:
                out = greedy_decode(model, src, a=0.0, b=out_len + 1, min_len=out_len)
            else:
                out = [h[0].tokens for h in beam_search(model, src, opts)]
        assert all(len(x) == out_len for x in out), "not the fixed length"

    return run


def hf(marian, src, beam: int, out_len: int):
    def run():
        with torch.inference_mode():
            out = marian.generate(
                input_ids=src, attention_mask=torch.ones_like(src), num_beams=beam,
                do_sample=False, max_new_tokens=out_len + 1, min_new_tokens=out_len + 1,
                early_stopping=True,
            )  # fmt: skip
        assert out.shape[1] >= out_len

    return run


def ctranslate2_model(cfg, spm_model: Path, directory: Path) -> Path:
    """A Hugging Face Marian model of our shape, in Marian's own conventions (padding is an
    extra last token, which CTranslate2's converter removes), converted by CTranslate2."""
    import ctranslate2
    from transformers import MarianConfig, MarianMTModel

    V = cfg.vocab_size
    config = MarianConfig(
        vocab_size=V + 1, d_model=cfg.d_model, encoder_layers=cfg.n_encoder_layers,
        decoder_layers=cfg.n_decoder_layers, encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads, encoder_ffn_dim=cfg.d_ff, decoder_ffn_dim=cfg.d_ff,
        activation_function="relu", scale_embedding=True, pad_token_id=V, eos_token_id=cfg.eos_id,
        decoder_start_token_id=V, max_position_embeddings=512,
    )  # fmt: skip
    hf_dir, ct2_dir = directory / "hf", directory / "ct2"
    MarianMTModel(config).save_pretrained(hf_dir)
    tok = Tokenizer(spm_model)
    vocab = {tok.sp.id_to_piece(i): i for i in range(1, V)} | {"<blank>": 0, "<pad>": V}
    (hf_dir / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    for name in ("source.spm", "target.spm"):
        (hf_dir / name).write_bytes(Path(spm_model).read_bytes())
    (hf_dir / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "en", "target_lang": "de"})
    )
    ctranslate2.converters.TransformersConverter(str(hf_dir)).convert(str(ct2_dir), force=True)
    return ct2_dir


def exported_engines(model, spm_model: Path, directory: Path):
    """Our own weights exported by `aiayn export`: a CTranslate2 directory and ONNX graphs."""
    from aiayn.engines.onnx import OnnxModel
    from aiayn.export.ctranslate2 import export_ctranslate2
    from aiayn.export.onnx import export_onnx

    model.save(directory / "ours")
    (directory / "ours" / "spm.model").write_bytes(Path(spm_model).read_bytes())
    export_onnx(directory / "ours", directory / "onnx")
    return export_ctranslate2(directory / "ours", directory / "ct2-ours"), OnnxModel(
        directory / "onnx", threads=2
    )


def ct2(
    ct2_dir: Path, tokens: list[list[str]], beam: int, out_len: int, compute: str, threads: int
):
    import ctranslate2

    translator = ctranslate2.Translator(
        str(ct2_dir), device="cpu", compute_type=compute, inter_threads=1, intra_threads=threads
    )

    def run():
        out = translator.translate_batch(
            tokens, beam_size=beam, max_batch_size=len(tokens), min_decoding_length=out_len + 1,
            max_decoding_length=out_len + 1, return_scores=False,
        )  # fmt: skip
        assert all(len(r.hypotheses[0]) >= out_len for r in out)

    return run


CT2_CONFIGS = {
    "CTranslate2 fp32 2 threads": ("float32", 2),
    "CTranslate2 int8 1 thread": ("int8", 1),
    "CTranslate2 int8 2 threads": ("int8", 2),
}


def ct2_child(ct2_dir: Path, pieces: list[list[str]], beam: int, out_len: int, repeats: int):
    """CTranslate2's timings, taken in a fresh process: PyTorch's idle OpenMP threads spin for a
    while after each operation and would steal a 2-core machine's second core from it."""
    here = str(Path(__file__).parent)
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {here!r})\n"
        "from decode_bench import ct2, timed, CT2_CONFIGS\n"
        "a = json.load(sys.stdin)\n"
        "out = {}\n"
        "for name, (compute, threads) in CT2_CONFIGS.items():\n"
        "    run = ct2(a['dir'], a['pieces'], a['beam'], a['out_len'], compute, threads)\n"
        "    out[name] = timed(run, a['repeats'])\n"
        "print(json.dumps(out))\n"
    )
    payload = {"dir": str(ct2_dir), "pieces": pieces, "beam": beam, "out_len": out_len,
               "repeats": repeats}  # fmt: skip
    env = {**os.environ, "AIAYN_BENCH_NO_TORCH": "1"}
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(payload), env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/en-de"), help="for spm.model")
    parser.add_argument("--src-len", type=int, default=30)
    parser.add_argument("--out-len", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-hf", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    tok = Tokenizer(args.data)
    cfg = preset("small", vocab_size=tok.vocab_size, positional="concatenated")
    model = Transformer(cfg).eval()
    model_bf16 = copy.deepcopy(model).to(torch.bfloat16)
    marian = marian_like(model).eval()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        ct2_dir = ctranslate2_model(cfg, args.data / "spm.model", Path(tmp))
        ours_ct2_dir, onnx_model = exported_engines(model, args.data / "spm.model", Path(tmp))
        for batch in (1, 32):
            src = sources(cfg, batch, args.src_len)
            pieces = [[tok.sp.id_to_piece(i) for i in row[:-1].tolist()] for row in src]
            for beam in (1, 4):
                n = args.out_len
                runs = {
                    "aiayn fp32": ours(model, src, beam, n),
                    "aiayn bf16": ours(model_bf16, src, beam, n),
                }
                if not args.skip_hf:
                    runs["HF generate fp32"] = hf(marian, src, beam, args.out_len)
                runs["aiayn export -> ONNX Runtime fp32"] = ours(onnx_model, src, beam, n)
                seconds_of = {name: timed(run, args.repeats) for name, run in runs.items()}
                seconds_of |= ct2_child(ct2_dir, pieces, beam, n, args.repeats)
                exported = ct2_child(ours_ct2_dir, pieces, beam, n, args.repeats)
                seconds_of |= {f"aiayn export -> {k}": v for k, v in exported.items()}
                for name, seconds in seconds_of.items():
                    key = f"batch {batch}, beam {beam}: {name}"
                    results[key] = {
                        "sentences_per_s": round(batch / seconds, 1),
                        "tokens_per_s": round(batch * args.out_len / seconds),
                    }
                    print(f"{key:>48}: {batch * args.out_len / seconds:8,.0f} tokens/s", flush=True)
    best_ct2 = max(
        v["tokens_per_s"] for k, v in results.items() if "batch 32, beam 4: CTranslate2" in k
    )
    for k, v in results.items():
        if k.startswith("batch 32, beam 4"):
            v["vs_best_ctranslate2"] = round(v["tokens_per_s"] / best_ct2, 2)
    print(json.dumps({"cpus": os.cpu_count(), "results": results}, indent=2))


if __name__ == "__main__":
    main()
