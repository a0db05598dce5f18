"""Which training pairs a lexical shortlist is built from: the human references, or the model's
own translations of the training sources.

    .venv/bin/python experiments/shortlist_source/compare.py --model runs/demo \
        --data data/en-de --own data/own --work /tmp/slc [--grid 50:100 50:500 ...]

--data is the model's prepared data (its pairs: the human references), --own a directory
prepared from the model's own greedy translations of the same training sources (`aiayn distill
--beam 1`, then `aiayn prepare --corpus ... --vocab MODEL`, as docs/translation.md says). For
each source and each k:frequent of --grid, the shortlist is built as `aiayn shortlist` builds it
and written into a copy of the model directory; the test split is then translated greedily and
with the model's own search (its search.json), with that shortlist and with the full output
layer: the share of outputs the shortlist changes, BLEU and chrF, and V' (the mean shortlist of
one sentence). Prints a Markdown table.

`--repeats N` then times each shortlist and the full layer on the real job (`open_translator`,
text to text, fp32 or `--engine int8 compile`; greedy, the first 40 test sentences one at a
time and the first 128 in batches of 32), each timing a fresh child process, the systems taking
turns for N rounds (harness/rounds.py): output pieces/s, median (min-max).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

from aiayn import layout, open_translator
from aiayn.config import DecodeConfig, ModelConfig
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.shortlist import Shortlist, write_shortlist
from aiayn.evaluate.shortlist import coverage, lexicon
from aiayn.evaluate.split import evaluate_split
from harness.machine import cpu_model
from harness.rounds import cell, interleaved, timed_searches

GREEDY = DecodeConfig(beam=1, no_repeat_ngram=0, stutter_guard=0)
CONFIGS = {"1, greedy": (1, 1), "32, greedy": (32, 1)}


def scored(model: Path, data: DataDir, cfg: DecodeConfig) -> tuple[list[str], float, float]:
    """The test split's translations with `cfg`, and their BLEU and chrF."""
    translator = open_translator(model)
    ev = evaluate_split(data, "test", lambda lines: translator.translate(lines, cfg))
    return ev.hypotheses, ev.scores.bleu, ev.scores.chrf


def mean_size(model: Path, data: DataDir, shortlist: Shortlist) -> float:
    """V': the mean size of one test sentence's shortlist (`coverage` measures it)."""
    eos = ModelConfig.load_json(model / layout.CONFIG_FILE).eos_id
    sources = [[*ids, eos] for ids in Tokenizer(model).encode(data.sources("test"))]
    return coverage(shortlist, sources, [[] for _ in sources], eos).mean_size


def child(model: Path, data: Path, engine: list[str]) -> None:
    """Print {configuration: [seconds, output pieces]} of one model directory's greedy search
    (over its shortlist where it has one); engine: [precision, "compile"?]."""
    translator = open_translator(model, precision=engine[0], compile="compile" in engine)
    lines = DataDir.open(data).sources("test", 128)
    search = lambda beam: GREEDY.replace(beam=beam)  # noqa: E731
    print(json.dumps(timed_searches(translator.nbest, lines, CONFIGS, (40, 128), search)))


def speed(models: dict[str, Path], data: Path, repeats: int, engine: list[str]) -> None:
    """Pieces/s of each model directory, the systems taking turns in fresh processes."""

    def timed(system: str) -> dict:
        args = [sys.executable, __file__, "--child", str(models[system]), "--data", str(data)]
        args += ["--engine", *engine]
        done = subprocess.run(args, capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    found = interleaved(list(models), repeats, timed)["pieces_per_s"]
    print("\n| shortlist | " + " | ".join(CONFIGS) + " |\n|---|" + "---|" * len(CONFIGS))
    for system, by_config in found.items():
        print(f"| {system} | " + " | ".join(cell(by_config[c]) for c in CONFIGS) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--own", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--grid", nargs="+", default=["50:100", "50:500", "50:2000"])
    parser.add_argument("--repeats", type=int, default=0, help="speed rounds (0: none)")
    parser.add_argument(
        "--engine", nargs="+", default=["fp32"], help="the timed precision [compile]: int8 compile"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        return child(a.child, a.data, a.engine)
    if not (a.model and a.own and a.work):
        parser.error("--model, --own and --work are needed")
    source = layout.model_dir(a.model)
    data = DataDir.open(a.data)
    own = open_translator(source).default_search.replace(shortlist=False)
    searches = {"greedy": GREEDY.replace(shortlist=False), "own search": own}
    full = {name: scored(source, data, cfg) for name, cfg in searches.items()}
    built = {"full layer": a.work / "full"}  # timed: a copy without the shortlist
    print(f"{cpu_model()}, {datetime.date.today()}, test split of {a.data}, {a.model}")
    print(
        "| pairs | k | frequent | V' | greedy changed | BLEU | chrF | own search changed | BLEU |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| none (full layer) | | | | | {full['greedy'][1]:.2f} | {full['greedy'][2]:.2f} | | "
        f"{full['own search'][1]:.2f} |"
    )
    for name, directory in (("references", a.data), ("own translations", a.own)):
        lex = lexicon(DataDir.open(directory))
        for point in a.grid:
            k, frequent = (int(x) for x in point.split(":"))
            model = a.work / f"{name.split()[0]}-{k}-{frequent}"
            shutil.rmtree(model, ignore_errors=True)
            shutil.copytree(source, model)
            shortlist = lex.shortlist(k, frequent)
            write_shortlist(model, shortlist)
            built[f"{name} {k}:{frequent}"] = model
            row = [name, str(k), str(frequent), f"{mean_size(model, data, shortlist):.0f}"]
            for search, cfg in searches.items():
                hyps, bleu, chrf = scored(model, data, cfg.replace(shortlist=True))
                changed = sum(x != y for x, y in zip(hyps, full[search][0], strict=True))
                row += [f"{changed / len(hyps):.1%}", f"{bleu:.2f}"]
                row += [f"{chrf:.2f}"] if search == "greedy" else []
            print("| " + " | ".join(row) + " |", flush=True)
    if a.repeats:
        shutil.rmtree(built["full layer"], ignore_errors=True)
        shutil.copytree(source, built["full layer"])
        (built["full layer"] / layout.SHORTLIST_FILE).unlink(missing_ok=True)
        speed(built, a.data, a.repeats, a.engine)


if __name__ == "__main__":
    main()
