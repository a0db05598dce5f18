"""Choosing the search setting on validation, as the paper chose alpha on its development set.

A model from a short run translates too short at the paper's alpha 0.6, and BLEU pays for it
through the brevity penalty; and it repeats itself ("und die Erde und die Erde") or stutters
inside a word ("mehrererererer"), which BLEU barely sees and a reader does not forgive.
`tune_search` decodes the validation split under a grid of length settings at the same time
(evaluate/search_grid.py: one recorded beam search answers every setting exactly), then the best
few of them again under each repetition guard (`GUARDS`), scores each with sacreBLEU, word
repetition and stutter, and keeps the best BLEU among the settings whose outputs repeat and
stutter no more than `REPEAT_BOUND` times the references do. `aiayn train` runs it when a run
closes; `aiayn tune` on an existing run or model.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sacrebleu.metrics import BLEU

from aiayn import layout
from aiayn.config import DecodeConfig
from aiayn.data.data_dir import DataDir
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.controls.steering import SentenceControls
from aiayn.decode.controls.words import word_glue
from aiayn.decode.translate import Model, decode_lines
from aiayn.devices import usable_device
from aiayn.evaluate.scores import repetition_rate, stutter_rate
from aiayn.evaluate.search_grid import SearchSetting, grid_search
from aiayn.evaluate.tuned import PAPER, TunedSearch, write_tuned
from aiayn.model import Transformer

ALPHAS = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6)  # the paper's first: it wins ties
# (no_repeat_ngram, stutter_guard) pairs tried on the plain grid's best length settings: the
# stutter guard alone (it never blocked a human reference we tried), and fairseq's n-gram ban (which
# stops stutter too, at a cost in BLEU where the references repeat; CTranslate2 runs it)
GUARDS = ((0, 3), (3, 0))
GUARDED_SETTINGS = 3  # the plain grid's best length settings tried again under each guard
REPEAT_BOUND = 1.5  # a setting may repeat and stutter this many times the references' rates
PER_DIRECTION = 100  # multilingual validation lines per direction (TrainConfig's default)
# bilingual validation lines tuned on, spread evenly over the split: on the gettext model's 1,117
# the close took a third of the time and chose a setting 0.15 BLEU below the whole split's
# choice there (docs/translation.md)
TUNE_LINES = 400
# GNMT's penalty under the paper's stopping rule, tried up to this exponent: above it the one
# recorded search runs longest (1.6: +25% of the grid's time) and no grid we kept chose it
BOUND_ALPHA_MAX = 1.2
WORD = re.compile(r"\w+")


def length_grid(alphas: tuple[float, ...] = ALPHAS) -> list[SearchSetting]:
    """GNMT's penalty under both stopping rules, and |Y|^alpha (CTranslate2's, fairseq's) under
    fairseq's; the paper's setting first. (|Y|^alpha under "bound" would run every search to
    its length limit: search_grid.py.)"""
    grid = [PAPER]
    for length_penalty, stop in (
        ("gnmt", "bound"),
        ("gnmt", "k-finished"),
        ("power", "k-finished"),
    ):
        tried = [a for a in alphas if stop != "bound" or a <= BOUND_ALPHA_MAX]
        grid += [SearchSetting(a, length_penalty, stop) for a in tried]
    return list(dict.fromkeys(grid))  # the paper's once


def tune_search(
    model: Model,
    tokenizer: Tokenizer,
    data: DataDir | Path,
    split: str = "valid",
    base: DecodeConfig = DecodeConfig(),
    grid: list[SearchSetting] | None = None,
    per_direction: int = PER_DIRECTION,
    with_terms: bool = True,
    guards: tuple[tuple[int, int], ...] = GUARDS,
    lines: int = TUNE_LINES,
) -> TunedSearch:
    """The setting with the best BLEU on `split` among those within the repetition bounds
    (`choose`), decoded with `base`'s beam and limits: every setting of `grid` (default:
    `length_grid()`), and its best few again under each pair of `guards`; ties go to the earlier
    setting (the paper's first). With `with_terms`, also the best length setting for sentences
    with glossary terms (under the chosen guards): each line decoded again with a word of its
    reference that the chosen setting's output lacks (a constrained search runs longer than a
    free one and finds longer outputs; ties go to the setting chosen without terms, then to the
    earlier); its scores are in the grid's first rows, under "terms".

    Args:
        model: in eval mode (float32: the grid's answers are then exact).
        per_direction: in a multilingual directory, the first this many lines of each direction
            (0: all); the whole split of 22 languages' directions would take hours on a CPU.
        lines: in a bilingual directory, at most this many lines spread evenly over the split
            (0: all).
    """
    grid = grid or length_grid()
    if base.beam < 2 or base.sample:
        raise ValueError("the length setting is chosen for beam search: give a beam of 2 or more")
    files = DataDir.open(data)
    sources, references, _ = validation_lines(files, split, per_direction, lines)
    decode = functools.partial(decode_grid, model, tokenizer, base=base)
    started = time.monotonic()
    tried, outputs, found = decode_tried(decode, sources, references, grid, guards)
    decoded_s = time.monotonic() - started
    bounds = repeat_bounds(references[0])
    rows = [{"setting": s.__dict__, **r} for s, r in zip(tried, found, strict=True)]
    best = choose(rows, bounds)
    tuned_on: dict[str, Any] = {
        **lines_record(files, split, len(sources), per_direction),
        "references": len(references),
        "beam": base.beam,
        "seconds": round(time.monotonic() - started, 1),
        "decode_seconds": round(decoded_s, 1),
        **chosen_scores(tried, rows, best, bounds),
    }
    terms = None
    if with_terms:  # the length grid again under the chosen guards, a reference word per line
        decoded = (sources, references, outputs[best])
        terms, terms_on = tune_terms(decode, tokenizer, decoded, grid, tried[best], rows)
        tuned_on |= terms_on
    return TunedSearch(
        setting=tried[best],
        power=best_power(tried, rows, bounds),
        tuned_on=tuned_on,
        grid=rows,
        terms=terms,
    )


def lines_record(files: DataDir, split: str, sentences: int, per_direction: int) -> dict:
    """What `tuned_on` records of the lines tuned on: where from, how many of how many."""
    return {
        "data": str(files.root),
        "split": split,
        "sentences": sentences,
        "per_direction": per_direction if files.meta.directions else None,
        "of_sentences": files.meta.sizes.get(split, sentences),  # the split's, all of them
    }


def decode_tried(
    decode: Callable[..., list[list[str]]],
    sources: list[str],
    references: list[list[str]],
    grid: list[SearchSetting],
    guards: tuple[tuple[int, int], ...],
) -> tuple[list[SearchSetting], list[list[str]], list[dict[str, float]]]:
    """Every setting tried: the grid, then its best under each pair of guards; with the
    outputs of each and their scores."""
    outputs = decode(sources, grid=grid)
    plain = [scores(out, references) for out in outputs]
    guarded = guarded_grid(grid, plain, guards)
    outputs += decode(sources, grid=guarded) if guarded else []
    found = plain + [scores(out, references) for out in outputs[len(grid) :]]
    return grid + guarded, outputs, found


def guarded_grid(
    grid: list[SearchSetting], plain: list[dict[str, float]], guards: tuple[tuple[int, int], ...]
) -> list[SearchSetting]:
    """The `GUARDED_SETTINGS` best settings of `grid` by BLEU (`plain`: their scores), in grid
    order, under each pair of guards; none already in `grid`."""
    top = sorted(sorted(range(len(grid)), key=lambda k: (-plain[k]["bleu"], k))[:GUARDED_SETTINGS])
    found = [grid[k].guarded(*g) for g in guards for k in top]
    return [s for s in dict.fromkeys(found) if s not in grid]


def repeat_bounds(references: list[str]) -> dict[str, float]:
    """The most repetition and stutter a chosen setting's outputs may have: `REPEAT_BOUND` times
    the references' rates, and one line more (references that never repeat allow one line)."""
    slack = 1 / max(len(references), 1)
    return {
        "repetition": REPEAT_BOUND * repetition_rate(references) + slack,
        "stutter": REPEAT_BOUND * stutter_rate(references) + slack,
    }


def excess(row: dict, bounds: dict[str, float]) -> float:
    """How far a row's outputs pass the bounds: 1 or less when within both."""
    return max(row[k] / bounds[k] for k in bounds)


def choose(rows: list[dict], bounds: dict[str, float], among: list[int] | None = None) -> int:
    """The row with the best BLEU among those within the repetition bounds (ties go to the
    earlier: the paper's setting first, unguarded before guarded); where none is within, the one
    that passes them least. `among`: only these rows."""
    keys = range(len(rows)) if among is None else among
    return max(keys, key=lambda k: (-max(excess(rows[k], bounds), 1.0), rows[k]["bleu"], -k))


def validation_lines(
    files: DataDir, split: str, per_direction: int, lines: int = 0
) -> tuple[list[str], list[list[str]], list[int] | None]:
    """The source lines of `split` to tune on, their references (one list per reference), and
    the rows sampled (None: every row): a multilingual split's first `per_direction` of each
    direction, or a bilingual one's `lines` spread evenly (0: all)."""
    sources, references = files.sources(split), files.references(split)
    sample = direction_sample(files, split, per_direction)
    if sample is None and 0 < lines < len(sources):
        sample = np.linspace(0, len(sources) - 1, lines).round().astype(int).tolist()
    if sample is not None:
        sources = [sources[i] for i in sample]
        references = [[ref[i] for i in sample] for ref in references]
    return sources, references, sample


def chosen_scores(
    grid: list[SearchSetting], rows: list[dict], best: int, bounds: dict[str, float]
) -> dict[str, float]:
    """What `tuned_on` records of the figures: the chosen setting's, the paper's, and the
    repetition bounds it was chosen within."""
    paper = next((rows[k] for k, s in enumerate(grid) if s == PAPER), rows[0])
    return {
        "bleu": rows[best]["bleu"],
        "length_ratio": rows[best]["length_ratio"],
        "repetition": rows[best]["repetition"],
        "stutter": rows[best]["stutter"],
        "paper_bleu": paper["bleu"],
        "paper_length_ratio": paper["length_ratio"],
        "paper_repetition": paper["repetition"],
        "paper_stutter": paper["stutter"],
        "max_repetition": round(bounds["repetition"], 4),
        "max_stutter": round(bounds["stutter"], 4),
    }


def best_power(
    grid: list[SearchSetting], rows: list[dict], bounds: dict[str, float]
) -> SearchSetting | None:
    """The best of the grid's |Y|^alpha settings without a repetition guard, chosen as `choose`
    does; None where the grid has none. CTranslate2 has no stutter guard, and under its own
    n-gram ban (`no_repeat_ngram_size`) a test model wrote empty outputs where ours did not:
    it gets no guard unless asked for one."""
    power = [k for k, s in enumerate(grid) if s.length_penalty == "power" and s.guards == (0, 0)]
    return grid[choose(rows, bounds, power)] if power else None


def tune_terms(
    decode: Callable[..., list[list[str]]],
    tokenizer: Tokenizer,
    lines: tuple[list[str], list[list[str]], list[str]],
    grid: list[SearchSetting],
    chosen: SearchSetting,
    rows: list[dict],
) -> tuple[SearchSetting, dict[str, Any]]:
    """The best length setting of `grid` for sentences with glossary terms, under the guards of
    `chosen` (the setting chosen without terms): each line with a term (a word of its reference
    that its output under `chosen` lacks) decoded again by `decode` under every setting; lines
    without one keep that output. Ties go to `chosen`, then to the earlier. Adds each setting's
    scores to its row of `rows` (the grid's first rows: "terms"); returns the setting and what
    `tuned_on` records of it. lines: (sources, references, outputs under `chosen`)."""
    started = time.monotonic()
    sources, references, outputs = lines
    lengths = [s.guarded(*chosen.guards) for s in grid]
    best = lengths.index(chosen)
    words = reference_terms(outputs, references[0])
    which = [i for i, w in enumerate(words) if w]
    controls = term_controls(tokenizer, [words[i] for i in which])
    found = decode([sources[i] for i in which], grid=lengths, controls=controls)
    with_terms_scores: list[dict[str, float]] = []
    for k, row in enumerate(rows[: len(lengths)]):
        merged = list(outputs)
        for i, output in zip(which, found[k], strict=True):
            merged[i] = output
        with_terms_scores.append(scores(merged, references))
        row["terms"] = with_terms_scores[-1]
    at = max(range(len(lengths)), key=lambda k: (with_terms_scores[k]["bleu"], k == best, -k))
    return lengths[at], {
        "terms_sentences": len(which),
        "terms_bleu": with_terms_scores[at]["bleu"],
        "terms_length_ratio": with_terms_scores[at]["length_ratio"],
        "terms_bleu_at_setting": with_terms_scores[best]["bleu"],
        "terms_seconds": round(time.monotonic() - started, 1),
    }


def decode_grid(
    model: Model,
    tokenizer: Tokenizer,
    sources: list[str],
    grid: list[SearchSetting],
    base: DecodeConfig,
    controls: list[SentenceControls | None] | None = None,
) -> list[list[str]]:
    """Per setting of the grid, the translation of every source line (one search for all)."""

    def decode(m: Model, src, rows: list[int]) -> list[list[list[int]]]:
        return grid_search(m, src, grid, base, [controls[i] for i in rows] if controls else None)

    empty: list[list[int]] = [[] for _ in grid]
    outputs = decode_lines(model, tokenizer, sources, decode, empty, base)
    return [tokenizer.decode([out[k] for out in outputs]) for k in range(len(grid))]


def scores(hypotheses: list[str], references: list[list[str]]) -> dict[str, float]:
    """A grid row's figures: BLEU, the output's length over the reference's, repetition and
    stutter."""
    bleu = BLEU().corpus_score(hypotheses, references)
    return {
        "bleu": round(bleu.score, 4),
        "length_ratio": round(bleu.sys_len / max(bleu.ref_len, 1), 4),
        "repetition": round(repetition_rate(hypotheses), 4),
        "stutter": round(stutter_rate(hypotheses), 4),
    }


def reference_terms(outputs: list[str], references: list[str], seed: int = 0) -> list[str | None]:
    """Per line, a glossary term to tune with: a word of its reference that its output lacks
    (letters only, three or more), drawn at random (seeded); None where there is none."""
    pick = random.Random(seed)
    found: list[str | None] = []
    for output, reference in zip(outputs, references, strict=True):
        have = set(WORD.findall(output))
        missing = {w for w in WORD.findall(reference) if w.isalpha() and len(w) > 2} - have
        found.append(pick.choice(sorted(missing)) if missing else None)
    return found


def term_controls(tokenizer: Tokenizer, words: list[str | None]) -> list[SentenceControls | None]:
    """Each line's term (None: none) as `aiayn translate --glossary` gives it to the search."""
    glue = word_glue(tokenizer)
    ids = tokenizer.encode([w or "" for w in words])
    return [
        SentenceControls(terms=(tuple(x),), glue=glue) if w and x else None
        for w, x in zip(words, ids, strict=True)
    ]


def direction_sample(files: DataDir, split: str, per_direction: int) -> list[int] | None:
    """The rows of a multilingual split's first `per_direction` lines of each direction, in
    file order; None for a bilingual directory or `per_direction` 0 (every row)."""
    path = files.directions(split)
    if not files.meta.directions or per_direction == 0 or not path.is_file():
        return None
    directions = np.load(path)
    order = np.argsort(directions, kind="stable")  # rows grouped by direction, in file order
    starts = np.searchsorted(directions[order], directions[order], side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order)) - starts  # a row's place within its direction
    return np.flatnonzero(rank < per_direction).tolist()


