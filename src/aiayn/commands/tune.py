"""`aiayn tune RUN`: choose the search setting (length penalty, repetition guards) on the
validation split and store it with the model (what `aiayn train` does when a run closes)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aiayn.layout import SEARCH_FILE


def add(commands) -> None:
    t = commands.add_parser(
        "tune",
        help="choose the length penalty and repetition guards on the validation split, stored "
        "with the model",
        description="Decode the validation split under a grid of length settings (GNMT's "
        "penalty under both stopping rules, |Y|^alpha under fairseq's; one beam search answers "
        "them all), then the best three again with the stutter guard and with the n-gram ban; "
        "keep the best BLEU among the settings that repeat and stutter no more than 1.5 times "
        "the references do, and write it to search.json beside the weights: translate, "
        "evaluate, serve and export use it from then on. A run directory tunes its best and "
        "averaged models; `aiayn train` does this when a run closes.",
    )
    t.add_argument("model", metavar="RUN", type=Path, help="run, checkpoint or model directory")
    t.add_argument("--data", type=Path, help="prepared data (default: the run's, from run.json)")
    t.add_argument(
        "--alphas",
        type=float,
        nargs="+",
        help="the exponents tried (default: 0.6 0.8 1.0 1.2 1.4 1.6; the paper's 0.6 is "
        "always tried)",
    )
    t.add_argument("--beam", type=int, default=4, help="beam size of the search (paper: 4)")
    t.add_argument(
        "--lines",
        type=int,
        help="validation lines decoded, spread evenly over the split (default: 400, what a "
        "run's close decodes; 0: all); a multilingual split takes its first 100 per direction",
    )
    t.add_argument(
        "--no-terms",
        dest="terms",
        action="store_false",
        help="skip the second pass that chooses the setting for sentences with glossary terms",
    )
    t.add_argument(
        "--no-guards",
        dest="guards",
        action="store_false",
        help="try the length settings only, without the repetition guards (a third of the time)",
    )
    t.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    t.set_defaults(run=run_tune)


def run_tune(args: argparse.Namespace) -> int:
    from aiayn.config import DecodeConfig
    from aiayn.evaluate.tune import ALPHAS, GUARDS, TUNE_LINES, length_grid, tune_model_dirs

    if any(not 0 <= a <= 10 for a in args.alphas or ()):
        raise ValueError(f"--alphas {args.alphas}: give exponents from 0 to 10, e.g. 0.6 1.0 1.4")
    if args.lines is not None and args.lines < 0:
        raise ValueError(f"--lines {args.lines}: give a number of lines, or 0 for all of them")
    models = model_dirs(args.model)
    data = args.data or run_data(args.model)
    base = DecodeConfig(beam=args.beam)  # checks the beam
    grid = length_grid(tuple(args.alphas) if args.alphas else ALPHAS)
    guards = GUARDS if args.guards else ()
    lines = TUNE_LINES if args.lines is None else args.lines
    chosen = tune_model_dirs(
        models, data, args.device, base, grid, with_terms=args.terms, guards=guards, lines=lines
    )
    for directory, tuned in zip(models, chosen, strict=True):
        on = tuned.tuned_on
        print(
            f"{directory}: {len(tuned.grid)} settings on {on['sentences']} lines of {data} "
            f"({on['split']}), {on['seconds']:.0f} s"
        )
        if tuned.terms is not None:
            n, took = on["terms_sentences"], on["terms_seconds"]
            print(
                f"  again with a word of each line's reference as a term: {n} lines, {took:.0f} s"
            )
        for row in tuned.grid:
            print(grid_line(row, tuned))
        print(f"wrote {directory / SEARCH_FILE}: {tuned.setting}")
        if tuned.terms is not None:
            print(f"  with glossary terms: {tuned.terms}")
    return 0


def grid_line(row: dict, tuned) -> str:
    """One setting of the grid, its scores, and whether it was chosen."""
    from aiayn.evaluate.search_grid import SearchSetting

    setting, terms = SearchSetting(**row["setting"]), row.get("terms")
    mark = " <- chosen" if setting == tuned.setting else ""
    if terms and tuned.terms and setting.guarded(*tuned.terms.guards) == tuned.terms:
        mark += " <- chosen for terms"
    with_terms = (
        f"  with terms {terms['bleu']:6.2f}, length ratio {terms['length_ratio']:.3f}"
        if terms
        else ""
    )
    return (
        f"  {setting!s:58} BLEU {row['bleu']:6.2f}  length ratio {row['length_ratio']:.3f}  "
        f"repetition {100 * row['repetition']:4.1f}%  stutter {100 * row['stutter']:4.1f}%"
        f"{with_terms}{mark}"
    )


def model_dirs(path: Path) -> list[Path]:
    """The models of a run (its best and its average), or the one model directory named."""
    from aiayn import layout
    from aiayn.evaluate.tune import run_models

    return run_models(path) or [layout.model_dir(path)]


def run_data(path: Path) -> Path:
    """The data a run was trained on (run.json), for a run or one of its checkpoints."""
    from aiayn import layout

    for run in (path, path.parent.parent):  # RUN, or RUN/checkpoints/NAME
        if (run / layout.RUN_CONFIG).is_file():
            return Path(layout.read_run_config(run, ["data"])["data"])
    raise ValueError(f"{path}: not inside a run directory; name the data with --data DIR")
