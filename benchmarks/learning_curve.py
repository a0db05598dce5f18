"""A learning curve: training recipes against corpus size and kind at equal minutes or equal
work; test BLEU and chrF. Issue 56's tables: why no small-data recipe is chosen by default.

    .venv/bin/python benchmarks/learning_curve.py --work WORK [--kinds bible gettext] \
        [--sizes 2000 5000 15000 full] [--minutes 15 | --tokens N] [--precision fp32] [--json FILE]

The corpora, made once under WORK: the default corpus (the Bible, World English Bible ->
Elberfelder 1932, as `aiayn prepare` splits it by chapter) and software messages
(`benchmarks/gettext_corpus.py`: Debian's gettext catalogues, whole packages held out). Each
size is a seeded sample of the kind's training pairs, the smaller inside the larger (one curve,
not independent draws); validation and test are the kind's own at every size, one reference.

The recipes (RECIPES), each a `prepare` vocabulary and a `train` setting over `--preset small
--recipe short`:
- `current`: what a user gets (prepare's vocabulary for the size: 8,000 below 50,000 pairs;
  `short`'s 4,096-token batches), the default before and after issue 56;
- `small-data`: smaller batches (1,024 tokens: more updates from few pairs) and a smaller
  vocabulary (`small_data_vocabulary`: the default for few pairs from 2026-11-30 to 12-02), the
  paper's dropout and smoothing;
- `small-data + sampling`: the same with subword sampling (`subword_sampling=0.1`);
- `small batches`: small-data's batches over the current vocabulary (which of the two helps);
- `small-data + regularisers` (`+ sampling`): Sennrich & Zhang (2019)'s remedies on top: dropout
  0.3, attention and activation dropout 0.1, word dropout 0.1, label smoothing 0.2.
Three seeds (`train --set seed`) at the two smallest sizes, one above. Every run stops after
`--minutes` of wall clock (`--max-minutes`; no search tuned at the close, one search for all:
harness/cells.py) and is scored on the test split.

`--tokens N` sets each run's work instead of its minutes: N target tokens of batches (`max_steps`
= N / the recipe's `max_tokens`), the same on every machine, so that cells run on different CPUs
compare (`--minutes` is then only a cap). The `short` recipe's 1,000 updates of 4,096 tokens are
4,096,000; a recipe of smaller batches validates, saves and averages over the same tokens (its
`valid_every` and `save_every` scaled by the batches' ratio).

Cells are run directories under WORK: a finished one is kept with its scores, and its row is
written to `--json` as soon as it is scored. A row kept there is not run again while its recipe,
corpus and budget (minutes or tokens) are the same (`corpus`: a digest of the train, valid and
test pairs), so the table fills across sessions and machines, the work directory lost or not
(`--kinds`, `--sizes`, `--recipes` and `--seeds` choose what runs now); a cell cut off is trained
again from nothing, as its minutes are wall clock. Without `--tokens` every run is stopped by the
minutes (`short`'s 1,000 steps lifted). Within a (kind, size) block the recipes take turns seed
by seed. Minutes are comparable only on one CPU: each cell records its CPU, and the table marks a
block whose cells ran on different ones. Run it alone.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from aiayn.config import RECIPES as TRAIN_RECIPES
from aiayn.files import atomic_write
from harness.cells import SEARCH, aiayn, cpu_of, logged, scored, spread, trained_for

SIZES = ("2000", "5000", "15000", "full")
SEEDED = 2  # the smallest sizes get 3 seeds
UNBOUNDED = 1_000_000  # `short` stops at 1,000 steps; here the minutes stop every run
SMALL_BATCHES = ["max_tokens=1024"]
REGULARISERS = [
    "dropout=0.3",
    "attention_dropout=0.1",
    "activation_dropout=0.1",
    "word_dropout=0.1",
    "label_smoothing=0.2",
]
SAMPLING = ["subword_sampling=0.1"]
RECIPES: dict[str, list[str]] = {  # name -> train's --set items
    "current": ["max_tokens=4096"],  # short's own, named so that every recipe names its batches
    "small-data": SMALL_BATCHES,
    "small-data + sampling": [*SMALL_BATCHES, *SAMPLING],
    "small batches": SMALL_BATCHES,  # over CURRENT_VOCABULARY (ON_CURRENT_VOCABULARY)
    "small-data + regularisers": [*SMALL_BATCHES, *REGULARISERS],
    "small-data + regularisers + sampling": [*SMALL_BATCHES, *REGULARISERS, *SAMPLING],
}


CURRENT_VOCABULARY = 8_000  # prepare's default below 50,000 pairs
ON_CURRENT_VOCABULARY = {"current", "small batches"}  # the rest: `small_data_vocabulary`


def small_data_vocabulary(pairs: int) -> int:
    """The small-data recipe's pieces (Sennrich & Zhang 2019: fewer merges for less text)."""
    return 2_000 if pairs <= 5_000 else 4_000 if pairs <= 15_000 else CURRENT_VOCABULARY


