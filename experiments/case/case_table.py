"""Plain, upper- and title-cased test sources, scored for each model: issue 31's case table.

    .venv/bin/python experiments/case/case_table.py --model NAME=RUN:DATA [NAME=RUN:DATA ...] \
        [--split test] [--json FILE]
    .venv/bin/python experiments/case/case_table.py --seeds REPORT.json [REPORT.json ...] \
        [--base VOCAB]

For each model (a run directory and the data directory it was trained on), the test sources as
they are, upper-cased and title-cased (`aiayn.data.casing`, as `aiayn evaluate --case` makes
them) are translated with the run's own search (beam 4, the length setting its close or
`aiayn tune` stored) and scored against the ordinary references: BLEU case-sensitive and
case-insensitive (sacreBLEU's lowercase=True), chrF, length ratio and the share of outputs
that repeat themselves. A model trained with case_augment answers capitals with capitals, so
what cased input costs is read case-insensitively ("loss" = plain minus cased, both
case-insensitive). Prints the table for experiments/case/README.md and writes the JSON.

--seeds reads reports already written and pairs every augmented model with the unaugmented one
of the same vocabulary, updates, seed, precision and CPU (same initialisation, same batches but
for the cased pairs): per setting, how far plain BLEU moved and what share of the upper-case
loss is left, per seed and their mean - the two numbers of issue 31's bar (at most 0.5, at most
half). With --base (a data directory's name, e.g. copies-0.1), a model on another vocabulary
(one prepared with --case-markup) is also paired with no augmentation on the base one. A last
table takes each setting's seeds as one arm against no augmentation's (on its own vocabulary
and on --base): the means, their standard deviations and the difference of the means with a
95% Welch interval - the reading for models that share no initialisation (other vocabularies),
where seed n of one arm is no closer to seed n of the other than to any other seed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

from aiayn.data.casing import CASES
from aiayn.engines import open_translator
from aiayn.evaluate.split import evaluate_split
from aiayn.layout import read_run_config
from aiayn.train.metrics import read_metrics
from harness.machine import cpu_model


def parse_model(text: str) -> tuple[str, Path, Path]:
    name, _, paths = text.partition("=")
    run, _, data = paths.partition(":")
    if not (name and run and data):
        raise SystemExit(f"--model wants NAME=RUN:DATA, got {text!r}")
    return name, Path(run), Path(data)


def training(run: Path) -> dict:
    """What the run was: its data, case_augment, seed, and the last step it logged."""
    settings = read_run_config(run, ["data", "train"])
    train = settings["train"]
    steps = [r["step"] for r in read_metrics(run) if r.get("kind") == "train"]
    return {
        "data": settings["data"],
        "case_augment": train.get("case_augment", 0.0),
        "case_augment_sides": train.get("case_augment_sides", "both"),
        "case_augment_mode": train.get("case_augment_mode", "replace"),
        "seed": train["seed"],
        "precision": train["precision"],
        "steps": max(steps, default=0),
    }


def measure(run: Path, data: Path, split: str, n: int | None) -> dict:
    translator = open_translator(run)
    cfg = translator.default_search
    found = {}
    for case in CASES:
        start = time.perf_counter()
        ev = evaluate_split(data, split, lambda lines: translator.translate(lines, cfg), n, case)
        s = ev.scores
        found[case] = {
            "bleu": round(s.bleu, 2),
            "bleu_lowercase": round(s.bleu_lowercase or 0.0, 2),
            "chrf": round(s.chrf, 2),
            "length_ratio": round(s.length_ratio, 3),
            "repetition_pct": round(100 * s.repetition, 1),
            "seconds": round(time.perf_counter() - start, 1),
            "bleu_signature": s.bleu_signature,
        }
    return {"search": translator.search_origin, "training": training(run), "scores": found}


def loss(scores: dict, case: str) -> float:
    """What cased input loses: plain minus cased BLEU, both case-insensitive."""
    return scores["as-is"]["bleu_lowercase"] - scores[case]["bleu_lowercase"]


def table(results: dict) -> str:
    rows = [
        "| model | steps | plain cs / ci | upper cs / ci | title cs / ci "
        "| upper's loss (ci) | title's loss (ci) | upper: length, repeats |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        s = r["scores"]
        cells = [f"{s[c]['bleu']:.2f} / {s[c]['bleu_lowercase']:.2f}" for c in CASES]
        losses = [f"{loss(s, c):.2f}" for c in ("upper", "title")]
        up = s["upper"]
        shape = f"{up['length_ratio']:.3f}, {up['repetition_pct']:.1f}%"
        steps = r["training"]["steps"]
        rows.append(f"| {name} | {steps:,} | " + " | ".join([*cells, *losses, shape]) + " |")
    return "\n".join(rows)


def setting(r: dict) -> tuple[str, int, str, str, float, str, str]:
    """What a pair shares - vocabulary (data directory), updates, precision, CPU - then
    case_augment, its sides and its mode."""
    t = r["training"]
    shared = (Path(t["data"]).name, t["steps"], t["precision"], r["cpu"])
    how = (t.get("case_augment_sides", "both"), t.get("case_augment_mode", "replace"))
    return *shared, t["case_augment"], *how


def references(key: tuple, base: str | None) -> list[str]:
    """The vocabularies whose unaugmented models a setting is read against: its own when it
    is augmented, and `base` when that is another (a vocabulary made for case against the
    ordinary one)."""
    own = [key[0]] if key[4] else []
    return own + ([base] if base and base != key[0] else [])


def seeds_table(results: dict, base: str | None = None) -> str:
    """Each augmented setting against no augmentation on the same vocabulary and updates,
    seed by seed; and, given a `base` vocabulary (a data directory's name), against no
    augmentation on that one too (a vocabulary made for case against the ordinary one)."""
    unaugmented = {
        (*setting(r)[:4], r["training"]["seed"]): r
        for r in results.values()
        if r["training"]["case_augment"] == 0
    }
    paired: dict[tuple, list[tuple[int, float, float]]] = {}
    for r in results.values():
        key, seed = setting(r), r["training"]["seed"]
        if key[4] == 0:
            continue
        for vocab in references(key, base):
            if (unaugmented_run := unaugmented.get((vocab, *key[1:4], seed))) is None:
                continue
            label = key[0] if vocab == key[0] else f"{key[0]} against {vocab}"
            s, s0 = r["scores"], unaugmented_run["scores"]
            moved = s["as-is"]["bleu_lowercase"] - s0["as-is"]["bleu_lowercase"]
            left = loss(s, "upper") / loss(s0, "upper")
            paired.setdefault((label, *key[1:]), []).append((seed, moved, left))
    rows = [
        "| vocabulary | updates | precision, CPU | case_augment, sides, mode | seeds "
        "| plain BLEU moved (ci) | mean | upper's loss left | mean |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (vocab, steps, precision, cpu, fraction, sides, mode), found in sorted(paired.items()):
        found.sort()
        moves = ", ".join(f"{m:+.2f}" for _, m, _ in found)
        shares = ", ".join(f"{s:.0%}" for _, _, s in found)
        mean_move = sum(m for _, m, _ in found) / len(found)
        mean_share = sum(s for _, _, s in found) / len(found)
        seeds = ", ".join(str(seed) for seed, _, _ in found)
        rows.append(
            f"| {vocab} | {steps:,} | {precision}, {cpu} | {fraction}, {sides}, {mode} | {seeds} "
            f"| {moves} | {mean_move:+.2f} | {shares} | {mean_share:.0%} |"
        )
    return "\n".join(rows)


def arms_table(results: dict, base: str | None = None) -> str:
    """Each setting's seeds as one arm against the unaugmented arm of its vocabulary (and of
    `base`), with two seeds or more on each side: plain BLEU (ci) mean and standard deviation,
    the difference of the means with its 95% Welch interval, and the upper-case loss left
    (the arm's mean loss over the other's)."""
    from scipy.stats import ttest_ind  # benchmarks only: scipy comes with the dev install

    arms: dict[tuple, list[dict]] = {}
    for r in results.values():
        key = setting(r)
        arms.setdefault(key[:4] + ((0.0,) if key[4] == 0 else key[4:]), []).append(r["scores"])
    rows = [
        "| vocabulary | against | updates | case_augment, sides, mode | seeds "
        "| plain ci: mean (SD) | against: mean (SD) | difference (95% interval) "
        "| upper's loss left |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, arm in sorted(arms.items()):
        for vocab in sorted(references(key, base)):
            other = arms.get((vocab, *key[1:4], 0.0), [])
            if len(arm) < 2 or len(other) < 2:
                continue
            a = [s["as-is"]["bleu_lowercase"] for s in arm]
            b = [s["as-is"]["bleu_lowercase"] for s in other]
            mean_a, mean_b = statistics.mean(a), statistics.mean(b)
            interval = ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
            left = statistics.mean(loss(s, "upper") for s in arm) / statistics.mean(
                loss(s, "upper") for s in other
            )
            fraction = f"{key[4]}, {key[5]}, {key[6]}" if key[4] else "none"
            rows.append(
                f"| {key[0]} | {vocab} | {key[1]:,} | {fraction} | {len(a)} vs {len(b)} "
                f"| {mean_a:.2f} ({statistics.stdev(a):.2f}) "
                f"| {mean_b:.2f} ({statistics.stdev(b):.2f}) | {mean_a - mean_b:+.2f} "
                f"({interval.low:+.2f} to {interval.high:+.2f}) | {left:.0%} |"
            )
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--model", nargs="+", metavar="NAME=RUN:DATA")
    group.add_argument("--seeds", nargs="+", type=Path, metavar="REPORT.json")
    p.add_argument("--base", help="--seeds: also pair with no augmentation on this vocabulary")
    p.add_argument("--split", default="test", choices=["valid", "test"])
    p.add_argument("--n", type=int, default=None, help="the first N lines (default: all)")
    p.add_argument("--json", type=Path, default=Path(__file__).with_name("results-case.json"))
    args = p.parse_args()
    if args.seeds:
        merged = {}
        for path in args.seeds:
            report = json.loads(path.read_text(encoding="utf-8"))
            for name, r in report["results"].items():
                merged[name] = {**r, "cpu": report["cpu"]}  # a pair shares its CPU
        print(table(merged))
        print()
        print(seeds_table(merged, args.base))
        print()
        print(arms_table(merged, args.base))
        return
    results = {}
    for name, run, data in map(parse_model, args.model):
        results[name] = measure(run, data, args.split, args.n)
        print(f"{name}: {json.dumps(results[name]['scores'])}", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    report = {
        "cpu": cpu_model(),
        "date": date.today().isoformat(),
        "commit": commit.stdout.strip(),
        "command": " ".join(sys.argv),
        "split": args.split,
        "lines": args.n or "all",
        "results": results,
    }
    tmp = args.json.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    tmp.replace(args.json)
    print(table(results))


if __name__ == "__main__":
    main()
