"""`aiayn translate` and `aiayn evaluate`."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiayn.commands import document, languages
from aiayn.config import (
    DECODE_PRECISIONS,
    ENGINES,
    LENGTH_PENALTIES,
    STOP_RULES,
    TOO_LONG_POLICIES,
    DecodeConfig,
    EngineConfig,
)
from aiayn.data.casing import CASES, apply_case

if TYPE_CHECKING:
    from aiayn.decode.controls.words import Controls
    from aiayn.engines import Translation, Translator

PAPER = DecodeConfig()  # every default of the search below is read from here
OPENED = EngineConfig()  # ...and of how the model is opened
CASED = {"as-is": "as they are", "upper": "upper-cased", "title": "title-cased"}  # --case


def add_engine(p: argparse.ArgumentParser, compile_help: str) -> None:
    """Options shared by translate, evaluate and serve: the model and how it is opened."""
    p.add_argument("--model", required=True, help="run, checkpoint or model directory")
    p.add_argument("--device", default=OPENED.device, help="cpu, cuda, cuda:1, ...")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=OPENED.engine,
        help="ctranslate2 | onnx: a directory from `aiayn export` as --model; CTranslate2's "
        "beam search needs --length-penalty power or none (it divides by |Y|^alpha, not "
        "GNMT's form)",
    )
    p.add_argument(
        "--precision",
        choices=DECODE_PRECISIONS,
        default=OPENED.precision,
        help="bf16: weights cast; int8: dynamic int8 linear layers, CPU only "
        "(see benchmarks/README.md)",
    )
    p.add_argument("--compile", action="store_true", help=compile_help)


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """How the command line opens its model."""
    return EngineConfig(args.engine, args.device, args.precision, args.compile)


def add_decoding(p: argparse.ArgumentParser) -> None:
    """Options shared by translate and evaluate: the model and the search."""
    add_engine(
        p,
        "run the decoder step compiled ahead of time (CPU; 3x faster at batch 1): the "
        "first use of a beam size compiles for about 20 s, kept on disk for later runs; "
        "with --precision int8 the weights are int8 and the activations bf16",
    )
    p.add_argument(
        "--beam", type=int, default=PAPER.beam, help=f"beam size (paper: {PAPER.beam}); 1 = greedy"
    )
    add_length(p)
    p.add_argument(
        "--no-repeat-ngram",
        type=int,
        default=PAPER.no_repeat_ngram,
        metavar="N",
        help="no n-gram of N pieces twice in an output (fairseq's, Hugging Face's); 0 = off",
    )
    p.add_argument(
        "--max-len-a", type=float, default=PAPER.max_len_a, help="output limit a*source+b"
    )
    p.add_argument("--max-len-b", type=int, default=PAPER.max_len_b)
    p.add_argument(
        "--max-tokens", type=int, default=PAPER.max_tokens, help="source tokens per batch"
    )
    p.add_argument(
        "--max-input-tokens",
        type=int,
        default=PAPER.max_input_tokens,
        help="longest input line, in pieces (see --too-long)",
    )
    p.add_argument(
        "--too-long",
        choices=TOO_LONG_POLICIES,
        default=PAPER.too_long,
        help="what to do with a longer line (each one is named in a warning)",
    )


def add_length(p: argparse.ArgumentParser) -> None:
    """The length setting; by default the one stored with the model (`aiayn tune`), else the
    paper's. Shared by translate, evaluate and serve."""
    p.add_argument(
        "--alpha",
        type=float,
        help=f"length penalty exponent (default: the model's tuned one, else the paper's "
        f"{PAPER.alpha}; --alpha {PAPER.alpha} for the paper's)",
    )
    p.add_argument(
        "--length-penalty",
        choices=LENGTH_PENALTIES,
        help="gnmt: ((5+|Y|)/6)^alpha (paper); power: |Y|^alpha (fairseq, Marian, HF); "
        "default: the model's tuned one, else gnmt",
    )
    p.add_argument(
        "--stop",
        choices=STOP_RULES,
        help="bound: end when no live hypothesis can beat the best finished one (paper); "
        "k-finished: end when beam-size hypotheses have finished (fairseq; favours short ones); "
        "default: the model's tuned one, else bound",
    )


