"""The target and source language options of `aiayn translate` and `aiayn evaluate`, and
`aiayn evaluate --directions` (a multilingual model scored per direction)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiayn.config import DecodeConfig
    from aiayn.engines import Translator


def add_tgt_lang(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tgt-lang",
        metavar="LANG",
        help="a multilingual model's output language (ISO 639-1, e.g. de): its <2de> tag goes "
        "in front of every line; without it, each line must begin with its own tag",
    )


def add_src_lang(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--src-lang",
        choices=["auto"],
        help="auto: identify each input line's language (py3langid, among a multilingual "
        "model's languages) and say on stderr what was found, naming lines already in the "
        "target language",
    )


def add_directions(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--directions",
        metavar="all|en-de,...",
        help="a multilingual data directory (--data): chrF, BLEU and the off-target rate of "
        "each direction, zero-shot ones included, from its {split}.LANG.txt files",
    )
    p.add_argument("--n", type=int, metavar="N", help="with --directions: the first N lines each")
    p.add_argument("--json", type=Path, metavar="FILE", help="with --directions: write results")


def report_sources(lines: list[str], translator: Translator, tgt_lang: str | None) -> None:
    """Identify each line's language among the model's (every language py3langid knows, for a
    bilingual model) and say on stderr what was found, and which lines are already in the
    target language."""
    from aiayn.engines.languages import model_languages
    from aiayn.evaluate.langid import UNKNOWN, Identifier

    languages = model_languages(translator)
    found = Identifier(languages or None).identify(lines)
    counts = Counter(x for x in found if x != UNKNOWN)
    summary = ", ".join(f"{lang} {n} line(s)" for lang, n in counts.most_common()) or "no text"
    print(f"source language (py3langid, per line): {summary}", file=sys.stderr)
    same = [n for n, x in enumerate(found, start=1) if x == tgt_lang]
    if same:
        shown = ", ".join(map(str, same[:20])) + (", ..." if len(same) > 20 else "")
        print(f"already in {tgt_lang}, the target language: line(s) {shown}", file=sys.stderr)


def run_directions(args: argparse.Namespace, translator: Translator, cfg: DecodeConfig) -> int:
    """`aiayn evaluate --directions`: every direction asked for, scored; a table on stdout and
    with --json, a file for benchmarks and `aiayn plot directions`."""
    from aiayn.data.data_dir import DataDir
    from aiayn.engines.languages import MultilingualTranslator
    from aiayn.evaluate.directions import HEADER, as_json, evaluate_directions, parse_directions
    from aiayn.evaluate.langid import Identifier
    from aiayn.files import atomic_write

    if args.data is None:
        raise ValueError("--directions needs --data DIR, a multilingual data directory")
    if not isinstance(translator, MultilingualTranslator):
        raise ValueError(
            f"--directions: {args.model} is a bilingual model (no <2xx> language tags); "
            "evaluate it with --data DIR or --src/--ref"
        )
    if args.n is not None and args.n < 1:
        raise ValueError(f"--n {args.n}: give 1 or more lines per direction")
    data = DataDir.open(args.data)
    pairs = parse_directions(args.directions, data, args.split, translator.languages)
    identify = Identifier({*translator.languages, *(x for p in pairs for x in p)})

    def translate(lines: list[str], tgt: str) -> list[str]:
        return translator.into(tgt).translate(lines, cfg)

    print(HEADER)
    results = evaluate_directions(
        data, args.split, pairs, translate, identify, args.n, lambda r: print(r.line(), flush=True)
    )
    if results:
        print(f"chrF: {results[0].chrf_signature}")
        for tokenizer in dict.fromkeys(r.bleu_signature for r in results):
            print(f"BLEU: {tokenizer}")
    if args.json is not None:
        about = {"model": str(args.model), "data": str(args.data), "split": args.split}
        text = json.dumps(as_json(results, **about), indent=1) + "\n"
        atomic_write(args.json, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
