"""The joint vocabulary of `aiayn prepare --langs`: its size and character coverage, chosen on
evidence. For each (size, coverage), learn BPE on the same temperature-sampled mix that prepare
uses and measure, on the held-out validation verses of every language: the share of unknown
pieces and the pieces per verse (how finely each script is cut; more pieces, longer sequences).

    .venv/bin/python experiments/multilingual_vocab/multilingual_vocab.py [--langs all] \
        [--sizes 16000,32000,64000] [--coverages 0.9995,0.99995,1.0] [--out FILE]

`--out` defaults to results-multilingual-vocab.json beside this script.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import sentencepiece as spm

from aiayn.data.languages import tag
from aiayn.data.multilingual.options import MultiOptions, parse_langs
from aiayn.data.multilingual.pairs import held_out_keys
from aiayn.data.multilingual.pipeline import mix_sample, read_versions
from aiayn.data.multilingual.verses import chapter_name
from aiayn.data.prepare import bible
from aiayn.data.prepare.bpe import train_bpe
from aiayn.data.tokenizer import UNK_ID


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--langs", default="all")
    p.add_argument("--sizes", default="16000,32000,64000")
    p.add_argument("--coverages", default="0.9995,0.99995,1.0")
    p.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).with_name("results-multilingual-vocab.json"),
    )
    args = p.parse_args()
    langs = parse_langs(args.langs)
    db = bible.default_db()
    codes = {lang: bible.DEFAULT_VERSION[lang] for lang in langs}
    verses, _ = read_versions(db, codes, 2)
    names = chapter_name(db, bible.DEFAULT_VERSION["en"])
    held, _ = held_out_keys(verses, names, 1, 1000, 1000)
    train_chapters = {k[:2] for v in verses.values() for k in v} - {
        k[:2] for s in held for k in held[s]
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in map(int, args.sizes.split(",")):
            for coverage in map(float, args.coverages.split(",")):
                opts = MultiOptions(out=Path(tmp), langs=langs, vocab_size=size)
                sample = mix_sample(Path(tmp) / "mix.txt", verses, train_chapters, opts)
                started = time.perf_counter()
                model, vocab_size = train_bpe(
                    [sample],
                    Path(tmp),
                    size,
                    max_sentences=opts.bpe_sentences + len(langs),
                    character_coverage=coverage,
                    user_symbols=[tag(lang) for lang in langs],
                )
                seconds = time.perf_counter() - started
                sp = spm.SentencePieceProcessor(model_file=str(model))
                per_lang = {}
                for lang in langs:
                    texts = [verses[lang][k] for k in held["valid"]]
                    ids = sp.encode(texts)
                    pieces = sum(map(len, ids))
                    unknown = sum(i == UNK_ID for seq in ids for i in seq)
                    per_lang[lang] = {
                        "pieces_per_verse": round(pieces / len(texts), 1),
                        "unknown_per_10k": round(1e4 * unknown / pieces, 2),
                    }
                row = {"size": vocab_size, "coverage": coverage, "seconds": round(seconds, 1)}
                rows.append({**row, "languages": per_lang})
                worst = max(per_lang.items(), key=lambda kv: kv[1]["unknown_per_10k"])
                mean = sum(v["pieces_per_verse"] for v in per_lang.values()) / len(per_lang)
                print(
                    f"size {vocab_size:>6,}  coverage {coverage:<7}  {seconds:5.1f} s  "
                    f"pieces/verse {mean:5.1f}  worst unknown {worst[0]} "
                    f"{worst[1]['unknown_per_10k']}/10k",
                    flush=True,
                )
    args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
