"""`aiayn plot`: positional encodings, the learning rate, a run's metrics, attention, and a
multilingual model's directions."""

from __future__ import annotations

import argparse
from pathlib import Path

from aiayn.config.model import POSITIONAL_LAYOUTS

DIRECTION_METRICS = {"chrf": "chrF", "bleu": "BLEU", "off_target": "off-target rate (%)"}


def add(commands) -> None:
    p = commands.add_parser("plot", help="figures (PNG or SVG, by the --out suffix)")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)

    pos = kinds.add_parser("positional", help="sinusoids and the position x dimension heatmap")
    pos.add_argument("--d-model", type=int, default=512)
    pos.add_argument("--positions", type=int, default=100)
    pos.add_argument("--dims", type=int, nargs="+", default=[0, 1, 20, 21, 40, 41, 60, 61])
    pos.add_argument("--layout", choices=POSITIONAL_LAYOUTS, default="interleaved")
    pos.add_argument("--out", type=Path, default=Path("positional.png"))

    lr = kinds.add_parser("lr", help="the learning-rate schedule")
    lr.add_argument("--d-model", type=int, default=512)
    lr.add_argument("--warmup", type=int, default=4000)
    lr.add_argument("--scale", type=float, default=1.0)
    lr.add_argument("--steps", type=int, default=40000)
    lr.add_argument("--out", type=Path, default=Path("lr.png"))

    met = kinds.add_parser("metrics", help="a run's losses, BLEU and learning rate")
    met.add_argument("run_dir", type=Path, metavar="RUN")
    met.add_argument("--out", type=Path, default=Path("metrics.png"))

    att = kinds.add_parser("attention", help="encoder, decoder and cross-attention heatmaps")
    att.add_argument("sentence")
    att.add_argument("--model", required=True, help="run, checkpoint or model directory")
    att.add_argument("--head", type=int, help="one head (from 0); default: the heads' mean")
    att.add_argument("--beam", type=int, default=4)
    att.add_argument(
        "--out",
        type=Path,
        default=Path("attention.png"),
        help="writes NAME-encoder, NAME-decoder and NAME-cross",
    )

    dirs = kinds.add_parser("directions", help="a multilingual model's direction matrix")
    dirs.add_argument("results", type=Path, help="JSON from `aiayn evaluate --directions --json`")
    dirs.add_argument("--metric", choices=DIRECTION_METRICS, default="chrf")
    dirs.add_argument("--out", type=Path, default=Path("directions.png"))

    vit = kinds.add_parser("vit-attention", help="ViT: the class token's attention to patches")
    vit.add_argument("--model", type=Path, required=True, help="a classify run or model")
    vit.add_argument("--count", type=int, default=6, help="held-out test digits drawn")
    vit.add_argument("--out", type=Path, default=Path("vit-attention.png"))
    p.set_defaults(run=run_plot)


def run_plot(args: argparse.Namespace) -> int:
    from aiayn import plot

    check_numbers(args)
    if args.kind == "positional":
        fig = plot.positional_figure(args.d_model, args.positions, tuple(args.dims), args.layout)
        written = [plot.save(fig, args.out)]
    elif args.kind == "lr":
        written = [
            plot.save(plot.lr_figure(args.d_model, args.warmup, args.scale, args.steps), args.out)
        ]
    elif args.kind == "metrics":
        written = [plot.save(plot.metrics_figure(args.run_dir), args.out)]
    elif args.kind == "directions":
        written = [plot_directions(args)]
    elif args.kind == "vit-attention":
        written = [plot_vit_attention(args)]
    else:
        written = plot_attention(args)
    for path in written:
        print(f"wrote {path}")
    return 0


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse numbers the figures cannot be drawn from, naming the flag and the value."""
    problems = []
    odd = args.kind == "positional" and args.d_model % 2  # sin/cos pairs need an even size
    if args.kind in ("positional", "lr") and (args.d_model < 2 or odd):
        problems.append(f"--d-model {args.d_model}: give an even number, 2 or more (paper: 512)")
    if args.kind == "positional":
        if args.positions < 1:
            problems.append(f"--positions {args.positions}: give 1 or more")
        if bad := [d for d in args.dims if not 0 <= d < args.d_model]:
            problems.append(f"--dims {bad}: each must lie in 0..{args.d_model - 1} (< --d-model)")
    if args.kind == "lr":
        if args.warmup < 1:
            problems.append(f"--warmup {args.warmup}: give 1 or more steps (paper: 4000)")
        if args.steps < 1:
            problems.append(f"--steps {args.steps}: give 1 or more")
        if not args.scale > 0:
            problems.append(f"--scale {args.scale}: give a positive factor")
    if problems:
        raise ValueError("; ".join(problems))


def plot_attention(args: argparse.Namespace) -> list[Path]:
    from aiayn import plot
    from aiayn.decode.attention_maps import attention_for
    from aiayn.decode.translate import load_model

    model, tokenizer = load_model(args.model)
    found = attention_for(model, tokenizer, args.sentence, beam=args.beam, head=args.head)
    which = "mean of heads" if args.head is None else f"head {args.head}"
    out = args.out
    figures = {
        "encoder": (found.encoder, found.source, found.source, "Encoder self-attention"),
        "decoder": (found.decoder, found.target_out, found.target_in, "Decoder self-attention"),
        "cross": (found.cross, found.target_out, found.source, "Cross-attention"),
    }
    return [
        plot.save(
            plot.attention_figure(w, rows, cols, f"{title} ({which})"),
            out.with_name(f"{out.stem}-{name}{out.suffix}"),
        )
        for name, (w, rows, cols, title) in figures.items()
    ]


def plot_directions(args: argparse.Namespace) -> Path:
    from aiayn import plot
    from aiayn.evaluate.directions import matrix, read_results

    results = read_results(args.results)
    langs, cells = matrix(results, args.metric)
    scale = 100 if args.metric == "off_target" else 1  # a share, drawn in percent
    cells = [[None if v is None else scale * v for v in row] for row in cells]
    title = f"{DIRECTION_METRICS[args.metric]} per direction ({args.results.name})"
    figure = plot.directions_figure(langs, cells, DIRECTION_METRICS[args.metric], title)
    return plot.save(figure, args.out)


def plot_vit_attention(args: argparse.Namespace) -> Path:
    from aiayn.layout import model_dir
    from aiayn.vision.build import load_vision_model
    from aiayn.vision.show import draw_examples

    model, cfg = load_vision_model(model_dir(args.model))
    if cfg.task != "classify":
        raise ValueError(f"{args.model}: a {cfg.task} model; vit-attention needs a classify one")
    return draw_examples(model, cfg, "test", args.out, args.count)
