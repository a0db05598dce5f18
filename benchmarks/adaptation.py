"""Domain adaptation at equal minutes: a general model fine-tuned on a new domain, with and
without its general data mixed in, against a model trained from scratch on that domain; each
scored in the domain and on the general test set (forgetting). Issue 57's table.

    .venv/bin/python benchmarks/adaptation.py --general MODEL --general-data DATA \
        --general-corpus TSV --work /tmp/adapt --minutes 10 30 [--precision fp32] \
        [--json benchmarks/results-adaptation.json]

The domain is `aiayn prepare`'s default corpus (the Bible) unless `--domain-corpus` names a TSV.
Every system reads it in MODEL's vocabulary (`prepare --vocab MODEL`), the scratch model too,
so all see the same pieces:

- general: MODEL as it is;
- scratch N: `train --preset small --recipe short --max-minutes N` on the domain;
- fine-tuned N: `train --init MODEL --recipe finetune --max-minutes N` on the domain;
- fine-tuned + mixed N: the same on the domain and TSV (MODEL's own training pairs), weights
  1,1 (`prepare --corpus DOMAIN --corpus TSV`).

No run tunes its search at the close (`tune_search=false`): every model is scored with the same
search, beam 4, |Y|^1.0, fairseq's stopping rule, so the table compares weights, not settings.
Each cell is a run directory under WORK; one that finished is not retrained (one cut off is,
from nothing), and its scores are kept in WORK/scores, so the table fills across sessions
(`--only` names the cells to run now). Minutes are wall-clock: run it alone. Printed with the
CPU model and the date.
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

SYSTEMS = ("scratch", "fine-tuned", "fine-tuned + mixed")


def prepared(a: argparse.Namespace) -> dict[str, Path]:
    """The domain's data and the mixed data, in the general model's vocabulary (made once)."""
    domain = ["--corpus", a.domain_corpus] if a.domain_corpus != "bible" else []
    found = {"domain": a.work / "data-domain", "mixed": a.work / "data-mixed"}
    corpora = {
        "domain": domain,
        "mixed": [*(domain or ["--corpus", "bible"]), "--corpus", str(a.general_corpus)],
    }
    for name, directory in found.items():
        if not (directory / "meta.json").is_file():
            weights = ["--weights", "1,1"] if name == "mixed" else []
            args = ["--vocab", str(a.general), "--out", str(directory), *corpora[name], *weights]
            aiayn("prepare", *args, "--no-progress", log=a.work / f"prepare-{name}.log")
    return found


def trained(a: argparse.Namespace, system: str, minutes: float, data: dict[str, Path]) -> Path:
    """The run of one cell, trained unless it already finished."""
    run = a.work / f"{system.replace(' + ', '-').replace(' ', '-')}-{minutes:g}min"
    if system == "scratch":
        args = ["--data", str(data["domain"]), "--preset", "small", "--recipe", "short"]
    else:
        which = data["mixed" if "mixed" in system else "domain"]
        args = ["--init", str(a.general), "--data", str(which), "--recipe", "finetune"]
    return trained_for(run, minutes, a.precision, args)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--general", type=Path, required=True, help="the general model directory")
    p.add_argument("--general-data", type=Path, required=True, help="its data (its test split)")
    p.add_argument("--general-corpus", type=Path, required=True, help="its training pairs, TSV")
    p.add_argument("--domain-corpus", default="bible", help="'bible' (default) or a TSV")
    p.add_argument("--work", type=Path, required=True, help="data and runs (kept between calls)")
    p.add_argument("--minutes", type=float, nargs="+", default=[10.0, 30.0])
    p.add_argument("--precision", help="passed to train (fp32 where the CPU has no bf16)")
    p.add_argument("--only", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    p.add_argument("--json", type=Path, help="also write the table here")
    a = p.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    data = prepared(a)
    rows = [{"system": "general", "minutes": 0, "model": str(a.general)}]
    for minutes in a.minutes:
        for system in a.only:
            run = trained(a, system, minutes, data)
            rows.append({"system": system, "minutes": minutes, "model": str(run)})
    for row in rows:
        model = Path(row["model"])
        for part, where in (("domain", data["domain"]), ("general", a.general_data)):
            row[part] = scored(model, where, a.work / "scores" / f"{model.name}-{part}.json")
        print(json.dumps(row), flush=True)
    about = {"cpu": cpu_model(), "date": datetime.date.today().isoformat(), "search": SEARCH}
    print(f"{about['cpu']}, {about['date']}; test BLEU / chrF, beam 4, |Y|^1.0")
    print("| system | minutes | domain BLEU | domain chrF | general BLEU | general chrF |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        d, g = r["domain"], r["general"]
        print(f"| {r['system']} | {r['minutes']:g} | {d['bleu']} | {d['chrf']} | "
              f"{g['bleu']} | {g['chrf']} |")  # fmt: skip
    if a.json is not None:
        a.json.write_text(json.dumps({"about": about, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
