"""How finely text in capitals is cut, with and without `aiayn prepare --case-copies P`.

    .venv/bin/python experiments/case/case_pieces.py --copies 0 0.05 0.1 0.2 [--data-root DIR] \
        [--dirs NAME=DATA ...]

For each P, `aiayn prepare` (the default English->German Bible, its default vocabulary) into
DATA-ROOT/copies-P (kept if already there); then, on that directory's test split, both sides:
pieces per line and the share of unknown pieces for the lines as they are, upper-cased and
title-cased (`aiayn.data.casing`, as `evaluate --case` and `case_augment` make them). Longer
pieces sequences for capitals are what made `case_augment` costly (issue 31, item 4): the
vocabulary is learned on ordinary text. `--dirs` adds rows for data directories already
prepared (e.g. with `aiayn prepare --case-markup`, capitals as marker pieces on lower-cased
words). Prints a table for experiments/case/README.md and writes DATA-ROOT/case-pieces.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

from aiayn.data.casing import CASES, apply_case
from aiayn.data.tokenizer import UNK_ID, Tokenizer
from harness.machine import cpu_model


def prepared(root: Path, name: str, *options: str) -> Path:
    out = root / name
    if not (out / "meta.json").is_file():
        cmd = [sys.executable, "-m", "aiayn", "prepare", "--out", str(out), "--no-progress"]
        subprocess.run([*cmd, *options], check=True, capture_output=True)
    return out


def measure(data: Path) -> dict:
    """Pieces per line and % unknown, per side and case, on the test split."""
    tok = Tokenizer(data / "spm.model")
    found = {}
    for side in ("src", "tgt"):
        lines = (data / f"test.{side}.txt").read_text(encoding="utf-8").splitlines()
        for case in CASES:
            ids = tok.encode([apply_case(line, case) for line in lines])
            pieces = sum(map(len, ids))
            unknown = sum(row.count(UNK_ID) for row in ids)
            found[f"{side} {case}"] = {
                "pieces_per_line": round(pieces / len(lines), 2),
                "unknown_pct": round(100 * unknown / pieces, 3),
            }
    return {"vocab_size": tok.vocab_size, "lines": len(lines), "measured": found}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--copies", type=float, nargs="+", default=[0.0, 0.05, 0.1, 0.2])
    p.add_argument("--dirs", nargs="*", default=[], metavar="NAME=DATA", help="and these")
    p.add_argument("--data-root", type=Path, default=Path("runs/case-pieces"))
    args = p.parse_args()
    args.data_root.mkdir(parents=True, exist_ok=True)
    dirs = {
        f"{c:g}": prepared(args.data_root, f"copies-{c:g}", "--case-copies", str(c))
        for c in args.copies
    }
    dirs |= {name: Path(data) for name, _, data in (d.partition("=") for d in args.dirs)}
    results = {name: measure(data) for name, data in dirs.items()}
    report = {"cpu": cpu_model(), "command": " ".join(sys.argv), "results": results}
    (args.data_root / "case-pieces.json").write_text(json.dumps(report, indent=2) + "\n")
    cols = list(next(iter(results.values()))["measured"])
    print("| vocabulary | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for c, r in results.items():
        cells = [
            f"{m['pieces_per_line']:.1f} ({m['unknown_pct']:.2f}% unk)"
            for m in r["measured"].values()
        ]
        print(f"| {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
