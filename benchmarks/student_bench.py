"""A teacher and its distilled student: test quality, parameters and decoding speed, with and
without the lexical shortlist, against CTranslate2 int8 running each (issue 58's tables).

    .venv/bin/python benchmarks/student_bench.py --teacher runs/demo --student runs/student \
        --data data/en-de --work /tmp/student-bench [--repeats 5] [--json results.json]

Real models, real test sentences, the real job: `open_translator(...).translate` from text to
text (tokenizing included), each system through the same public interface:

- aiayn fp32, with and without the model's shortlist (`--no-shortlist`);
- aiayn int8 with the compiled step (`--precision int8 --compile`) over the shortlist, on
  aiayn's int8 kernel and (`weight-only`) on PyTorch's (`AIAYN_INT8_KERNEL=0`);
- CTranslate2 int8 (`aiayn export --quantization int8`), with the shortlist as its vocabulary
  map (`use_vmap`) and without, on `--ct2-threads` threads (default 1: on 2 shared cores its int8
  runs 10x slower on 2 threads than on 1 at batch 1, decode_bench's table); aiayn on
  `--aiayn-threads` (default 0: PyTorch's, one per core; 1 compares like with like).

Every system decodes the same search: batch 1 greedy (each of the first `--lines` test
sentences alone), and batch 32 greedy and beam 4 (|Y|^1.0, which CTranslate2 has too; no
guards, which it lacks) over the first 128. Speed is output pieces per second. Each timing is a
fresh child process that loads its system and warms it up first; the parent imports neither
torch nor CTranslate2. Systems take turns (the order rotates each round), each timed
`--repeats` times: median and min-max, printed with the CPU model, threads and the load average.

Quality (the set-up, once): test BLEU and chrF of each model over the whole test split with its
own search (search.json), with and without its shortlist, and the share of outputs the
shortlist changes. Built and compiled artefacts go to --work and are reused.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.machine import cpu_model
from harness.rounds import cell, interleaved, timed_searches

MODELS = ("teacher", "student")
BATCH_LINES = 128  # the batch-32 timings' sentences: four batches
CONFIGS = {"1, greedy": (1, 1), "32, greedy": (32, 1), "32, beam 4": (32, 4)}
# name -> (engine, precision, compile, shortlist), for each model
KINDS: dict[str, tuple[str, str, bool, bool]] = {
    "fp32": ("aiayn", "fp32", False, False),
    "fp32 + shortlist": ("aiayn", "fp32", False, True),
    "int8 --compile + shortlist": ("aiayn", "int8", True, True),
    "int8 --compile + shortlist, weight-only": ("aiayn", "int8", True, True),
    "CT2 int8": ("ctranslate2", "int8", False, False),
    "CT2 int8 + vmap": ("ctranslate2", "int8", False, True),
}
SYSTEMS = [f"{model} {kind}" for model in MODELS for kind in KINDS]
DEFAULT_SYSTEMS = [s for s in SYSTEMS if not s.endswith("weight-only")]


def kernel_switch(system: str) -> None:
    """The int8 kernel on, or off for a `weight-only` system (`aiayn.decode.int8_kernel`)."""
    os.environ["AIAYN_INT8_KERNEL"] = "0" if system.endswith("weight-only") else "1"


def split_name(system: str) -> tuple[str, str]:
    model, kind = system.split(" ", 1)
    return model, kind


def search(beam: int, shortlist: bool):
    from aiayn.config import DecodeConfig

    return DecodeConfig(
        beam=beam,
        length_penalty="power",
        alpha=1.0,
        stop="k-finished",
        no_repeat_ngram=0,
        stutter_guard=0,
        shortlist=shortlist,
        max_tokens=1_000_000,  # every call is one batch: its lines, whatever their length
    )


# -- set-up (a child process): exports, compiled steps, quality -----------------------------


def setup(a: argparse.Namespace) -> None:
    from aiayn.export.ctranslate2 import export_ctranslate2
    from aiayn.layout import model_dir

    for name in MODELS:
        out = a.work / f"ct2-{name}"
        if not (out / "model.bin").is_file():
            export_ctranslate2(model_dir(getattr(a, name)), out, quantization="int8")
        print(f"exported: {out}", file=sys.stderr, flush=True)
    for system in a.systems:
        compile = KINDS[split_name(system)[1]][2]
        if compile:  # compiled once here; every timed child loads the steps from disk
            kernel_switch(system)
            opened(a, system).warm_up([1, 4])
            print(f"compiled: {system}", file=sys.stderr, flush=True)
    quality = a.work / "quality.json"
    if not quality.is_file():
        quality.write_text(json.dumps({name: scored(a, name) for name in MODELS}, indent=1))


def scored(a: argparse.Namespace, name: str) -> dict:
    """Test BLEU and chrF with the model's own search, with and without its shortlist."""
    from aiayn import open_translator
    from aiayn.evaluate.split import evaluate_split
    from aiayn.layout import model_dir
    from aiayn.model import Transformer

    translator = open_translator(getattr(a, name))
    model = Transformer.load(model_dir(getattr(a, name)))
    found = {"parameters": sum(p.numel() for p in model.parameters())}
    outputs = {}
    for shortlist in (False, True):
        cfg = translator.default_search.replace(shortlist=shortlist)
        run = lambda lines, c=cfg: translator.translate(lines, c)  # noqa: E731
        ev = evaluate_split(a.data, "test", run, n=a.quality_lines or None)
        key = "shortlist" if shortlist else "full"
        found[key] = {"bleu": round(ev.scores.bleu, 2), "chrf": round(ev.scores.chrf, 2)}
        outputs[key] = ev.hypotheses
        print(f"scored: {name} {key} {found[key]}", file=sys.stderr, flush=True)
    differ = sum(x != y for x, y in zip(outputs["full"], outputs["shortlist"], strict=True))
    found["outputs_changed_by_shortlist"] = round(differ / len(outputs["full"]), 4)
    found["has_shortlist"] = translator.shortlist is not None
    return found


