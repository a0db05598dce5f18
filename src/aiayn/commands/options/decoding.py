"""The search's flags, shared by translate and evaluate: their defaults are DecodeConfig's."""

from __future__ import annotations

import argparse

from aiayn.commands.options.engine import PAPER, add_engine, add_length, beam_search
from aiayn.config import TOO_LONG_POLICIES, DecodeConfig
from aiayn.config.decode import guards_text

COMPILE_HELP = (
    "run the decoder step compiled ahead of time (CPU; 3x faster at batch 1): the first use of "
    "a beam size compiles for about 20 s, kept on disk for later runs; with --precision int8 "
    "int8 by int8, as CTranslate2 (a kernel built once per CPU, about a minute)"
)


def add_decoding(p: argparse.ArgumentParser, **model: str) -> None:
    """The model (`model`: its flag and help, see `add_engine`), the search and its limits."""
    add_engine(p, COMPILE_HELP, **model)
    p.add_argument(
        "--beam", type=int, default=PAPER.beam, help=f"beam size (paper: {PAPER.beam}); 1 = greedy"
    )
    add_length(p)
    add_shortlist(p)
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
        help="what to do with a longer line: split (default) cuts it into chunks at clause "
        "punctuation, then between words, each translated; truncate, skip and error name it "
        "in a warning",
    )


def add_sampling(p: argparse.ArgumentParser) -> None:
    """Sampling instead of search: --sample and how it draws."""
    p.add_argument("--sample", action="store_true", help="sample instead of searching")
    p.add_argument("--temperature", type=float, default=PAPER.temperature)
    p.add_argument("--top-k", type=int, default=PAPER.top_k, help="0 = no limit")
    p.add_argument("--top-p", type=float, default=PAPER.top_p, help="1 = no limit")
    p.add_argument("--seed", type=int, default=PAPER.seed, help="for --sample")


def describe(cfg: DecodeConfig) -> str:
    """The search in a few words: "beam 4", "greedy", "sampling"; the repetition guards only
    without a beam (with one, the length setting's words name them: `search_for`)."""
    if beam_search(cfg):
        return f"beam {cfg.beam}"
    search = "sampling" if cfg.sample else "greedy"
    return search + guards_text(cfg.no_repeat_ngram, cfg.stutter_guard)


def add_shortlist(p: argparse.ArgumentParser) -> None:
    """`--no-shortlist`: the full output layer where the model has a lexical shortlist."""
    p.add_argument(
        "--no-shortlist",
        dest="shortlist",
        action="store_false",
        help="decode over the full output layer even where the model has a lexical shortlist "
        "(shortlist.safetensors, from `aiayn shortlist`): to compare",
    )
