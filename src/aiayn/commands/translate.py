"""`aiayn translate` and `aiayn evaluate`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add(commands) -> None:
    t = commands.add_parser("translate", help="translate lines from stdin or a file")
    t.add_argument("--model", required=True, help="run, checkpoint or model directory")
    t.add_argument("--input", type=Path, help="default: standard input")
    t.add_argument("--output", type=Path, help="default: standard output")
    t.add_argument("--max-tokens", type=int, default=4096, help="source tokens per batch")
    t.add_argument("--device", default="cpu")
    t.set_defaults(run=run_translate)

    e = commands.add_parser("evaluate", help="BLEU and chrF (sacreBLEU) with their signatures")
    e.add_argument("--model", required=True, help="run, checkpoint or model directory")
    e.add_argument("--data", type=Path, help="a prepared data directory")
    e.add_argument("--split", default="test", choices=["valid", "test"])
    e.add_argument("--src", type=Path, help="or: a source file...")
    e.add_argument("--ref", type=Path, nargs="+", help="...and one or more reference files")
    e.add_argument("--max-tokens", type=int, default=4096)
    e.add_argument("--device", default="cpu")
    e.set_defaults(run=run_evaluate)


def read_lines(path: Path | None) -> list[str]:
    """Lines of a UTF-8 file (or stdin); invalid UTF-8 is an error naming the line."""
    raw = sys.stdin.buffer.read() if path is None else Path(path).read_bytes()
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
    from aiayn.decode.greedy import greedy_decode
    from aiayn.decode.translate import load_translator, translate_lines

    model, tokenizer = load_translator(args.model, args.device)
    lines = read_lines(args.input)
    hyps = translate_lines(model, tokenizer, lines, greedy_decode, args.max_tokens)
    text = "".join(h + "\n" for h in hyps)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from aiayn.decode.greedy import greedy_decode
    from aiayn.decode.translate import load_translator, translate_lines
    from aiayn.evaluate import score
    from aiayn.train.validate import references

    if args.data is not None:
        sources = read_lines(args.data / f"{args.split}.src.txt")
        refs = references(args.data, args.split)
    elif args.src is not None and args.ref:
        sources, refs = read_lines(args.src), [read_lines(r) for r in args.ref]
    else:
        raise ValueError("give --data DIR [--split test], or --src FILE --ref FILE [FILE ...]")
    model, tokenizer = load_translator(args.model, args.device)
    hyps = translate_lines(model, tokenizer, sources, greedy_decode, args.max_tokens)
    print(f"{len(sources)} sentences, {len(refs)} reference(s), greedy decoding")
    print(score(hyps, refs))
    return 0