LENGTH_OPTIONS = ("alpha", "length_penalty", "stop")


def add(commands) -> None:
    t = commands.add_parser("translate", help="translate lines from stdin or a file")
    add_decoding(t)
    t.add_argument(
        "--nbest",
        type=int,
        default=PAPER.nbest,
        help="write the n best as 'line ||| translation ||| score'",
    )
    t.add_argument("--sample", action="store_true", help="sample instead of searching")
    t.add_argument("--temperature", type=float, default=PAPER.temperature)
    t.add_argument("--top-k", type=int, default=PAPER.top_k, help="0 = no limit")
    t.add_argument("--top-p", type=float, default=PAPER.top_p, help="1 = no limit")
    t.add_argument("--seed", type=int, default=PAPER.seed, help="for --sample")
    t.add_argument("--input", type=Path, help="default: standard input")
    t.add_argument("--output", type=Path, help="default: standard output")
    document.add_options(t)
    add_controls(t)
    languages.add_tgt_lang(t)
    languages.add_src_lang(t)
    t.set_defaults(run=run_translate)

    e = commands.add_parser("evaluate", help="BLEU and chrF (sacreBLEU) with their signatures")
    add_decoding(e)
    e.add_argument("--data", type=Path, help="a prepared data directory")
    e.add_argument("--split", default="test", choices=["valid", "test"])
    e.add_argument("--src", type=Path, help="or: a source file...")
    e.add_argument("--ref", type=Path, nargs="+", help="...and one or more reference files")
    e.add_argument(
        "--case",
        choices=CASES,
        help="translate upper- or title-cased copies of the sources (or them as-is) and print "
        "BLEU both case-sensitive and case-insensitive; the references stay as they are",
    )
    languages.add_tgt_lang(e)
    languages.add_directions(e)
    e.set_defaults(run=run_evaluate)


def add_controls(p: argparse.ArgumentParser) -> None:
    """Target prefixes, a glossary and suppressed words (docs/translation.md)."""
    p.add_argument(
        "--prefix",
        type=Path,
        metavar="FILE",
        help="one target prefix per input line (an empty line: none): each translation starts "
        "with it",
    )
    p.add_argument(
        "--glossary",
        type=Path,
        metavar="FILE",
        help="'source term<TAB>target term' lines: where a source term occurs, its target "
        "term must appear in the translation (lexically constrained beam search)",
    )
    p.add_argument(
        "--glossary-case", action="store_true", help="match glossary source terms' case exactly"
    )
    p.add_argument(
        "--suppress", nargs="+", metavar="WORD", default=(), help="words never to produce"
    )


def controls_of(args: argparse.Namespace) -> Controls | None:
    """The controls the command line asks for (files read and checked now); None: none."""
    from aiayn.decode.controls.glossary import Glossary
    from aiayn.decode.controls.words import Controls

    if args.glossary_case and args.glossary is None:
        raise ValueError("--glossary-case needs --glossary FILE")
    glossary = Glossary.load(args.glossary, args.glossary_case) if args.glossary else None
    prefixes = tuple(read_lines(args.prefix)) if args.prefix else None
    found = Controls(prefixes, glossary, tuple(args.suppress), str(args.prefix))
    return found if found else None


def search_options(args: argparse.Namespace) -> dict[str, Any]:
    """The search settings given on the command line (checked now, before a model loads): the
    length setting only where given, the others with their defaults."""
    names = {f.name for f in dataclasses.fields(DecodeConfig)}
    given = {k: v for k, v in vars(args).items() if k in names and v is not None}
    DecodeConfig(**given)  # a bad combination is an error before the model loads
    return given


def search_for(translator: Translator, given: dict[str, Any]) -> tuple[DecodeConfig, str]:
    """The translator's default search with the command line's settings over it; and where the
    length setting comes from, in words."""
    cfg = translator.default_search.overridden(given)
    if cfg.beam == 1 or cfg.sample:
        return cfg, "no length penalty needed"
    length = f"{cfg.length_penalty} alpha {cfg.alpha:g}, stop {cfg.stop}"
    chosen = any(k in given for k in LENGTH_OPTIONS)
    origin = "set on the command line" if chosen else translator.search_origin
    return cfg, f"{length} ({origin})"