def splits(a: argparse.Namespace, kind: str) -> dict[str, list[str]]:
    """The kind's train, valid and test pairs as TSV lines (written once under WORK/KIND)."""
    out = a.work / kind
    files = {n: out / f"{n}.tsv" for n in ("train", "valid", "test")}
    if not all(f.is_file() for f in files.values()):
        out.mkdir(parents=True, exist_ok=True)
        if kind == "gettext":
            here = Path(__file__).resolve().parent
            cmd = [sys.executable, str(here / "gettext_corpus.py"), "--out", str(out / "corpus")]
            logged(cmd, out / "corpus.log")
            for name, f in files.items():
                shutil.copyfile(out / "corpus" / f"{name}.tsv", f)
        else:
            base = out / "prepared"
            aiayn("prepare", "--out", str(base), "--no-progress", log=out / "prepare.log")
            for name, f in files.items():
                src = (base / f"{name}.src.txt").read_text(encoding="utf-8").splitlines()
                tgt = (base / f"{name}.tgt.txt").read_text(encoding="utf-8").splitlines()
                f.write_text("".join(f"{s}\t{t}\n" for s, t in zip(src, tgt, strict=True)))
    return {n: f.read_text(encoding="utf-8").splitlines() for n, f in files.items()}


def sample(pairs: list[str], size: str, seed: int = 1) -> list[str]:
    """`size` pairs of the training split (all for "full"), each sample inside the larger ones,
    in the corpus's order."""
    if size == "full" or int(size) >= len(pairs):
        return pairs
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    return [pairs[i] for i in sorted(order[: int(size)])]


def prepared(a: argparse.Namespace, kind: str, size: str, recipe: str) -> Path:
    """The data directory of one (kind, size, vocabulary), made once."""
    found = splits(a, kind)
    train = sample(found["train"], size)
    pieces = (
        CURRENT_VOCABULARY if recipe in ON_CURRENT_VOCABULARY else small_data_vocabulary(len(train))
    )
    vocab = ["--vocab-size", str(pieces)]
    data = a.work / f"data-{kind}-{size}-v{pieces}"
    if not (data / "meta.json").is_file():
        held = {n: a.work / kind / f"{n}.tsv" for n in ("valid", "test")}
        corpus = a.work / kind / f"train-{size}.tsv"
        corpus.write_text("".join(f"{p}\n" for p in train), encoding="utf-8")
        args = ["--corpus", str(corpus), "--valid", str(held["valid"]), "--test", str(held["test"])]
        args += ["--src-lang", "en", "--tgt-lang", "de", "--out", str(data), "--no-progress"]
        aiayn("prepare", *args, *vocab, log=a.work / f"prepare-{data.name}.log")
    return data


def digest(a: argparse.Namespace, kind: str, size: str) -> str:
    """What a cell learned from and was scored on: its train sample, valid and test pairs."""
    found = splits(a, kind)
    text = "\n".join(["\n".join(sample(found["train"], size)), *map("\n".join, found.values())])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cell(a: argparse.Namespace, kind: str, size: str, recipe: str, seed: int, made: dict) -> dict:
    """One run: trained for the minutes (unless it finished before), scored on test; `made`: its
    `made_of`."""
    data = prepared(a, kind, size, recipe)
    name = f"{kind}-{size}-{recipe.replace(' + ', '-').replace(' ', '-')}-seed{seed}"
    name += "" if a.tokens is None else f"-{a.tokens}t"
    args = ["--data", str(data), "--preset", "small", "--recipe", "short"]
    sets = (f"seed={seed}", *work(a.tokens, recipe), *RECIPES[recipe])
    run = trained_for(a.work / name, a.minutes, a.precision, args, sets)
    steps = max(int(c.name.split("_")[1]) for c in (run / "checkpoints").glob("step_*"))
    row = {"kind": kind, "size": size, "recipe": recipe, "seed": seed, "steps": steps}
    return {
        **row,
        **made,
        "cpu": cpu_of(run),
        **scored(run, data, a.work / "scores" / f"{name}.json"),
    }


