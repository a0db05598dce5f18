"""Quality per minute of compute: aiayn against a plain Hugging Face Marian training loop.

    .venv/bin/python benchmarks/quality_race.py --minutes 30 [--corpus bible | --tsv FILE]
        [--data DIR] [--out DIR] [--systems aiayn hf-fp32 hf-bf16] [--beam 4] [--json FILE]

One system after the other, each in its own child process, nothing else running, on the same
prepared splits and SentencePiece vocabulary (`aiayn prepare`, made once if `--data` has none):

- aiayn through its own commands: `aiayn train --recipe short --max-minutes M` (validation
  inside the budget, the last checkpoints averaged at the end), then `aiayn translate` of the
  test split at beam 4 with the paper's length penalty and stopping rule;
- Hugging Face `MarianMTModel` from a `MarianConfig` of the same size (the small preset),
  trained by the plain loop its documentation shows (`AdamW`, a warm-up schedule, label
  smoothing 0.1 as `Seq2SeqTrainer` applies it), in fp32 and under bf16 autocast, on the same
  4,096-token batches for M minutes, then `generate(num_beams=4)` on the test split.

Every system's test output is scored here the same way: sacreBLEU BLEU against the test
reference and against all references the data has (the Bible has two), chrF, and the length
ratio (hypothesis / reference length). The table also gives steps, target tokens/s, peak
resident memory of the training process, the decoding time and the CPU model; `--json` keeps
it all.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import sacrebleu
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from aiayn.config import preset
from aiayn.data.batches.dataset import ParallelData
from aiayn.data.batches.sampler import TokenBatchSampler
from aiayn.data.data_dir import DataDir, DataMeta
from aiayn.data.tokenizer import Tokenizer
from harness.machine import cpu_model
from harness.peers import hf_marian

SYSTEMS = ("aiayn", "hf-fp32", "hf-bf16")
HF_LR, HF_WARMUP = 5e-4, 150  # a plain loop's usual settings for a model this size


def run_child(cmd: list[str], log: Path) -> tuple[float, float]:
    """Run a command to completion; (seconds, peak resident MB of that process)."""
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed; see {log}")
    return time.monotonic() - start, usage.ru_maxrss / 1024


def aiayn_system(args, data: Path, out: Path) -> dict:
    run = out / "aiayn"
    train = [
        sys.executable,
        "-m",
        "aiayn",
        "train",
        "--data",
        str(data),
        "--out",
        str(run),
        "--recipe",
        "short",
        "--max-steps",
        "100000000",
        "--max-minutes",
        str(args.minutes),
        "--no-progress",
    ]
    seconds, peak_mb = run_child(train, out / "aiayn.train.log")
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    summary = next(m for m in reversed(metrics) if m["kind"] == "summary")
    averaged = [m for m in metrics if m["kind"] == "averaged"]
    hyp = out / "aiayn.test.hyp"
    translate = [
        sys.executable,
        "-m",
        "aiayn",
        "translate",
        "--model",
        str(run),
        "--beam",
        str(args.beam),
        "--input",
        str(DataDir(data).text("test", "src")),
        "--output",
        str(hyp),
    ]
    decode_s, _ = run_child(translate, out / "aiayn.translate.log")
    return {
        "steps": summary["steps"],
        "train_minutes": summary["minutes"],
        # over the whole budget, its validations included
        "tokens_per_s": summary["tokens"] / (summary["minutes"] * 60),
        "peak_rss_mb": round(peak_mb),
        "decode_s": round(decode_s, 1),
        "hypotheses": str(hyp),
        "best_valid_bleu": max((m["bleu"] for m in metrics if m["kind"] == "valid"), default=None),
        "averaged_valid_bleu": averaged[-1]["bleu"] if averaged else None,
        "wall_s": round(seconds, 1),
    }


def hf_system(args, data: Path, out: Path, precision: str) -> dict:
    result = out / f"hf-{precision}.json"
    cmd = [
        sys.executable,
        __file__,
        "--hf-child",
        precision,
        "--data",
        str(data),
        "--out",
        str(out),
        "--minutes",
        str(args.minutes),
        "--beam",
        str(args.beam),
    ]
    seconds, peak_mb = run_child(cmd, out / f"hf-{precision}.log")
    found = json.loads(result.read_text())
    found.update(peak_rss_mb=round(peak_mb), wall_s=round(seconds, 1))
    return found


def hf_child(args) -> None:
    """Train and decode HF Marian in this process (started by `hf_system`)."""
    from transformers import get_inverse_sqrt_schedule

    precision, data = args.hf_child, args.data
    torch.manual_seed(1)
    cfg = preset("small", vocab_size=DataMeta.load(data).vocab_size)
    model = hf_marian(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=HF_LR, betas=(0.9, 0.98))
    schedule = get_inverse_sqrt_schedule(optimizer, num_warmup_steps=HF_WARMUP)
    train = ParallelData(data, "train")
    sampler = TokenBatchSampler(train.src_lengths, train.tgt_lengths, 4096, seed=1)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")
    steps = tokens = 0
    start = time.monotonic()
    model.train()
    while time.monotonic() - start < 60 * args.minutes:
        for indices in sampler:
            batch = train.collate(indices)
            labels = batch.tgt_out.masked_fill(batch.tgt_out == cfg.pad_id, -100)
            with autocast:
                logits = model(
                    input_ids=batch.src,
                    attention_mask=batch.src != cfg.pad_id,
                    decoder_input_ids=batch.tgt_in,
                ).logits
            loss = F.cross_entropy(
                logits.flatten(0, 1).float(),
                labels.flatten(),
                ignore_index=-100,
                label_smoothing=0.1,
            )
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            steps, tokens = steps + 1, tokens + batch.n_tgt_tokens
            if time.monotonic() - start >= 60 * args.minutes:
                break
    train_s = time.monotonic() - start
    model.eval()
    test = ParallelData(data, "test")
    tokenizer = Tokenizer(DataDir(data).tokenizer)
    order = sorted(range(len(test)), key=lambda i: int(test.src_lengths[i]))
    outputs: dict[int, str] = {}
    start = time.monotonic()
    with torch.no_grad(), autocast:
        for first in range(0, len(order), 32):
            ix = order[first : first + 32]
            src = test.collate(ix).src
            generated = model.generate(
                input_ids=src,
                attention_mask=src != cfg.pad_id,
                num_beams=args.beam,
                max_new_tokens=int(1.5 * src.shape[1]) + 10,
            )
            ids = [
                [t for t in row.tolist() if t > max(cfg.pad_id, cfg.bos_id, cfg.eos_id)]
                for row in generated
            ]
            for i, text in zip(ix, tokenizer.decode(ids), strict=True):
                outputs[i] = text
    decode_s = time.monotonic() - start
    hyp = args.out / f"hf-{precision}.test.hyp"
    hyp.write_text("".join(outputs[i] + "\n" for i in range(len(test))), encoding="utf-8")
    result = {
        "steps": steps,
        "train_minutes": round(train_s / 60, 2),
        "tokens_per_s": tokens / train_s,
        "decode_s": round(decode_s, 1),
        "hypotheses": str(hyp),
        "lr": HF_LR,
        "warmup": HF_WARMUP,
    }
    (args.out / f"hf-{precision}.json").write_text(json.dumps(result, indent=2) + "\n")


def scores(hyp_file: Path, data: Path) -> dict:
    hyps = hyp_file.read_text(encoding="utf-8").splitlines()
    refs = DataDir(data).references("test")  # the test target first, then any others
    one = sacrebleu.corpus_bleu(hyps, refs[:1])
    every = sacrebleu.corpus_bleu(hyps, refs)
    return {
        "bleu": round(one.score, 2),
        f"bleu_{len(refs)}_refs": round(every.score, 2),
        "chrf": round(sacrebleu.corpus_chrf(hyps, refs).score, 2),
        "length_ratio": round(one.sys_len / one.ref_len, 3),
    }


def prepared(args) -> Path:
    if (args.data / "meta.json").is_file():
        return args.data
    cmd = [sys.executable, "-m", "aiayn", "prepare", "--out", str(args.data), "--no-progress"]
    if args.tsv:
        cmd += ["--corpus", str(args.tsv)]
    subprocess.run(cmd, check=True)
    return args.data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="training budget per system")
    corpus = parser.add_mutually_exclusive_group()
    corpus.add_argument("--corpus", choices=("bible",), default="bible")
    corpus.add_argument("--tsv", type=Path, help="a source<TAB>target corpus instead")
    parser.add_argument("--data", type=Path, help="prepared data (made here if missing)")
    parser.add_argument("--out", type=Path, default=Path("runs/race"))
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--hf-child", choices=("fp32", "bf16"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.data is None:
        args.data = Path("data/en-de" if args.tsv is None else f"data/{args.tsv.stem}")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.hf_child:
        return hf_child(args)
    data = prepared(args)
    results = {}
    for system in args.systems:
        print(f"{system}: training for {args.minutes:g} minutes ...", file=sys.stderr, flush=True)
        if system == "aiayn":
            found = aiayn_system(args, data, args.out)
        else:
            found = hf_system(args, data, args.out, system.split("-")[1])
        found.update(scores(Path(found["hypotheses"]), data))
        results[system] = found
    report = {
        "cpu": cpu_model(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "minutes": args.minutes,
        "data": str(data),
        "beam": args.beam,
        "results": results,
    }
    multi = next((k for k in next(iter(results.values())) if k.startswith("bleu_")), "bleu")
    print(
        f"CPU: {report['cpu']}; torch {report['torch']}; {args.minutes:g} min per system; "
        f"beam {args.beam}; {data}"
    )
    print(f"{'system':>8} | steps | tokens/s | peak RSS | BLEU | {multi} | chrF | ratio | decode")
    for name, r in results.items():
        print(
            f"{name:>8} | {r['steps']:>5} | {r['tokens_per_s']:>8,.0f} | {r['peak_rss_mb']:>5} MB |"
            f" {r['bleu']:>5.2f} | {r[multi]:>5.2f} | {r['chrf']:.1f} | {r['length_ratio']:.2f} |"
            f" {r['decode_s']:.0f} s"
        )
    if "aiayn" in results:
        r = results["aiayn"]
        averaged = r["averaged_valid_bleu"]
        print(
            f"aiayn validation BLEU: best checkpoint {r['best_valid_bleu']:.2f}; the average of "
            f"the last checkpoints {'-' if averaged is None else f'{averaged:.2f}'} (the test "
            "decodes whichever scored higher on validation)"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
