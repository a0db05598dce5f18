"""One model for many languages against bilingual models given the same minutes (issue 31).

    .venv/bin/python benchmarks/multilingual_race.py --system multi [--minutes 60]
    .venv/bin/python benchmarks/multilingual_race.py --system en-de [--minutes 60]
    .venv/bin/python benchmarks/multilingual_race.py --system de-en [--minutes 60]
    .venv/bin/python benchmarks/multilingual_race.py --report

Each system is one invocation (about `--minutes` plus its scoring), so that the three hours fit
in separate sittings; each writes OUT/SYSTEM.json whole, and `--report` prints the tables of what
is there. Nothing else should run beside a system: its budget is wall-clock minutes. `--steps N`
gives a system N updates instead (for de-en: the updates en-de made in its minutes, the same work
whatever machine or sitting it runs in, as the two have the same model and vocabulary size).

- `multi`: `aiayn prepare --langs LANGS` (English-centric; default 8 languages, three of them
  not in the Latin script), then `aiayn train --preset small --recipe short --max-minutes M`.
- `en-de`, `de-en`: a bilingual directory of the same versions whose validation and test sets
  are the multilingual directory's held-out verses (given with `--valid`/`--test`, so the same
  verses are kept out of training), the same preset, recipe and minutes.

Every model is scored the same way, by `aiayn.directions.evaluate_directions` on the first
`--n` held-out test verses of the multilingual directory: chrF, BLEU with the target
language's tokenizer, and the off-target rate (py3langid restricted to the languages); the
multilingual model on its trained directions and on `--zero-shot` pairs it never saw.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from quality_race import run_child

from harness.machine import cpu_model

LANGS = "en,de,fr,es,ru,zh,ar,hi"
ZERO_SHOT = "de-fr,fr-de,es-ru,ru-es,zh-ar,hi-zh"
AIAYN = [sys.executable, "-m", "aiayn"]


def prepared(cmd: list[str], data: Path, log: Path) -> Path:
    if not (data / "meta.json").is_file():
        run_child([*AIAYN, "prepare", *cmd, "--out", str(data), "--no-progress"], log)
    return data


def train(args, data: Path, run: Path) -> dict:
    """`aiayn train` for the minutes (or --steps); its steps, speed and peak memory."""
    if args.score_only:  # trained already (e.g. resumed by hand): timings kept from its JSON
        path = run.with_suffix(".json")
        before = json.loads(path.read_text()) if path.is_file() else {}
        return {k: before.get(k) for k in ("seconds", "peak_mb")} | trained(run)
    shutil.rmtree(run, ignore_errors=True)  # a race starts afresh
    cmd = [*AIAYN, "train", "--data", str(data), "--out", str(run), "--preset", "small"]
    # minutes alone: the short recipe's 1,000-step cap lifted, so the clock decides
    budget = ["--max-minutes", str(args.minutes), "--max-steps", str(10**7)]
    budget = ["--max-steps", str(args.steps)] if args.steps else budget
    cmd += ["--recipe", "short", *budget, "--no-progress"]
    cmd += ["--precision", args.precision] if args.precision else []
    seconds, peak_mb = run_child(cmd, run.with_suffix(".train.log"))
    return {"seconds": round(seconds), "peak_mb": round(peak_mb)} | trained(run)


def trained(run: Path) -> dict:
    """The updates a run made and its median logged speed."""
    from aiayn.train.metrics import read_metrics

    metrics = read_metrics(run)  # a run killed mid-line still reads
    speeds = sorted(m["tokens_per_s"] for m in metrics if m["kind"] == "train")
    return {
        "steps": max((m["step"] for m in metrics), default=0),
        "tokens_per_s": round(speeds[len(speeds) // 2]) if speeds else 0,  # 0: none logged
    }


def score(args, run: Path, multi: Path, pairs: list[tuple[str, str]], tagged: bool) -> list:
    """Scores of `pairs` on the multilingual directory's first --n test verses."""
    from dataclasses import asdict

    from aiayn import open_translator
    from aiayn.data.data_dir import DataDir
    from aiayn.evaluate.directions import evaluate_directions
    from aiayn.evaluate.langid import Identifier

    data = DataDir(multi)
    langs = sorted({x for d in data.meta.directions for x in d.split("-")})
    by_lang = {tgt: open_translator(run, tgt_lang=tgt if tagged else None) for _, tgt in pairs}
    different = []  # per direction, in order: how many of its outputs differ

    def translate(lines: list[str], tgt: str) -> list[str]:
        outputs = by_lang[tgt].translate(lines)
        different.append(len(set(outputs)))
        return outputs

    found = evaluate_directions(data, "test", pairs, translate, Identifier(langs), n=args.n)
    # different outputs: a model that ignores its source writes the same few lines for all
    return [asdict(r) | {"different_outputs": n} for r, n in zip(found, different, strict=True)]


