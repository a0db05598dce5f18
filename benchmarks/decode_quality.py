"""Quality and length of the search, per decoding precision and stopping rule, on a test split.

    .venv/bin/python benchmarks/decode_quality.py --model runs/demo --data data/en-de \
        [--precisions fp32 bf16 int8] [--compiled int8 bf16] [--stops bound k-finished] \
        [--alphas 0.6 1.0] [--split valid|test] [--sentences N] [--short 18]

For each setting: sacreBLEU BLEU (all references), chrF, the length ratio (hypothesis length /
reference length, sacreBLEU's `ratio`), and the decoding time, with the CPU model. The
`--precision int8` and `bf16` rows should be within 0.3 BLEU of fp32; the ratio at beam 4
within 0.95-1.10. `--short N` also scores the short segments alone: the lines whose source has
at most N subwords (18 is the mean of the short-segment corpus in issue 10), where a search that
favours short hypotheses shows first. `--alphas` decodes with each length-penalty exponent, to
choose one on the validation split. `--compiled` adds rows decoded with `--compile` (int8 is
then a weight-only int8 step, int8 weights and bf16 activations, and a dynamic int8 encoder);
their times leave out the compiling.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.machine import cpu_model


def main() -> None:
    import torch

    from aiayn.config import DecodeConfig
    from aiayn.data.data_dir import DataDir
    from aiayn.decode.translate import load_model, translate_lines

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16", "int8"])
    parser.add_argument(
        "--compiled", nargs="*", default=[], help="precisions to decode with --compile too"
    )
    parser.add_argument("--stops", nargs="+", default=["bound", "k-finished"])
    parser.add_argument(
        "--alphas", nargs="+", type=float, default=[0.6], help="length penalty exponents (fp32)"
    )
    parser.add_argument("--sentences", type=int, default=0, help="the first N only (0: all)")
    parser.add_argument(
        "--short", type=int, default=18, help="also score lines of at most this many subwords"
    )
    args = parser.parse_args()
    n = args.sentences or None
    sources = DataDir(args.data).sources(args.split, n)
    refs = DataDir(args.data).references(args.split, n)
    print(
        f"{cpu_model()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
        f"{len(sources)} sentences of {args.data / args.split}, {len(refs)} reference(s), "
        f"beam {args.beam}"
    )
    rows, short = [], None
    runs = [(p, False) for p in args.precisions] + [(p, True) for p in args.compiled]
    for precision, compile in runs:
        model, tokenizer = load_model(args.model, precision=precision, compile=compile)
        if compile:  # compiled (or loaded) before the clock starts
            with torch.inference_mode():
                model.step(args.beam)
        if short is None:
            pieces = tokenizer.encode(sources)
            short = [i for i, ids in enumerate(pieces) if len(ids) <= args.short]
            print(f"short segments: {len(short)} lines of at most {args.short} subwords")
        fp32 = precision == "fp32" and not compile
        for stop in args.stops if fp32 else args.stops[:1]:
            for alpha in args.alphas if fp32 else args.alphas[:1]:
                cfg = DecodeConfig(beam=args.beam, stop=stop, alpha=alpha)
                start = time.perf_counter()
                hyps = translate_lines(model, tokenizer, sources, cfg)
                seconds = time.perf_counter() - start
                name = f"{precision} --compile" if compile else precision
                row = {"precision": name, "stop": stop, "alpha": alpha}
                row.update(measure(hyps, refs, short))
                row["seconds"] = round(seconds, 1)
                rows.append(row)
                print(row, flush=True)
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in columns) + " |")
    print(json.dumps(rows))


def measure(hyps: list[str], refs: list[list[str]], short: list[int]) -> dict:
    """BLEU and chrF with all references; the length ratio against all references (sacreBLEU
    takes the closest), against the first alone, and on the short segments alone."""
    from sacrebleu.metrics import BLEU, CHRF

    def ratio(lines: list[int] | None, streams: list[list[str]]) -> float:
        pick = range(len(hyps)) if lines is None else lines
        picked = [[r[i] for i in pick] for r in streams]
        found = BLEU().corpus_score([hyps[i] for i in pick], picked)
        return round(found.sys_len / max(found.ref_len, 1), 3)

    return {
        "bleu": round(BLEU().corpus_score(hyps, refs).score, 2),
        "bleu_1_ref": round(BLEU().corpus_score(hyps, refs[:1]).score, 2),
        "chrf": round(CHRF().corpus_score(hyps, refs).score, 2),
        "ratio": ratio(None, refs),
        "ratio_1_ref": ratio(None, refs[:1]),
        "ratio_short_1_ref": ratio(short, refs[:1]),
    }


if __name__ == "__main__":
    main()
