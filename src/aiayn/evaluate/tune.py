"""Choosing the length setting on validation, as the paper chose alpha on its development set.

A model from a short run translates too short at the paper's alpha 0.6, and BLEU pays for it
through the brevity penalty. `tune_search` decodes the validation split once, under a grid of
length settings at the same time (evaluate/search_grid.py: one recorded beam search answers every
setting exactly), scores each with sacreBLEU and keeps the best. `aiayn train` runs it when a
run closes; `aiayn tune` on an existing run or model.
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
from aiayn.evaluate.search_grid import LengthSetting, grid_search
from aiayn.evaluate.tuned import PAPER, TunedSearch, write_tuned
from aiayn.model import Transformer

ALPHAS = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6)  # the paper's first: it wins ties
PER_DIRECTION = 100  # multilingual validation lines per direction (TrainConfig's default)
WORD = re.compile(r"\w+")


def length_grid(alphas: tuple[float, ...] = ALPHAS) -> list[LengthSetting]:
    """GNMT's penalty under both stopping rules, and |Y|^alpha (CTranslate2's, fairseq's) under
    fairseq's; the paper's setting first. (|Y|^alpha under "bound" would run every search to
    its length limit: search_grid.py.)"""
    grid = [PAPER]
    for length_penalty, stop in (
        ("gnmt", "bound"),
        ("gnmt", "k-finished"),
        ("power", "k-finished"),
    ):
        grid += [LengthSetting(a, length_penalty, stop) for a in alphas]
    return list(dict.fromkeys(grid))  # the paper's once


def tune_search(
    model: Model,
    tokenizer: Tokenizer,
    data: DataDir | Path,
    split: str = "valid",
    base: DecodeConfig = DecodeConfig(),
    grid: list[LengthSetting] | None = None,
    per_direction: int = PER_DIRECTION,
    with_terms: bool = True,
) -> TunedSearch:
    """The setting of `grid` (default: `length_grid()`) with the best BLEU on `split`, decoded
    with `base`'s beam and limits; ties go to the earlier setting (the paper's first). With
    `with_terms`, also the best for sentences with glossary terms: each line decoded again
    with a word of its reference that the chosen setting's output lacks (a constrained search
    runs longer than a free one and finds longer outputs; ties go to the setting chosen
    without terms, then to the earlier).

    Args:
        model: in eval mode (float32: the grid's answers are then exact).
        per_direction: in a multilingual directory, the first this many lines of each direction
            (0: all); the whole split of 22 languages' directions would take hours on a CPU.
    """
    grid = grid or length_grid()
    if base.beam < 2 or base.sample:
        raise ValueError("the length setting is chosen for beam search: give a beam of 2 or more")
    files = DataDir.open(data)
    sources, references, sample = validation_lines(files, split, per_direction)
    decode = functools.partial(decode_grid, model, tokenizer, grid=grid, base=base)
    started = time.monotonic()
    outputs = decode(sources)
    decoded_s = time.monotonic() - started
    rows = [{"setting": s.__dict__, **scores(outputs[k], references)} for k, s in enumerate(grid)]
    best = max(range(len(grid)), key=lambda k: (rows[k]["bleu"], -k))
    tuned_on: dict[str, Any] = {
        "data": str(files.root),
        "split": split,
        "sentences": len(sources),
        "per_direction": per_direction if sample is not None else None,
        "references": len(references),
        "beam": base.beam,
        "seconds": round(time.monotonic() - started, 1),
        "decode_seconds": round(decoded_s, 1),
        **chosen_scores(grid, rows, best),
    }
    terms = None
    if with_terms:  # the same grid again, each line with a word of its reference as a term
        at, terms_on = tune_terms(decode, tokenizer, sources, references, outputs[best], best, rows)
        terms, tuned_on = grid[at], tuned_on | terms_on
    return TunedSearch(
        setting=grid[best],
        power=best_power(grid, rows),
        tuned_on=tuned_on,
        grid=rows,
        terms=terms,
    )


def validation_lines(
    files: DataDir, split: str, per_direction: int
) -> tuple[list[str], list[list[str]], list[int] | None]:
    """The source lines of `split` to tune on, their references (one list per reference), and
    the rows sampled from a multilingual split (None: every row)."""
    sources, references = files.sources(split), files.references(split)
    sample = direction_sample(files, split, per_direction)
    if sample is not None:
        sources = [sources[i] for i in sample]
        references = [[ref[i] for i in sample] for ref in references]
    return sources, references, sample


def chosen_scores(grid: list[LengthSetting], rows: list[dict], best: int) -> dict[str, float]:
    """What `tuned_on` records of the figures: the chosen setting's and the paper's."""
    paper = next((rows[k] for k, s in enumerate(grid) if s == PAPER), rows[0])
    return {
        "bleu": rows[best]["bleu"],
        "length_ratio": rows[best]["length_ratio"],
        "paper_bleu": paper["bleu"],
        "paper_length_ratio": paper["length_ratio"],
    }


def best_power(grid: list[LengthSetting], rows: list[dict]) -> LengthSetting | None:
    """The best of the grid's |Y|^alpha settings (CTranslate2's penalty; ties go to the
    earlier), or None where the grid has none."""
    power = [k for k, s in enumerate(grid) if s.length_penalty == "power"]
    return grid[max(power, key=lambda k: (rows[k]["bleu"], -k))] if power else None


def tune_terms(
    decode: Callable[..., list[list[str]]],
    tokenizer: Tokenizer,
    sources: list[str],
    references: list[list[str]],
    chosen: list[str],
    best: int,
    rows: list[dict],
) -> tuple[int, dict[str, Any]]:
    """The grid's best setting for sentences with glossary terms: each line with a term (a word
    of its reference that `chosen`, the output of the setting `best`, lacks) decoded again by
    `decode` under every setting; lines without one keep `chosen`. Ties go to `best`, then to
    the earlier. Adds each setting's scores to its row of `rows` ("terms"); returns the index
    of the setting and what `tuned_on` records of it."""
    started = time.monotonic()
    words = reference_terms(chosen, references[0])
    which = [i for i, w in enumerate(words) if w]
    controls = term_controls(tokenizer, [words[i] for i in which])
    found = decode([sources[i] for i in which], controls=controls)
    with_terms_scores: list[dict[str, float]] = []
    for k, row in enumerate(rows):
        merged = list(chosen)
        for i, output in zip(which, found[k], strict=True):
            merged[i] = output
        with_terms_scores.append(scores(merged, references))
        row["terms"] = with_terms_scores[-1]
    at = max(range(len(rows)), key=lambda k: (with_terms_scores[k]["bleu"], k == best, -k))
    return at, {
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
    grid: list[LengthSetting],
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
    grid: list[LengthSetting] | None = None,
    per_direction: int = PER_DIRECTION,
    with_terms: bool = True,
) -> list[TunedSearch]:
    """Choose the length setting of each model directory on `data`'s validation split and
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
                model, tokenizer, data, "valid", base, grid, per_direction, with_terms
            )
            on = tuned.tuned_on | {"weights_sha256": weights}  # which weights it was chosen for
            done[weights] = dataclasses.replace(tuned, tuned_on=on)
        write_tuned(directory, done[weights])
        chosen.append(done[weights])
    return chosen
