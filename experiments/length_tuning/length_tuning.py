"""Does the length setting chosen on validation keep translations from running short? The test
split and its short segments, decoded with each run's stored setting and with the paper's.

    .venv/bin/python experiments/length_tuning/length_tuning.py --runs runs/demo runs/race \
        [--data data/en-de] [--no-repeat 3 4] [--short 18]

For each run: the search `aiayn translate` runs by default (the setting `aiayn train` chose on
the validation split when the run closed, stored in its best model's search.json), the paper's
(gnmt alpha 0.6, stop bound), and the default with `--no-repeat-ngram N`. Each is scored with
sacreBLEU against all references of the test split: BLEU, the length ratio and the repetition
rate (aiayn.evaluate: a word 4 times in a row or a repeated word 3-gram), on every line and on
the short segments (the lines whose source has at most `--short` subwords). Float32, beam 4;
each decoding is timed once (a single pass: read the seconds as a rough cost, not a speed
comparison). Nothing here is chosen on the test split.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: harness/

from harness.machine import cpu_model


def main() -> None:
    from aiayn import DecodeConfig, layout, open_translator
    from aiayn.data.data_dir import DataDir
    from aiayn.data.tokenizer import Tokenizer
    from aiayn.evaluate.scores import score

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, nargs="+", required=True)
    parser.add_argument("--data", type=Path, default=Path("data/en-de"))
    parser.add_argument("--no-repeat", type=int, nargs="*", default=[3, 4])
    parser.add_argument("--short", type=int, default=18)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"{cpu_model()}, {os.cpu_count()} cores, {datetime.date.today()}, commit {commit}, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    data = DataDir(args.data)
    sources, refs = data.sources("test"), data.references("test")
    print(
        "| run | search | BLEU | length ratio | repetition | BLEU, short | ratio, short | "
        "decode s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        translator = open_translator(run)
        pieces = Tokenizer(layout.model_dir(run)).encode(sources)
        short = [i for i, ids in enumerate(pieces) if len(ids) <= args.short]
        tuned = translator.default_search
        searches = [("default: " + describe(tuned), tuned)]
        searches += [("paper: " + describe(DecodeConfig()), DecodeConfig())]
        searches += [
            (f"default, --no-repeat-ngram {n}", tuned.replace(no_repeat_ngram=n))
            for n in args.no_repeat
        ]
        for name, cfg in searches:
            started = time.monotonic()
            hyps = translator.translate(sources, cfg)
            seconds = time.monotonic() - started
            every = score(hyps, refs)
            few = score([hyps[i] for i in short], [[r[i] for i in short] for r in refs])
            print(
                f"| {run} | {name} | {every.bleu:.2f} | {every.length_ratio:.3f} | "
                f"{100 * every.repetition:.1f}% | {few.bleu:.2f} | {few.length_ratio:.3f} | "
                f"{seconds:.0f} |",
                flush=True,
            )
        print(
            f"| {run} | references | | | {100 * every.reference_repetition:.1f}% | "
            f"({len(short)} short lines) | | |"
        )


def describe(cfg) -> str:
    return f"{cfg.length_penalty} alpha {cfg.alpha:g}, stop {cfg.stop}"


if __name__ == "__main__":
    main()
