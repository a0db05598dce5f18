"""The lexical shortlist on a multilingual model's 32,000-piece output layer (issue 58): how
much of the speed the large output layer costs it wins back, and how many outputs it changes.

    .venv/bin/python benchmarks/shortlist_bench.py --model RUN --data DATA --work WORK \
        [--bilingual RUN] [--directions en-de de-en] [--repeats 5] [--json FILE]

--model is a multilingual model with its shortlist (`aiayn shortlist`: a table per target
language), --data its multilingual directory; --bilingual a model of the same shape with a
bilingual 8,000-piece vocabulary, the speed the large layer is compared with
(experiments/vocab_cost measured 0.57-0.68x of it with random weights).

Speed, the real job (`open_translator(...).nbest` from text to text, tokenizing included), on
the first direction's test sources: the multilingual model with its shortlist and without
(`--no-shortlist`), and the bilingual model on the same sentences; batch 1 (each of the first
`--lines` sentences alone) and batch 32 (the first 128), greedy and beam 4 (|Y|^1.0, no guards:
student_bench's search). Output pieces/s; each timing a fresh child process that warms up first,
the systems taking turns for `--repeats` rounds (harness/rounds.py): median and min-max.

Outputs (once, in a child): per direction, the test split's outputs (`--quality-lines`) greedy
and with the model's own search, with the shortlist and without: the share that differ, BLEU and
chrF of both, and the mean shortlist size (V' of a sentence alone).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/
sys.path.insert(0, str(Path(__file__).resolve().parent))  # student_bench: one search for both

from student_bench import search

from harness.machine import cpu_model
from harness.rounds import cell, interleaved, timed_searches

BATCH_LINES = 128  # the batch-32 timings' sentences: four batches
CONFIGS = {"1, greedy": (1, 1), "1, beam 4": (1, 4), "32, greedy": (32, 1), "32, beam 4": (32, 4)}
SYSTEMS = ["32k full", "32k + shortlist", "8k bilingual"]


def direction(name: str) -> tuple[str, str]:
    src, tgt = name.split("-")
    return src, tgt


def opened(a: argparse.Namespace, system: str):
    """The system's translator and whether it decodes over the shortlist."""
    from aiayn import open_translator

    if system == "8k bilingual":
        return open_translator(a.bilingual), False
    translator = open_translator(a.model, tgt_lang=direction(a.directions[0])[1])
    if translator.shortlist is None:
        sys.exit(f"{a.model}: no shortlist; build it with `aiayn shortlist --model --data`")
    return translator, system.endswith("shortlist")


# -- children -------------------------------------------------------------------------------


def child(a: argparse.Namespace, system: str) -> None:
    """Print {config: [seconds, output pieces]} for one system, each configuration warmed up."""
    from aiayn.data.data_dir import DataDir

    translator, shortlist = opened(a, system)
    src = direction(a.directions[0])[0]
    lines = DataDir.open(a.data).lines("test", src, max(a.lines, BATCH_LINES))
    cfg = partial(search, shortlist=shortlist)
    found = timed_searches(translator.nbest, lines, CONFIGS, (a.lines, BATCH_LINES), cfg)
    print(json.dumps(found))


def outputs(a: argparse.Namespace) -> None:
    """Write WORK/outputs.json: per direction and search, what the shortlist changes."""
    import sacrebleu
    import torch

    from aiayn import open_translator
    from aiayn.data.data_dir import DataDir
    from aiayn.data.languages import tagged

    data = DataDir.open(a.data)
    found = {}
    for name in a.directions:
        src, tgt = direction(name)
        translator = open_translator(a.model, tgt_lang=tgt)
        lines = data.lines("test", src, a.quality_lines or None)
        refs = data.lines("test", tgt, len(lines))
        ids = translator.tokenizer.encode([tagged(x, tgt) for x in lines])
        shortlist, cfg = translator.shortlist.shortlist, translator.shortlist.base.cfg
        sizes = [
            int(shortlist.per_row(torch.tensor([[*x, cfg.eos_id]]), cfg.eos_id, None, [[]]).sum())
            for x in ids
        ]
        row: dict = {"sentences": len(lines), "mean_shortlist": round(sum(sizes) / len(sizes), 1)}
        for search_name, base in (("greedy", search(1, False)), ("own", translator.default_search)):
            got = {}
            for key, on in (("full", False), ("shortlist", True)):
                hyps = translator.translate(lines, base.replace(shortlist=on))
                scores = (sacrebleu.corpus_bleu(hyps, [refs]), sacrebleu.corpus_chrf(hyps, [refs]))
                row[f"{search_name} {key}"] = [round(s.score, 2) for s in scores]
                got[key] = hyps
            differ = sum(x != y for x, y in zip(got["full"], got["shortlist"], strict=True))
            row[f"{search_name} changed"] = round(differ / len(lines), 4)
        found[name] = row
        print(f"outputs: {name} {row}", file=sys.stderr, flush=True)
    (a.work / "outputs.json").write_text(json.dumps(found, indent=1))


