"""Language identification on single Bible verses: lingua-language-detector against py3langid.

Both run offline from their PyPI packages. For every language of the default corpus package
(one version per language), the verses of held-out chapters (the seeded hash of
`aiayn.data.splits.assign_split`, about 5% of the chapters; verses without a letter, such as
"-" for a verse a version lacks, left out) are identified one at a time, by
each library over all the languages it knows and restricted to the package's languages.
Reported per configuration: accuracy per language, the worst language and what it was taken
for, verses per second on one thread (median and range over interleaved repeats, each repeat a
fresh process), and the process's peak resident memory.

    flock /work/heavy.lock python benchmarks/langid_bench.py --per-lang 300 --repeats 5

With `--prepared DIR` (a directory of `aiayn prepare --langs`) the verses are instead that
directory's held-out test verses, `test.{lang}.txt`, after prepare's cleaning (placeholder
verses dropped): the test sets a multilingual model is scored on.
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from aiayn.data.prepare.bible import clean_verse, default_db
from aiayn.data.prepare.splits import assign_split

# One version per language of the package (checked by reading John 3:16 in each).
VERSION = {
    "en": "4", "de": "e", "fr": "l", "es": "v", "it": "1", "pt": "a", "ru": "r", "uk": "8",
    "pl": "z", "ro": "u", "tr": "t", "ar": "y", "fa": "p", "hi": "i", "bn": "b", "zh": "c",
    "ja": "j", "ko": "n", "id": "6", "vi": "7", "tl": "g", "sw": "h",
}  # fmt: skip
CONFIGS = ("lingua-all", "lingua-22", "py3langid-all", "py3langid-22")


def held_out_verses(per_lang: int, seed: int = 1) -> dict[str, list[str]]:
    """Up to per_lang verses of each language from held-out chapters, evenly spread."""
    conn = sqlite3.connect(f"file:{default_db()}?mode=ro", uri=True)
    found = {}
    for lang, code in VERSION.items():
        rows = conn.execute(
            "SELECT bNumber, cNumber, vText FROM bible WHERE bbName = ? "
            "ORDER BY bNumber, cNumber, vNumber",
            (code,),
        ).fetchall()
        test = (t for b, c, t in rows if assign_split(f"{b} {c}", seed, 0, 0.05) == "test")
        held_out = map(clean_verse, test)
        kept = [t for t in held_out if any(c.isalpha() for c in t)]  # not "-" (a missing verse)
        step = max(len(kept) // per_lang, 1)
        found[lang] = kept[::step][:per_lang]
    conn.close()
    return found


def prepared_verses(directory: Path, per_lang: int) -> dict[str, list[str]]:
    """Up to per_lang held-out test verses of each language of a `prepare --langs` directory."""
    from aiayn.data.data_dir import DataDir

    files = DataDir(directory)
    langs = sorted({lang for d in files.meta.directions for lang in d.split("-")})
    return {lang: files.lines("test", lang, per_lang) for lang in langs}


def identifier(config: str):
    """A function text -> ISO 639-1 code (or "?") for one configuration."""
    library, scope = config.split("-")
    if library == "lingua":
        from lingua import IsoCode639_1, LanguageDetectorBuilder

        builder = (
            LanguageDetectorBuilder.from_all_languages()
            if scope == "all"
            else LanguageDetectorBuilder.from_iso_codes_639_1(
                *[IsoCode639_1.from_str(x) for x in VERSION]
            )
        )
        detector = builder.with_preloaded_language_models().build()

        def lingua(text: str) -> str:
            found = detector.detect_language_of(text)
            return "?" if found is None else found.iso_code_639_1.name.lower()

        return lingua
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    model = LanguageIdentifier.from_model_file(MODEL_FILE)
    if scope != "all":
        model.set_languages(list(VERSION))
    return lambda text: model.classify(text)[0]


def worker(config: str, data: Path) -> None:
    """Identify every verse with one configuration; print the answers, time and memory."""
    verses = json.loads(data.read_text(encoding="utf-8"))
    start = time.perf_counter()
    identify = identifier(config)
    load_s = time.perf_counter() - start
    identify("warm up")
    start = time.perf_counter()
    answers = {lang: [identify(v) for v in texts] for lang, texts in verses.items()}
    seconds = time.perf_counter() - start
    n = sum(len(v) for v in verses.values())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"answers": answers, "verses_per_s": n / seconds, "load_s": load_s, "peak_mb": peak_mb}
    print(json.dumps(out))


def summary(config: str, runs: list[dict]) -> dict:
    """Accuracy per language, the worst language's confusion, speed and memory."""
    answers = runs[0]["answers"]
    accuracy = {
        lang: sum(a == lang for a in got) / len(got) for lang, got in sorted(answers.items())
    }
    worst = min(accuracy, key=lambda x: accuracy[x])
    taken_for = Counter(a for a in answers[worst] if a != worst).most_common(3)
    speeds = [r["verses_per_s"] for r in runs]
    return {
        "config": config,
        "accuracy": accuracy,
        "mean_accuracy": statistics.mean(accuracy.values()),
        "worst": worst,
        "worst_taken_for": taken_for,
        "verses_per_s_median": statistics.median(speeds),
        "verses_per_s_range": [min(speeds), max(speeds)],
        "load_s_median": statistics.median(r["load_s"] for r in runs),
        "peak_mb_median": statistics.median(r["peak_mb"] for r in runs),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--per-lang", type=int, default=300)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results-langid.json"))
    p.add_argument("--prepared", type=Path, help="a prepare --langs directory's test verses")
    p.add_argument("--worker", choices=CONFIGS, help=argparse.SUPPRESS)
    p.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.data)
    data = args.out.with_suffix(".verses.json")
    if args.prepared:
        verses = prepared_verses(args.prepared, args.per_lang)
    else:
        verses = held_out_verses(args.per_lang)
    data.write_text(json.dumps(verses, ensure_ascii=False), encoding="utf-8")
    runs: dict[str, list[dict]] = {c: [] for c in args.configs}
    for r in range(args.repeats):  # interleaved: each repeat runs every configuration once
        for config in args.configs:
            cmd = [sys.executable, __file__, "--worker", config, "--data", str(data)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            runs[config].append(json.loads(done.stdout))
            print(f"repeat {r + 1} {config}: {runs[config][-1]['verses_per_s']:.0f}/s", flush=True)
    data.unlink()
    results = {
        "verses_per_language": {k: len(v) for k, v in verses.items()},
        "versions": VERSION,
        "verses": f"{args.prepared}/test.LANG.txt" if args.prepared else "held-out chapters",
        "configs": [summary(c, runs[c]) for c in args.configs],
    }
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for s in results["configs"]:
        low = s["accuracy"][s["worst"]]
        print(
            f"{s['config']}: mean {100 * s['mean_accuracy']:.1f}%, worst {s['worst']} "
            f"{100 * low:.1f}% (taken for {s['worst_taken_for']}), "
            f"{s['verses_per_s_median']:.0f} verses/s, peak {s['peak_mb_median']:.0f} MB"
        )


if __name__ == "__main__":
    main()