def opened(a: argparse.Namespace, system: str):
    from aiayn import open_translator

    name, kind = split_name(system)
    engine, precision, compile, _ = KINDS[kind]
    if engine == "ctranslate2":
        return open_translator(a.work / f"ct2-{name}", engine=engine, threads=a.ct2_threads)
    return open_translator(
        getattr(a, name), precision=precision, compile=compile, threads=a.aiayn_threads
    )


# -- one timing (a child process) -----------------------------------------------------------


def child(a: argparse.Namespace, system: str) -> None:
    """Print {config: [seconds, output pieces]} for one system, each configuration warmed up."""
    from aiayn.data.data_dir import DataDir

    kernel_switch(system)
    translator = opened(a, system)
    shortlist = KINDS[split_name(system)[1]][3]
    if shortlist and translator.shortlist is None:
        sys.exit(f"{system}: the model has no shortlist; build it with `aiayn shortlist`")
    lines = DataDir.open(a.data).sources("test", max(a.lines, BATCH_LINES))
    cfg = partial(search, shortlist=shortlist)
    found = timed_searches(translator.nbest, lines, CONFIGS, (a.lines, BATCH_LINES), cfg)
    print(json.dumps(found))


# -- the parent: rounds of fresh children, then the tables ---------------------------------


def spawn(a: argparse.Namespace, *extra: str) -> str:
    """This script as a child with the same models; its last line of output."""
    here = str(Path(__file__).resolve())
    paths = ["--teacher", str(a.teacher), "--student", str(a.student), "--data", str(a.data)]
    sizes = ["--lines", str(a.lines), "--quality-lines", str(a.quality_lines)]
    sizes += ["--ct2-threads", str(a.ct2_threads), "--aiayn-threads", str(a.aiayn_threads)]
    args = [*paths, "--work", str(a.work), *sizes, *extra]
    env = {**os.environ, "AIAYN_COMPILE_CACHE": str(a.work / "compiled")}
    done = subprocess.run([sys.executable, here, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(extra)} failed:\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def measure(a: argparse.Namespace, systems: list[str]) -> dict:
    """{system: {config: [pieces/s per round]}}, and the load average before each round."""
    return interleaved(systems, a.repeats, lambda system: json.loads(spawn(a, "--child", system)))


def tables(quality: dict, results: dict, systems: list[str]) -> str:
    """Markdown: quality per model, then pieces/s per system and configuration, then ratios."""
    out = ["| model | parameters | test BLEU | chrF | + shortlist BLEU | chrF | outputs changed |"]
    out.append("|---|---|---|---|---|---|---|")
    for name, q in quality.items():
        full, cut = q["full"], q["shortlist"]
        out.append(
            f"| {name} | {q['parameters'] / 1e6:.1f} M | {full['bleu']} | {full['chrf']} | "
            f"{cut['bleu']} | {cut['chrf']} | {q['outputs_changed_by_shortlist']:.1%} |"
        )
    speed = results["pieces_per_s"]
    out += ["", "| system | " + " | ".join(CONFIGS) + " |", "|---|" + "---|" * len(CONFIGS)]
    out += [f"| {s} | " + " | ".join(cell(speed[s][c]) for c in CONFIGS) + " |" for s in systems]
    out += ["", *(f"- {line}" for line in ratio_lines(quality, speed))]
    return "\n".join(out)


def ratio_lines(quality: dict, speed: dict) -> list[str]:
    """The issue's goals, as ratios of medians."""

    def med(system: str, config: str = "1, greedy") -> float:
        return statistics.median(speed[system][config])

    kept = quality["student"]["shortlist"]["bleu"] / quality["teacher"]["full"]["bleu"]
    best = "student int8 --compile + shortlist"
    ct2 = "CT2 int8 + vmap on the"
    ratios = [  # (what, numerator, denominator, goal)
        (f"batch 1 greedy, {best} / teacher fp32", best, "teacher fp32", " (goal >= 3)"),
        ("student fp32 / teacher fp32 (like with like)", "student fp32", "teacher fp32", ""),
        (f"{best} / {ct2} student", best, "student CT2 int8 + vmap", " (goal >= 1.0)"),
        (f"{best} / {ct2} teacher", best, "teacher CT2 int8 + vmap", " (goal >= 3)"),
    ]
    return [f"student BLEU (shortlist) / teacher BLEU (full): {kept:.3f} (goal >= 0.95)"] + [
        f"{what}: {med(top) / med(bottom):.2f}x{goal}"
        for what, top, bottom, goal in ratios
        if top in speed and bottom in speed  # both measured in this run
    ]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--teacher", type=Path, required=True, help="a run or model directory")
    p.add_argument("--student", type=Path, required=True, help="a run or model directory")
    p.add_argument("--data", type=Path, required=True, help="prepared data: its test split")
    p.add_argument("--work", type=Path, required=True, help="exports and compiled steps")
    p.add_argument("--lines", type=int, default=40, help="sentences of the batch-1 timing")
    p.add_argument("--quality-lines", type=int, default=0, help="test lines scored (0: all)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument(
        "--ct2-threads", type=int, default=1,
        help="CTranslate2's intra-op threads: 1, its fastest on the 2-core CPU of decode_bench",
    )  # fmt: skip
    p.add_argument(
        "--aiayn-threads", type=int, default=0, help="PyTorch's threads (0: its default)"
    )
    p.add_argument("--systems", nargs="+", default=DEFAULT_SYSTEMS, choices=SYSTEMS)
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--child", choices=SYSTEMS, help=argparse.SUPPRESS)
    p.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a, a.child)
    if a.setup:
        return setup(a)
    a.work.mkdir(parents=True, exist_ok=True)
    spawn(a, "--setup", "--systems", *a.systems)
    quality = json.loads((a.work / "quality.json").read_text())
    results = measure(a, a.systems)
    about = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "date": datetime.date.today().isoformat(),
        "command": " ".join(sys.argv),
    }
    print(f"{about['cpu']}, {about['cores']} cores, {about['date']}; output pieces/s, median "
          f"(min-max) of {a.repeats}; load average before each round: "
          f"{results['load_average_1min']}")  # fmt: skip
    print(tables(quality, results, a.systems))
    if a.json is not None:
        a.json.write_text(json.dumps({"about": about, "quality": quality, **results}, indent=1))


if __name__ == "__main__":
    main()
