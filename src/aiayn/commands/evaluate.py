"""`aiayn evaluate`: BLEU and chrF (sacreBLEU) of a split or of files, and with --directions,
each direction of a multilingual model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aiayn.commands.options.decoding import add_decoding, describe
from aiayn.commands.options.engine import beam_search, engine_config, search_for, search_options
from aiayn.commands.options.languages import add_tgt_lang
from aiayn.commands.options.reading import read_lines
from aiayn.commands.options.renamed import old_spelling
from aiayn.data.casing import CASES, apply_case

if TYPE_CHECKING:
    from aiayn.config import DecodeConfig
    from aiayn.engines import Translator
    from aiayn.evaluate.directions import DirectionScores

CASED = {"as-is": "as they are", "upper": "upper-cased", "title": "title-cased"}  # --case


def add(commands) -> None:
    e = commands.add_parser("evaluate", help="BLEU and chrF (sacreBLEU) with their signatures")
    add_decoding(e)
    e.add_argument("--data", type=Path, help="a prepared data directory")
    e.add_argument(
        "--split",
        default="test",
        metavar="SPLIT",
        help="valid, test (default), or another corpus's held-out set: test-NAME, valid-NAME "
        "(`prepare` with several --corpus)",
    )
    src = e.add_argument("--src-file", type=Path, metavar="FILE", help="or: a source file...")
    ref = e.add_argument(
        "--ref-file",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="...and one or more reference files",
    )
    old_spelling(e, "--src", src)
    old_spelling(e, "--ref", ref)
    e.add_argument(
        "--case",
        choices=CASES,
        help="translate upper- or title-cased copies of the sources (or them as-is) and print "
        "BLEU both case-sensitive and case-insensitive; the references stay as they are",
    )
    add_tgt_lang(e)
    add_directions(e)
    e.set_defaults(run=run_evaluate)


def add_directions(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--directions",
        metavar="all|en-de,...",
        help="a multilingual data directory (--data): chrF, BLEU and the off-target rate of "
        "each direction, zero-shot ones included, from its {split}.LANG.txt files",
    )
    p.add_argument("--n", type=int, metavar="N", help="with --directions: the first N lines each")
    p.add_argument("--json", type=Path, metavar="FILE", help="with --directions: write results")


def run_evaluate(args: argparse.Namespace) -> int:
    from aiayn.engines import open_translator
    from aiayn.evaluate.scores import score
    from aiayn.evaluate.split import evaluate_split

    if args.data is not None:
        check_split(args.data, args.split)  # before the model loads
    given = search_options(args)
    translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    cfg, length = search_for(translator, given)
    if args.directions is not None:
        if args.case is not None:
            raise ValueError("--case scores one direction: give it without --directions")
        return run_directions(args, translator, cfg)

    def translate(sources: list[str]) -> list[str]:
        return translator.translate(sources, cfg)

    if args.data is not None:
        found = evaluate_split(args.data, args.split, translate, case=args.case)
        n, refs, scores = len(found.hypotheses), found.references, found.scores
    elif args.src_file is not None and args.ref_file:
        sources, references = read_lines(args.src_file), [read_lines(r) for r in args.ref_file]
        if args.case is not None:
            sources = [apply_case(line, args.case) for line in sources]
        hypotheses = translate(sources)
        n, refs = len(sources), len(references)
        scores = score(hypotheses, references, case_insensitive=args.case is not None)
    else:
        raise ValueError(
            "give --data DIR [--split test], or --src-file FILE --ref-file FILE [FILE ...]"
        )
    cased = f", sources {CASED[args.case]}" if args.case is not None else ""
    print(f"{n} sentences, {refs} reference(s), {describe(cfg)}{cased}")
    if beam_search(cfg):
        print(f"length setting: {length}")
    print(scores)
    return 0


def run_directions(args: argparse.Namespace, translator: Translator, cfg: DecodeConfig) -> int:
    """`aiayn evaluate --directions`: every direction asked for, scored; a table on stdout and
    with --json, a file for benchmarks and `aiayn plot directions`."""
    from aiayn.data.data_dir import DataDir
    from aiayn.engines.languages import MultilingualTranslator
    from aiayn.evaluate.directions import HEADER, evaluate_directions, parse_directions
    from aiayn.evaluate.langid import Identifier

    if args.data is None:
        raise ValueError("--directions needs --data DIR, a multilingual data directory")
    if not isinstance(translator, MultilingualTranslator):
        raise ValueError(
            f"--directions: {args.model} is a bilingual model (no <2xx> language tags); "
            "evaluate it with --data DIR or --src-file/--ref-file"
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
        write_directions(args, results)
    return 0


def write_directions(args: argparse.Namespace, results: list[DirectionScores]) -> None:
    """--json FILE: the directions' results, for benchmarks and `aiayn plot directions`."""
    from aiayn.evaluate.directions import as_json
    from aiayn.files import atomic_write

    about = {"model": str(args.model), "data": str(args.data), "split": args.split}
    text = json.dumps(as_json(results, **about), indent=1) + "\n"
    atomic_write(args.json, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    print(f"wrote {args.json}", file=sys.stderr)


def check_split(data: Path, split: str) -> None:
    """--split names a held-out set the data directory has."""
    from aiayn.data.data_dir import DataDir

    held_out = [s for s in DataDir.open(data).meta.sizes if s != "train"]
    if split not in held_out:
        raise ValueError(
            f"--split {split}: {data} has no such held-out set; it has {', '.join(held_out)}"
        )