def work(tokens: int | None, recipe: str) -> list[str]:
    """train's --set items that bound a run: its steps lifted (the minutes stop it), or the steps
    that make `tokens` of the recipe's batches, with `short`'s bookkeeping over the same tokens."""
    if tokens is None:
        return [f"max_steps={UNBOUNDED}"]
    short = TRAIN_RECIPES["short"]
    batch = int(dict(s.split("=") for s in RECIPES[recipe])["max_tokens"])
    ratio = short.max_tokens // batch
    return [
        f"max_steps={tokens // batch}",
        f"valid_every={short.valid_every * ratio}",
        f"save_every={short.save_every * ratio}",
    ]


def made_of(a: argparse.Namespace, kind: str, size: str, recipe: str) -> dict:
    """What a cell's row must match to be kept: its recipe's settings, budget and corpus."""
    budget = {"minutes": a.minutes} if a.tokens is None else {"tokens": a.tokens}
    return {"sets": RECIPES[recipe], **budget, "corpus": digest(a, kind, size)}


def same_cell(row: dict, kind: str, size: str, recipe: str, seed: int) -> bool:
    return (row["kind"], row["size"], row["recipe"], row["seed"]) == (kind, size, recipe, seed)


def kept_rows(path: Path | None) -> list[dict]:
    """The rows an earlier call wrote to `--json` (none without one)."""
    if path is None or not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["rows"]


def keep(path: Path | None, rows: list[dict]) -> None:
    """Every row so far, written whole (a cell cut off loses no other cell's row)."""
    if path is not None:
        text = json.dumps({"search": SEARCH, "rows": rows}, indent=1) + "\n"
        atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def table(rows: list[dict]) -> list[str]:
    """Mean and min-max over seeds, a line per (kind, size, recipe)."""
    out = ["| corpus | pairs | recipe | seeds | steps | BLEU | chrF | CPU |"]
    out.append("|---|---|---|---|---|---|---|---|")
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kind"], r["size"], r["recipe"]), []).append(r)
    order = list(RECIPES)
    for (kind, size, recipe), got in sorted(
        groups.items(), key=lambda g: (g[0][0], SIZES.index(g[0][1]), order.index(g[0][2]))
    ):
        block = [r for r in rows if (r["kind"], r["size"]) == (kind, size)]
        cpus = {r["cpu"] for r in block}
        cpu = cpus.pop() if len(cpus) == 1 else "**mixed: " + ", ".join(sorted(cpus)) + "**"
        cols = [spread([r[m] for r in got]) for m in ("bleu", "chrf")]
        steps = spread([r["steps"] for r in got], 0)
        cells = [kind, size, recipe, str(len(got)), steps, *cols, cpu]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, required=True, help="data and runs (kept between calls)")
    p.add_argument("--kinds", nargs="+", choices=("bible", "gettext"), default=["bible", "gettext"])
    p.add_argument("--sizes", nargs="+", choices=SIZES, default=list(SIZES))
    p.add_argument("--recipes", nargs="+", choices=RECIPES, default=list(RECIPES))
    p.add_argument("--seeds", nargs="+", type=int, choices=(1, 2, 3), help="run only these now")
    p.add_argument(
        "--minutes", type=float, default=15.0, help="each run's training (with --tokens: a cap)"
    )
    p.add_argument("--tokens", type=int, help="each run's training in target tokens of batches")
    p.add_argument("--precision", help="passed to train (fp32 where the CPU has no bf16)")
    p.add_argument("--json", type=Path, help="also write the rows here")
    a = p.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    rows = kept_rows(a.json)
    for kind in a.kinds:
        for size in a.sizes:
            seeds = range(1, 4) if SIZES.index(size) < SEEDED else range(1, 2)
            for seed in (s for s in seeds if a.seeds is None or s in a.seeds):
                for recipe in a.recipes:
                    made = made_of(a, kind, size, recipe)
                    had = [r for r in rows if same_cell(r, kind, size, recipe, seed)]
                    if had and made.items() <= had[0].items():
                        continue  # kept from an earlier call: the same recipe, minutes, corpus
                    rows = [r for r in rows if r not in had]
                    rows.append(cell(a, kind, size, recipe, seed, made))
                    print(json.dumps(rows[-1]), flush=True)
                    keep(a.json, rows)
    budget = f"{a.minutes:g} min" if a.tokens is None else f"{a.tokens:,} tokens"
    print(f"{datetime.date.today().isoformat()}; test BLEU / chrF, {SEARCH}, {budget}")
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
