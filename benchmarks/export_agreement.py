"""Do the exported engines translate as aiayn does? Issue 12's checks on a trained model.

    .venv/bin/python benchmarks/export_agreement.py --model runs/demo --data data/en-de \
        [--split test] [--sentences N] [--beam 4] [--alpha 0.6] [--out DIR]

Exports the model to CTranslate2 (float32) and to ONNX, then decodes the split with each:
- greedy: the share of lines whose translation is identical to aiayn's, per engine, with the
  first differing lines shown;
- beam search with `--length-penalty power` (the only penalty CTranslate2 has, |Y|^alpha):
  sacreBLEU BLEU (all references) of aiayn and of CTranslate2, and the same for ONNX Runtime
  (which runs our own search over the exported graphs).
Bars (issue 12): greedy identical on >= 99% of lines, beam BLEU within 0.2 of aiayn's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.machine import cpu_model


def agreement(ours: list[str], theirs: list[str], sources: list[str], show: int = 3) -> dict:
    """The share of identical lines, and the first `show` that differ."""
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    for i in differ[:show]:
        print(f"  line {i + 1}: {sources[i]!r}\n    aiayn:  {ours[i]!r}\n    engine: {theirs[i]!r}")
    return {
        "identical": len(ours) - len(differ),
        "lines": len(ours),
        "share": round(1 - len(differ) / max(len(ours), 1), 4),
    }


def main() -> None:
    import torch
    from sacrebleu.metrics import BLEU

    from aiayn.config import DecodeConfig
    from aiayn.data.data_dir import DataDir
    from aiayn.decode.translate import load_model, translate_lines
    from aiayn.engines import open_translator
    from aiayn.export.ctranslate2 import export_ctranslate2
    from aiayn.export.onnx import OPSET, export_onnx
    from aiayn.layout import model_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="run or model directory")
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--sentences", type=int, default=0, help="the first N only (0: all)")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--out", type=Path, default=None, help="where to export (default: temp)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()

    source = model_dir(args.model)
    data = DataDir(args.data)
    n = args.sentences or None
    sources, refs = data.sources(args.split, n), data.references(args.split, n)
    print(
        f"{cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__}; {source}; "
        f"{len(sources)} sentences of {args.data / args.split}, {len(refs)} reference(s)"
    )
    out = args.out or Path(tempfile.mkdtemp(prefix="aiayn-export-"))
    export_ctranslate2(source, out / "ctranslate2")
    export_onnx(source, out / "onnx")
    print(f"exported to {out} (CTranslate2 float32; ONNX opset {OPSET})")

    model, tokenizer = load_model(source)
    engines = {  # each engine's `aiayn translate --engine NAME`: greedy decoding at beam 1
        "ctranslate2": open_translator(out / "ctranslate2", engine="ctranslate2").translate,
        "onnx": open_translator(out / "onnx", engine="onnx").translate,
    }
    systems = {"aiayn": lambda lines, cfg: translate_lines(model, tokenizer, lines, cfg)}
    systems.update(engines)

    def run(name: str, cfg: DecodeConfig) -> list[str]:
        start = time.perf_counter()
        hyps = systems[name](sources, cfg)
        print(f"{name} beam {cfg.beam}: {time.perf_counter() - start:.1f} s", flush=True)
        return hyps

    results: dict = {"cpu": cpu_model(), "model": str(source), "lines": len(sources)}
    greedy = DecodeConfig(beam=1)
    ours = run("aiayn", greedy)
    for name in engines:
        print(f"greedy, {name} against aiayn:")
        results[f"greedy_{name}"] = agreement(ours, run(name, greedy), sources)
        print(f"  {results[f'greedy_{name}']}")

    beam = DecodeConfig(beam=args.beam, alpha=args.alpha, length_penalty="power")
    bleu = {name: BLEU().corpus_score(run(name, beam), refs).score for name in systems}
    for name in systems:
        results[f"beam_bleu_{name}"] = round(bleu[name], 2)
    for name in engines:
        results[f"beam_bleu_diff_{name}"] = round(bleu[name] - bleu["aiayn"], 2)
    print(f"beam {args.beam}, --length-penalty power, alpha {args.alpha}: BLEU {results}")
    print(json.dumps(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