def system(args) -> dict:
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    multi = prepared(["--langs", args.langs], out / "data-multi", out / "prepare-multi.log")
    if args.system == "multi":
        result = train(args, multi, out / "multi")
        trained = [
            tuple(d.split("-")) for d in json.loads((multi / "meta.json").read_text())["directions"]
        ]
        zero = [tuple(d.split("-")) for d in args.zero_shot.split(",")]
        result["directions"] = score(args, out / "multi", multi, [*trained, *zero], tagged=True)
    else:
        src, tgt = args.system.split("-")
        given = {
            s: [str(multi / f"{s}.{src}.txt"), str(multi / f"{s}.{tgt}.txt")]
            for s in ("valid", "test")
        }
        cmd = [
            "--src-lang",
            src,
            "--tgt-lang",
            tgt,
            "--valid",
            *given["valid"],
            "--test",
            *given["test"],
        ]
        data = prepared(cmd, out / f"data-{args.system}", out / f"prepare-{args.system}.log")
        result = train(args, data, out / args.system)
        result["directions"] = score(args, out / args.system, multi, [(src, tgt)], tagged=False)
    return result | {
        "system": args.system,
        "minutes": None if args.steps else args.minutes,
        "steps_given": args.steps,
        "cpu": cpu_model(),
        "n": args.n,
        "precision": args.precision or "the recipe's (bf16)",
        "threads": os.environ.get("OMP_NUM_THREADS", "torch's default"),
    }


def count(n: int | None) -> str:
    """A count, or "-" where none was measured (peak memory of a run trained by hand,
    different outputs before 2026-11-27)."""
    return "-" if n is None else f"{n:,}"


def minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.0f}"


def report(out: Path) -> str:
    """Markdown tables of the systems that have run."""
    found = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("*.json"))}
    lines = [
        "| system | budget | minutes with close | precision | threads | steps | target tokens/s "
        "| peak MB | CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in found.items():
        given = r.get("steps_given")
        budget = f"{given:,} updates" if given else f"{r['minutes']:g} minutes"
        lines.append(
            f"| {name} | {budget} | {minutes(r['seconds'])} | {r.get('precision', '-')} "
            f"| {r.get('threads', '-')} "
            f"| {r['steps']:,} | {r['tokens_per_s'] or 0:,} | {count(r['peak_mb'])} | {r['cpu']} |"
        )
    lines += [
        "",
        "| direction | model | chrF | BLEU | off-target | different outputs |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in found.items():
        for d in r["directions"]:
            kind = (
                "bilingual"
                if name != "multi"
                else ("multi, trained" if d["trained"] else "multi, zero-shot")
            )
            bleu = "-" if d["bleu"] is None else f"{d['bleu']:.2f}"
            lines.append(
                f"| {d['direction']} | {kind} | {d['chrf']:.2f} | {bleu} "
                f"| {100 * d['off_target']:.1f}% | {count(d.get('different_outputs'))} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=("multi", "en-de", "de-en"))
    parser.add_argument("--report", action="store_true", help="print the tables of OUT/*.json")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument(
        "--steps", type=int, help="train for this many updates instead of --minutes"
    )
    parser.add_argument(
        "--score-only", action="store_true", help="score OUT/SYSTEM as it is, without training"
    )
    parser.add_argument("--langs", default=LANGS)
    parser.add_argument("--zero-shot", default=ZERO_SHOT, help="untrained pairs to score")
    parser.add_argument("--n", type=int, default=500, help="test verses per direction")
    parser.add_argument("--out", type=Path, default=Path("runs/multilingual-race"))
    parser.add_argument(
        "--precision",
        choices=("fp32", "bf16"),
        help="training precision for every system (default: the short recipe's bf16; fp32 "
        "where the CPU has no bf16 instructions, as on the Intel Xeon without avx512_bf16)",
    )
    args = parser.parse_args()
    if args.report:
        print(report(args.out))
        return
    if args.system is None:
        parser.error("give --system multi|en-de|de-en, or --report")
    result = system(args)
    path = args.out / f"{args.system}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(report(args.out))


if __name__ == "__main__":
    main()
