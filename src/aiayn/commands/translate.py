"""`aiayn translate` and `aiayn evaluate`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from aiayn.config import LENGTH_PENALTIES
from aiayn.decode import DECODE_PRECISIONS, STOP_RULES


def add_decoding(p: argparse.ArgumentParser) -> None:
    """Options shared by translate and evaluate: the model and the search."""
    p.add_argument("--model", required=True, help="run, checkpoint or model directory")
    p.add_argument("--beam", type=int, default=4, help="beam size (paper: 4); 1 = greedy")
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty exponent (paper: 0.6)")
    p.add_argument(
        "--length-penalty",
        choices=LENGTH_PENALTIES,
        default="gnmt",
        help="gnmt: ((5+|Y|)/6)^alpha (paper); power: |Y|^alpha (fairseq, Marian, HF)",
    )
    p.add_argument(
        "--stop",
        choices=STOP_RULES,
        default="bound",
        help="bound: end when no live hypothesis can beat the best finished one (paper); "
        "k-finished: end when beam-size hypotheses have finished (fairseq; favours short ones)",
    )
    p.add_argument("--max-len-a", type=float, default=1.0, help="output limit a*source+b")
    p.add_argument("--max-len-b", type=int, default=50)
    p.add_argument("--max-tokens", type=int, default=4096, help="source tokens per batch")
    p.add_argument(
        "--max-input-tokens",
        type=int,
        default=1024,
        help="longest input line, in pieces (see --too-long)",
    )
    p.add_argument(
        "--too-long",
        choices=["truncate", "skip", "error"],
        default="truncate",
        help="what to do with a longer line (each one is named in a warning)",
    )
    p.add_argument("--device", default="cpu")
    p.add_argument("--engine", choices=["aiayn", "ctranslate2", "onnx"], default="aiayn",
                   help="ctranslate2 | onnx: a directory from `aiayn export` as --model; "
                        "CTranslate2's beam search needs --length-penalty power or none "
                        "(it divides by |Y|^alpha, not GNMT's form)")  # fmt: skip
    p.add_argument("--precision", choices=DECODE_PRECISIONS, default="fp32",
                   help="bf16: weights cast; int8: dynamic int8 linear layers, CPU only "
                        "(see benchmarks/README.md)")  # fmt: skip


def add(commands) -> None:
    t = commands.add_parser("translate", help="translate lines from stdin or a file")
    add_decoding(t)
    t.add_argument("--nbest", type=int, default=1,
                   help="write the n best as 'line ||| translation ||| score'")  # fmt: skip
    t.add_argument("--sample", action="store_true", help="sample instead of searching")
    t.add_argument("--temperature", type=float, default=1.0)
    t.add_argument("--top-k", type=int, default=0, help="0 = no limit")
    t.add_argument("--top-p", type=float, default=1.0, help="1 = no limit")
    t.add_argument("--seed", type=int, default=0, help="for --sample")
    t.add_argument("--input", type=Path, help="default: standard input")
    t.add_argument("--output", type=Path, help="default: standard output")
    t.set_defaults(run=run_translate)

    e = commands.add_parser("evaluate", help="BLEU and chrF (sacreBLEU) with their signatures")
    add_decoding(e)
    e.add_argument("--data", type=Path, help="a prepared data directory")
    e.add_argument("--split", default="test", choices=["valid", "test"])
    e.add_argument("--src", type=Path, help="or: a source file...")
    e.add_argument("--ref", type=Path, nargs="+", help="...and one or more reference files")
    e.set_defaults(run=run_evaluate)


def beam_options(args: argparse.Namespace, nbest: int = 1):
    from aiayn.decode.beam import BeamOptions

    if args.beam < 1 or not 1 <= nbest <= args.beam:
        raise ValueError(f"need 1 <= --nbest ({nbest}) <= --beam ({args.beam})")
    return BeamOptions(
        beam=args.beam, alpha=args.alpha, penalty=args.length_penalty, nbest=nbest,
        max_len_a=args.max_len_a, max_len_b=args.max_len_b, stop=args.stop,
    )  # fmt: skip


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
            raise ValueError(f"{name}, line {n}: not valid UTF-8 ({err.reason}); "
                             "convert the input to UTF-8") from None  # fmt: skip
    return out


def run_translate(args: argparse.Namespace) -> int:
    from aiayn.decode.translate import beam_decoder, load_translator, nbest_lines, translate_lines

    opts = beam_options(args, args.nbest)
    lines = read_lines(args.input)
    limits = input_limits(args)
    if args.engine != "aiayn":
        from aiayn.commands.engines import exported_nbest

        nbest = exported_nbest(args, lines, opts, limits)
        return write_output(args, format_nbest(nbest) if args.nbest > 1 else
                            "".join(n[0][0] + "\n" for n in nbest))  # fmt: skip
    model, tokenizer = load_translator(args.model, args.device, args.precision)
    if args.nbest == 1:
        decoder = sampler(args) if args.sample else beam_decoder(opts)
        hyps = translate_lines(model, tokenizer, lines, decoder, limits)
        text = "".join(h + "\n" for h in hyps)
    else:
        text = format_nbest(nbest_lines(model, tokenizer, lines, opts, limits))
    return write_output(args, text)


def format_nbest(nbest: list[list[tuple[str, float]]]) -> str:
    """'line ||| translation ||| score' for each of the n best of each line."""
    return "".join(
        f"{i} ||| {hyp} ||| {score:.4f}\n" for i, line in enumerate(nbest) for hyp, score in line
    )


def write_output(args: argparse.Namespace, text: str) -> int:
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def input_limits(args: argparse.Namespace):
    from aiayn.decode.translate import InputLimits

    return InputLimits(args.max_tokens, args.max_input_tokens, args.too_long)


def sampler(args: argparse.Namespace):
    from aiayn.decode.sampling import Sampler, SamplingOptions

    opts = SamplingOptions(
        temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, seed=args.seed,
        max_len_a=args.max_len_a, max_len_b=args.max_len_b,
    )  # fmt: skip
    return Sampler(opts)


def run_evaluate(args: argparse.Namespace) -> int:
    from aiayn.decode.translate import beam_decoder, load_translator, translate_lines
    from aiayn.evaluate import score
    from aiayn.train.validate import references

    if args.data is not None:
        sources = read_lines(args.data / f"{args.split}.src.txt")
        refs = references(args.data, args.split)
    elif args.src is not None and args.ref:
        sources, refs = read_lines(args.src), [read_lines(r) for r in args.ref]
    else:
        raise ValueError("give --data DIR [--split test], or --src FILE --ref FILE [FILE ...]")
    opts = beam_options(args)
    if args.engine != "aiayn":
        from aiayn.commands.engines import exported_nbest

        hyps = [n[0][0] for n in exported_nbest(args, sources, opts, input_limits(args))]
    else:
        model, tokenizer = load_translator(args.model, args.device, args.precision)
        hyps = translate_lines(model, tokenizer, sources, beam_decoder(opts), input_limits(args))
    search = (
        "greedy"
        if opts.beam == 1
        else f"beam {opts.beam}, {opts.penalty} alpha {opts.alpha}, stop {opts.stop}"
    )
    print(f"{len(sources)} sentences, {len(refs)} reference(s), {search}")
    print(score(hyps, refs))
    return 0