def run_models(run: Path) -> list[Path]:
    """The model directories of a run that get a length setting: its best and its average."""
    found = [layout.best_dir(run), layout.averaged_dir(run)]
    return [d for d in found if (d / layout.WEIGHTS_FILE).is_file()]


def tune_model_dirs(
    directories: list[Path],
    data: DataDir | Path,
    device: str | torch.device = "cpu",
    base: DecodeConfig = DecodeConfig(),
    grid: list[SearchSetting] | None = None,
    per_direction: int = PER_DIRECTION,
    with_terms: bool = True,
    guards: tuple[tuple[int, int], ...] = GUARDS,
    lines: int = TUNE_LINES,
) -> list[TunedSearch]:
    """Choose the search setting of each model directory on `data`'s validation split and
    write it beside the weights (search.json); directories holding the same weights (a run's
    best is often its average) are decoded once. Returns each directory's choice."""
    done: dict[str, TunedSearch] = {}
    chosen = []
    for directory in directories:
        weights = hashlib.sha256((Path(directory) / layout.WEIGHTS_FILE).read_bytes()).hexdigest()
        if weights not in done:
            model = Transformer.load(directory, device=usable_device(device)).eval()
            tokenizer = Tokenizer(directory)
            tuned = tune_search(
                model,
                tokenizer,
                data,
                "valid",
                base,
                grid,
                per_direction,
                with_terms,
                guards,
                lines,
            )
            on = tuned.tuned_on | {"weights_sha256": weights}  # which weights it was chosen for
            done[weights] = dataclasses.replace(tuned, tuned_on=on)
        write_tuned(directory, done[weights])
        chosen.append(done[weights])
    return chosen
