"""Quality and length of the search, per decoding precision and stopping rule, on a test split.

    .venv/bin/python benchmarks/decode_quality.py --model runs/demo --data data/en-de \
        [--precisions fp32 bf16 int8] [--stops bound k-finished] [--sentences N] [--short 18]

For each setting: sacreBLEU BLEU (all references), chrF, the length ratio (hypothesis length /
reference length, sacreBLEU's `ratio`), and the decoding time, with the CPU model. The
`--precision int8` and `bf16` rows should be within 0.3 BLEU of fp32; the ratio at beam 4
within 0.95-1.10. `--short N` also scores the short segments alone: the lines whose source has
at most N subwords (18 is the mean of the short-segment corpus in issue 10), where a search that
favours short hypotheses shows first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_bench import machine_cpu


def main() -> None:
    from sacrebleu.metrics import BLEU, CHRF

    from aiayn.decode.beam import BeamOptions
    from aiayn.decode.translate import beam_decoder, load_translator, translate_lines
    from aiayn.train.validate import references

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--split", default="test")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16", "int8"])
    parser.add_argument("--stops", nargs="+", default=["bound", "k-finished"])
    parser.add_argument("--sentences", type=int, default=0, help="the first N only (0: all)")
    parser.add_argument(
        "--short", type=int, default=18, help="also score lines of at most this many subwords"
    )
    args = parser.parse_args()
    sources = (args.data / f"{args.split}.src.txt").read_text(encoding="utf-8").splitlines()
    refs = references(args.data, args.split)
    if args.sentences:
        sources, refs = sources[: args.sentences], [r[: args.sentences] for r in refs]
    print(f"{machine_cpu()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"{len(sources)} sentences of {args.data / args.split}, {len(refs)} reference(s), "
          f"beam {args.beam}")  # fmt: skip
    rows = []
    short = None
    for precision in args.precisions:
        model, tokenizer = load_translator(args.model, precision=precision)
        if short is None:
            pieces = tokenizer.encode(sources)
            short = [i for i, ids in enumerate(pieces) if len(ids) <= args.short]
            print(f"short segments: {len(short)} lines of at most {args.short} subwords")
        for stop in args.stops if precision == "fp32" else args.stops[:1]:
            decoder = beam_decoder(BeamOptions(beam=args.beam, stop=stop))
            start = time.perf_counter()
            hyps = translate_lines(model, tokenizer, sources, decoder)
            seconds = time.perf_counter() - start
            bleu = BLEU().corpus_score(hyps, refs)
            row = {"precision": precision, "stop": stop, "bleu": round(bleu.score, 2),
                   "chrf": round(CHRF().corpus_score(hyps, refs).score, 2),
                   "ratio": round(bleu.sys_len / bleu.ref_len, 3),
                   "ratio_short": short_ratio(hyps, refs, short),
                   "seconds": round(seconds, 1)}  # fmt: skip
            rows.append(row)
            print(row, flush=True)
    print(f"| precision | stop | BLEU | chrF | length ratio | ratio, <= {args.short} subwords | "
          "seconds |\n|---|---|---|---|---|---|---|")  # fmt: skip
    for r in rows:
        print(f"| {r['precision']} | {r['stop']} | {r['bleu']} | {r['chrf']} | {r['ratio']} | "
              f"{r['ratio_short']} | {r['seconds']} |")  # fmt: skip
    print(json.dumps(rows))


def short_ratio(hyps: list[str], refs: list[list[str]], lines: list[int]) -> float:
    """sacreBLEU's length ratio over the given lines only."""
    from sacrebleu.metrics import BLEU

    pick = [hyps[i] for i in lines]
    bleu = BLEU().corpus_score(pick, [[r[i] for i in lines] for r in refs])
    return round(bleu.sys_len / max(bleu.ref_len, 1), 3)


if __name__ == "__main__":
    main()
