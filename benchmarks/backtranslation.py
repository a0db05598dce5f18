"""Back-translation at equal minutes: one parallel corpus alone, and with K back-translated
pairs made by beam search or by sampling, tagged and untagged; test BLEU and chrF. Issue 57's
table.

    .venv/bin/python benchmarks/backtranslation.py --work /tmp/bt-bench --minutes 30 \
        [--reverse-minutes 60] [--precision fp32] [--share 0.25] [--ratio 2] [--json FILE]

The data, from the default corpus (made once, reproducibly, by `corpus`): the Bible's verse
pairs World English Bible -> Elberfelder 1932 split by chapter with a seeded hash: about 4% of
the chapters for validation, 4% for test, `--share` of the rest as the parallel corpus; the other
chapters give the monolingual German, in **Schlachter 1951**, a German version no model here
sees in parallel and of another style (the issue's suggestion), K = `--ratio` x the parallel
pairs of it. Nothing of the validation or test chapters is in either.

The cells, each a directory under WORK (a finished one is reused, so the table fills across
sessions, and one cut off is trained again from nothing; `--only` runs some now), every
training `train --preset small --recipe short --max-minutes N --set tune_search=false`:
- the reverse model, de -> en on the parallel pairs for `--reverse-minutes` (a means, not a
  system of the table; back-translations help only from a model that translates); its
  translations of the German are the back-translations (`aiayn backtranslate`: its own beam
  search; and `--sample`, the whole distribution, Edunov et al. 2018);
- en -> de on the parallel pairs alone, and on them with each synthetic corpus
  (`prepare --synthetic`, tagged `<BT>` or `--no-bt-tag`), each data set with its own BPE
  (8,000 pieces, the default for these sizes), as a user would prepare it.
Scored on the test split (the Elberfelder reference) with one search for all (harness/cells.py).
A WORK holds one set of settings (WORK/settings.json; another is refused). Minutes are wall
clock: run it alone. Printed with the CPU model and the date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.cells import SEARCH, aiayn, scored, trained_for
from harness.machine import cpu_model

SOURCE, TARGET, MONOLINGUAL = "4", "e", "s"  # WEB, Elberfelder 1932, Schlachter 1951
HELD_OUT = 0.04  # of the chapters, for validation and for test each
SYSTEMS = {  # name -> the synthetic corpus and prepare's flags; None: the parallel pairs alone
    "parallel only": None,
    "+ BT beam, tagged": ("bt-beam.tsv", []),
    "+ BT beam, untagged": ("bt-beam.tsv", ["--no-bt-tag"]),
    "+ BT sampled, tagged": ("bt-sampled.tsv", []),
    "+ BT sampled, untagged": ("bt-sampled.tsv", ["--no-bt-tag"]),
}


def where(u: float, share: float) -> str:
    """The part a chapter goes to, from its seeded hash u in [0, 1) (the one `prepare` splits
    by)."""
    if u < HELD_OUT:
        return "valid"
    if u < 2 * HELD_OUT:
        return "test"
    return "parallel" if u < 2 * HELD_OUT + share * (1 - 2 * HELD_OUT) else "monolingual"


def corpus(a: argparse.Namespace) -> dict[str, Path]:
    """The parallel, held-out and monolingual files under WORK/corpus (written once)."""
    from aiayn.data.clean import CleanReport
    from aiayn.data.prepare.bible import default_db, read_bible
    from aiayn.data.prepare.splits import seeded_unit

    out = a.work / "corpus"
    files = {n: out / f"{n}.tsv" for n in ("parallel", "reverse", "valid", "test", "valid-rev")}
    files["monolingual"] = out / "mono.de.txt"
    if all(f.is_file() for f in files.values()):
        return files
    out.mkdir(parents=True, exist_ok=True)
    parts: dict[str, list[str]] = {n: [] for n in ("valid", "test", "parallel")}
    for pair in read_bible(default_db(), SOURCE, TARGET, [], CleanReport()):
        part = where(seeded_unit(pair.group, a.seed), a.share)
        if part != "monolingual":
            parts[part].append(f"{pair.src}\t{pair.tgt}")
    german = [
        pair.tgt  # the Schlachter verses of the monolingual chapters
        for pair in read_bible(default_db(), SOURCE, MONOLINGUAL, [], CleanReport())
        if where(seeded_unit(pair.group, a.seed), a.share) == "monolingual"
    ]
    k = int(a.ratio * len(parts["parallel"]))
    if len(german) < k:
        sys.exit(f"{len(german):,} monolingual verses, fewer than K = {k:,}: lower --share")
    swapped = {n: ["\t".join(x.split("\t")[::-1]) for x in parts[n]] for n in ("parallel", "valid")}
    texts = {**parts, "reverse": swapped["parallel"], "valid-rev": swapped["valid"]}
    texts["monolingual"] = [german[i * len(german) // k] for i in range(k)]  # spread evenly
    for name, lines in texts.items():
        tmp = files[name].with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        tmp.rename(files[name])
    sizes = {name: len(lines) for name, lines in texts.items()}
    (out / "sizes.json").write_text(json.dumps(sizes, indent=1) + "\n")
    return files


def prepared(a: argparse.Namespace, name: str, corpora: list[str], held_out: list[str]) -> Path:
    data = a.work / f"data-{name}"
    if not (data / "meta.json").is_file():
        args = ["--out", str(data), *corpora, *held_out, "--no-progress"]
        aiayn("prepare", *args, log=a.work / f"prepare-{name}.log")
    return data


def trained(a: argparse.Namespace, name: str, data: Path) -> Path:
    minutes = a.reverse_minutes if name == "reverse" else a.minutes
    args = ["--data", str(data), "--preset", "small", "--recipe", "short"]
    return trained_for(a.work / f"run-{name}", minutes, a.precision, args)


def backtranslated(a: argparse.Namespace, files: dict[str, Path], name: str) -> Path:
    """The monolingual German translated by the reverse model: beam or sampled."""
    out = a.work / name
    if not out.is_file():
        reverse = trained(a, "reverse", reverse_data(a, files))
        sample = ["--sample", "--seed", "1"] if "sampled" in name else []
        args = ["--model", str(reverse), "--input", str(files["monolingual"]), "--out", str(out)]
        aiayn("backtranslate", *args, *sample, "--no-progress", log=a.work / f"{out.stem}.log")
    return out


def reverse_data(a: argparse.Namespace, files: dict[str, Path]) -> Path:
    held_out = ["--valid", str(files["valid-rev"]), "--test", str(files["valid-rev"])]
    args = ["--corpus", str(files["reverse"]), "--src-lang", "de", "--tgt-lang", "en"]
    return prepared(a, "reverse", args, held_out)


def cell(a: argparse.Namespace, files: dict[str, Path], system: str) -> dict:
    """One row: the system trained (unless it was) and scored on the test split."""
    held_out = ["--valid", str(files["valid"]), "--test", str(files["test"])]
    corpora = ["--corpus", str(files["parallel"])]
    synthetic = SYSTEMS[system]
    if synthetic is not None:
        corpora += ["--synthetic", str(backtranslated(a, files, synthetic[0])), *synthetic[1]]
    name = system.strip("+ ").replace(", ", "-").replace(" ", "-")
    data = prepared(a, name, corpora, held_out)
    run = trained(a, name, data)
    memo = a.work / "scores" / f"{name}.json"
    return {"system": system, "run": str(run), **scored(run, data, memo)}


def settled(a: argparse.Namespace) -> None:
    """Hold WORK to one set of settings: its cells are reused, so a call with other minutes or
    another split would mix two tables. The first call records them (WORK/settings.json)."""
    if a.reverse_minutes is None:
        a.reverse_minutes = a.minutes
    names = ("minutes", "reverse_minutes", "share", "ratio", "seed", "precision")
    now = {name: getattr(a, name) for name in names}
    record = a.work / "settings.json"
    if not record.is_file():
        record.write_text(json.dumps(now, indent=1) + "\n")
        return
    before = json.loads(record.read_text())
    if before != now:
        diff = [f"{k} {before.get(k)} -> {v}" for k, v in now.items() if before.get(k) != v]
        changed = ", ".join(diff)
        sys.exit(f"{record}: this WORK holds cells made with other settings ({changed}); "
                 "give another --work, or the same settings")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, required=True, help="data and runs (kept between calls)")
    p.add_argument("--minutes", type=float, default=30.0, help="each en->de model's training")
    p.add_argument("--reverse-minutes", type=float, help="the reverse model's (default: --minutes)")
    p.add_argument("--share", type=float, default=0.25, help="of the chapters: parallel")
    p.add_argument("--ratio", type=float, default=2.0, help="K / parallel pairs")
    p.add_argument("--seed", type=int, default=1, help="the chapters' split")
    p.add_argument("--precision", help="passed to train (fp32 where the CPU has no bf16)")
    p.add_argument("--only", nargs="+", choices=list(SYSTEMS), default=list(SYSTEMS))
    p.add_argument("--json", type=Path, help="also write the table here")
    a = p.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    settled(a)
    files = corpus(a)
    sizes = json.loads((a.work / "corpus" / "sizes.json").read_text())
    rows = []
    for system in a.only:
        rows.append(cell(a, files, system))
        print(json.dumps(rows[-1]), flush=True)
    about = {"cpu": cpu_model(), "date": datetime.date.today().isoformat(), "search": SEARCH}
    minutes = f"{a.minutes:g} minutes each, the reverse model {a.reverse_minutes:g}"
    print(f"{about['cpu']}, {about['date']}; {minutes}; pairs: {sizes}")
    print("| system | test BLEU | test chrF |\n|---|---|---|")
    for r in rows:
        print(f"| {r['system']} | {r['bleu']} | {r['chrf']} |")
    if a.json is not None:
        about |= {"minutes": a.minutes, "reverse minutes": a.reverse_minutes, "sizes": sizes}
        a.json.write_text(json.dumps({"about": about, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
