"""A tiny multilingual data directory in the contract's format (docs: COMMON contract,
`aiayn.data.languages`, `DataFiles.directions`), made with the library's own vocabulary and
binarize functions: English-centric directions over synthetic word-for-word "verses", the
held-out verses in every language. (`aiayn prepare --langs` may make this fixture instead once
it exists.)"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from aiayn.data.data_dir import DataMeta
from aiayn.data.languages import tag, tagged
from aiayn.data.prepare.binarize import binarize
from aiayn.data.prepare.bpe import train_bpe
from aiayn.layout import DataFiles
from tests.data.conftest import WORDS

FRENCH = {
    "the": "le",
    "house": "maison",
    "is": "est",
    "small": "petit",
    "big": "grand",
    "a": "un",
    "dog": "chien",
    "cat": "chat",
    "sees": "voit",
    "old": "vieux",
    "man": "homme",
    "and": "et",
    "woman": "femme",
    "tree": "arbre",
    "green": "vert",
    "red": "rouge",
    "book": "livre",
    "reads": "lit",
}
LEXICONS = {"en": {w: w for w in WORDS}, "de": WORDS, "fr": FRENCH}
DIRECTIONS = ["en-de", "de-en", "en-fr", "fr-en"]


def verses(n: int, seed: int) -> dict[str, list[str]]:
    """n synthetic verses in every language, line-aligned."""
    rng = random.Random(seed)
    found: dict[str, list[str]] = {lang: [] for lang in LEXICONS}
    for _ in range(n):
        words = [rng.choice(list(WORDS)) for _ in range(rng.randint(2, 12))]
        for lang, lexicon in LEXICONS.items():
            found[lang].append(" ".join(lexicon[w] for w in words).capitalize() + ".")
    return found


def make_multilingual_dir(out: Path, n_train: int = 300, held_out: int = 20, seed: int = 5):
    """The directory `out`: training pairs of DIRECTIONS (the French ones on a third of the
    verses only, so the directions differ in size), valid and test in every language."""
    out.mkdir(parents=True)
    files = DataFiles(out)
    text = verses(n_train + 2 * held_out, seed)
    splits = {"valid": slice(0, held_out), "test": slice(held_out, 2 * held_out)}
    train = slice(2 * held_out, None)
    sizes = {}
    for split, rows in [("train", train), *splits.items()]:
        src, tgt, dirs = [], [], []
        for d, name in enumerate(DIRECTIONS):
            s, t = name.split("-")
            lines = range(len(text["en"]))[rows]
            if split == "train" and "fr" in name:
                lines = lines[: len(lines) // 3]
            src += [tagged(text[s][i], t) for i in lines]
            tgt += [text[t][i] for i in lines]
            dirs += [d] * len(lines)
        files.text(split, "src").write_text("\n".join(src) + "\n", encoding="utf-8")
        files.text(split, "tgt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
        np.save(files.directions(split), np.array(dirs, np.int16))
        sizes[split] = len(src)
        if split != "train":
            for lang in LEXICONS:
                lines = text[lang][rows]
                files.text(split, lang).write_text("\n".join(lines) + "\n", encoding="utf-8")
    model_file, vocab_size = train_bpe(
        [files.text("train", side) for side in ("src", "tgt")],
        out,
        vocab_size=100,
        exact=False,
        user_symbols=[tag(lang) for lang in LEXICONS],
    )
    jobs = [(files.text(sp, side), files.ids(sp, side)) for sp in sizes for side in ("src", "tgt")]
    binarize(jobs, model_file, vocab_size, workers=1)
    DataMeta(
        src_lang="multi",
        tgt_lang="multi",
        vocab_size=vocab_size,
        sizes=sizes,
        n_refs={"valid": 1, "test": 1},
        corpus="synthetic verses in en, de, fr",
        directions=DIRECTIONS,
    ).save(out)
    return out