# -- the parent -----------------------------------------------------------------------------


def spawn(a: argparse.Namespace, *extra: str) -> str:
    """This script as a child with the same arguments; its last line of output."""
    here = str(Path(__file__).resolve())
    args = ["--model", str(a.model), "--data", str(a.data), "--work", str(a.work)]
    args += ["--bilingual", str(a.bilingual)] if a.bilingual else []
    args += ["--directions", *a.directions, "--lines", str(a.lines)]
    args += ["--quality-lines", str(a.quality_lines)]
    done = subprocess.run([sys.executable, here, *args, *extra], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(extra)} failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def tables(found: dict, results: dict, systems: list[str]) -> str:
    """Markdown: what the shortlist changes per direction, then pieces/s, then the ratios."""
    out = [
        "| direction | mean V' | greedy BLEU / chrF: full | + shortlist | changed | own search: "
        "full | + shortlist | changed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in found.items():
        bleu, chrf = ({k: v[i] for k, v in r.items() if isinstance(v, list)} for i in (0, 1))
        pair = {k: f"{bleu[k]} / {chrf[k]}" for k in bleu}
        out.append(
            f"| {name} | {r['mean_shortlist']:,.0f} | {pair['greedy full']} | "
            f"{pair['greedy shortlist']} | {r['greedy changed']:.1%} | {pair['own full']} | "
            f"{pair['own shortlist']} | {r['own changed']:.1%} |"
        )
    speed = results["pieces_per_s"]
    out += ["", "| system | " + " | ".join(CONFIGS) + " |", "|---|" + "---|" * len(CONFIGS)]
    out += [f"| {s} | " + " | ".join(cell(speed[s][c]) for c in CONFIGS) + " |" for s in systems]
    if "8k bilingual" in speed:
        median = lambda s, c: sorted(speed[s][c])[len(speed[s][c]) // 2]  # noqa: E731
        for s in ("32k full", "32k + shortlist"):
            ratios = ", ".join(f"{median(s, c) / median('8k bilingual', c):.2f}" for c in CONFIGS)
            out.append(f"- {s} / 8k bilingual ({', '.join(CONFIGS)}): {ratios}")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, required=True, help="a multilingual run or model")
    p.add_argument("--data", type=Path, required=True, help="its multilingual data directory")
    p.add_argument("--bilingual", type=Path, help="an 8,000-piece model of the same shape")
    p.add_argument("--work", type=Path, required=True, help="outputs.json goes here")
    p.add_argument("--directions", nargs="+", default=["en-de", "de-en"])
    p.add_argument("--lines", type=int, default=40, help="sentences of the batch-1 timings")
    p.add_argument("--quality-lines", type=int, default=0, help="test lines compared (0: all)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--child", choices=SYSTEMS, help=argparse.SUPPRESS)
    p.add_argument("--outputs", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a, a.child)
    if a.outputs:
        return outputs(a)
    a.work.mkdir(parents=True, exist_ok=True)
    if not (a.work / "outputs.json").is_file():
        spawn(a, "--outputs")
    found = json.loads((a.work / "outputs.json").read_text())
    systems = SYSTEMS if a.bilingual else SYSTEMS[:2]
    results = interleaved(systems, a.repeats, lambda s: json.loads(spawn(a, "--child", s)))
    about = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "date": datetime.date.today().isoformat(),
        "command": " ".join(sys.argv),
    }
    print(f"{about['cpu']}, {about['cores']} cores, {about['date']}; output pieces/s, median "
          f"(min-max) of {a.repeats}; load average before each round: "
          f"{results['load_average_1min']}")  # fmt: skip
    print(tables(found, results, systems))
    if a.json is not None:
        a.json.write_text(json.dumps({"about": about, "outputs": found, **results}, indent=1))


if __name__ == "__main__":
    main()