def read_lines(path: Path | None) -> list[str]:
    """Lines of a UTF-8 file (or stdin; .gz/.xz/.bz2 decompressed); invalid UTF-8 is an error
    naming the line."""
    from aiayn.data.sources import read_input

    raw = sys.stdin.buffer.read() if path is None else read_input(path)
    name = "<stdin>" if path is None else str(path)
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for n, line in enumerate(lines, start=1):
        try:
            out.append(line.rstrip(b"\r").decode("utf-8"))
        except UnicodeDecodeError as err:
            raise ValueError(
                f"{name}, line {n}: not valid UTF-8 ({err.reason}); convert the input to UTF-8"
            ) from None
    return out


def run_translate(args: argparse.Namespace) -> int:
    from aiayn.engines import open_translator

    given = search_options(args)
    documents = document.wanted(args)
    text = document.read_document(args.input) if args.format != "lines" else None
    lines = read_lines(args.input) if text is None else []
    controls = controls_of(args)
    if controls is not None:
        if documents:
            raise ValueError(
                "--prefix, --glossary and --suppress steer plain line mode; "
                "drop --format or --alignments"
            )
        controls.check_lines(len(lines))
    translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    if args.src_lang == "auto":
        sources = lines if text is None else text.splitlines()
        languages.report_sources(sources, translator, args.tgt_lang)
    cfg, length = search_for(translator, given)
    print(f"search: {describe(cfg)}; {length}", file=sys.stderr)
    if documents:
        return write_output(
            args, document.translate(args, translator, cfg, lines if text is None else text)
        )
    if cfg.nbest == 1:
        return write_output(args, lines_text(translator.translate(lines, cfg, controls)))
    return write_output(args, format_nbest(translator.nbest(lines, cfg, controls)))


def lines_text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def format_nbest(nbest: list[list[Translation]]) -> str:
    """'line ||| translation ||| score' for each of the n best of each line."""
    return "".join(
        f"{i} ||| {t.text} ||| {t.score:.4f}\n" for i, line in enumerate(nbest) for t in line
    )


def write_output(args: argparse.Namespace, text: str) -> int:
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from aiayn.engines import open_translator
    from aiayn.evaluate.scores import score
    from aiayn.evaluate.split import evaluate_split

    given = search_options(args)
    translator = open_translator(args.model, engine_config(args), tgt_lang=args.tgt_lang)
    cfg, length = search_for(translator, given)
    if args.directions is not None:
        if args.case is not None:
            raise ValueError("--case scores one direction: give it without --directions")
        return languages.run_directions(args, translator, cfg)

    def translate(sources: list[str]) -> list[str]:
        return translator.translate(sources, cfg)

    if args.data is not None:
        found = evaluate_split(args.data, args.split, translate, case=args.case)
        n, refs, scores = len(found.hypotheses), found.references, found.scores
    elif args.src is not None and args.ref:
        sources, references = read_lines(args.src), [read_lines(r) for r in args.ref]
        if args.case is not None:
            sources = [apply_case(line, args.case) for line in sources]
        hypotheses = translate(sources)
        n, refs = len(sources), len(references)
        scores = score(hypotheses, references, case_insensitive=args.case is not None)
    else:
        raise ValueError("give --data DIR [--split test], or --src FILE --ref FILE [FILE ...]")
    cased = f", sources {CASED[args.case]}" if args.case is not None else ""
    print(f"{n} sentences, {refs} reference(s), {describe(cfg)}{cased}")
    if cfg.beam > 1 and not cfg.sample:
        print(f"length setting: {length}")
    print(scores)
    return 0


def describe(cfg: DecodeConfig) -> str:
    """The search in a few words: "beam 4", "greedy", "sampling"; and n-gram blocking."""
    search = "sampling" if cfg.sample else "greedy" if cfg.beam == 1 else f"beam {cfg.beam}"
    blocked = f", no repeated {cfg.no_repeat_ngram}-gram" if cfg.no_repeat_ngram else ""
    return search + blocked
