"""`aiayn prepare`: a parallel corpus -> a ready data directory.

read + clean (streamed) -> split without leakage -> joint BPE -> binarize (parallel) -> report.

What the directory holds is named in `aiayn.layout.DataFiles`. The stages live apart: the
corpora in `corpus`, the split in `splits`, the report in `prepare_report`.
"""

from __future__ import annotations

import shutil
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from aiayn.data.clean import CleanReport
from aiayn.data.data_dir import DataMeta
from aiayn.data.prepare.binarize import binarize
from aiayn.data.prepare.bpe import default_vocab_size, train_bpe
from aiayn.data.prepare.corpus import open_corpus
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.report import write_report
from aiayn.data.prepare.splits import (
    HELD_OUT,
    SplitWriter,
    read_given_splits,
    split_corpus,
    write_train,
)
from aiayn.data.sources import DataError
from aiayn.files import atomic_directory
from aiayn.layout import SIDES, SPLITS, DataFiles

__all__ = ["PrepareOptions", "build", "prepare"]


def prepare(opts: PrepareOptions) -> dict:
    """Build the data directory; returns the report (also printed and saved).

    It is built beside `opts.out` and swapped in only when complete, so a run that fails
    (a bad line in the corpus) leaves an earlier directory there as it was. Encoding runs in
    worker processes started afresh: a script that calls this must guard its entry point with
    `if __name__ == "__main__":`.
    """
    out = Path(opts.out)
    if out.is_dir() and any(out.iterdir()) and not DataFiles(out).meta_file.is_file():
        raise DataError(
            f"--out {out}: holds files but no {DataFiles(out).meta_file.name}, so it is not a data "
            "directory that prepare may replace; give a new or empty directory"
        )
    with atomic_directory(out) as tmp:
        result = build(replace(opts, out=tmp))
    return result


def build(opts: PrepareOptions) -> dict:
    """Write the data directory into `opts.out` (an empty directory)."""
    started = time.perf_counter()
    out = Path(opts.out)
    work = out / ".work"
    work.mkdir(exist_ok=True)
    report = CleanReport()
    held_out: set[int] = set()

    # Read + clean (streamed) and split without leakage: the held-out splits first, then train.
    with ExitStack() as stack:
        corpus = open_corpus(opts, report)
        writers = {s: SplitWriter(out, s, corpus.n_refs, stack) for s in HELD_OUT}
        given_reports = read_given_splits(opts, writers, held_out)
        with open(work / "train.candidates.tsv", "w", encoding="utf-8") as candidates:
            split_corpus(opts, corpus, report, writers, held_out, candidates)
        train = SplitWriter(out, "train", 1, stack)
        write_train(work / "train.candidates.tsv", held_out, report, train)
        report.kept = train.count + sum(
            w.count for s, w in writers.items() if s not in given_reports
        )
    sizes = {"train": train.count, **{s: w.count for s, w in writers.items()}}
    for split, n in sizes.items():
        if n == 0:
            raise DataError(f"the {split} split is empty; check the corpus and the split sizes")

    seconds = {"read, clean, split": time.perf_counter() - started}
    # Joint BPE: one vocabulary for both languages, learned on the training split only.
    vocab_size = opts.vocab_size or default_vocab_size(sizes["train"])
    if opts.progress:
        print(f"learning a {vocab_size:,}-piece joint BPE vocabulary...", file=sys.stderr)
    model_file, vocab_size = train_bpe(
        [DataFiles(out).text("train", side) for side in SIDES],
        out,
        vocab_size,
        max_sentences=opts.bpe_max_sentences,
        threads=opts.workers,
        seed=opts.seed,
        exact=opts.vocab_size is not None,  # a default size may shrink to what the data has
        case_copies=opts.case_copies,
        case_markup=opts.case_markup,
    )
    seconds["learn BPE"] = time.perf_counter() - started - sum(seconds.values())
    # Binarize: token ids, encoded in worker processes.
    jobs = [(split, side) for split in SPLITS for side in SIDES]
    files = DataFiles(out)
    with tqdm(
        total=2 * sum(sizes.values()),
        desc="binarize",
        unit=" sentences",
        disable=not opts.progress,
        file=sys.stderr,
    ) as bar:
        counts = binarize(
            [(files.text(split, side), files.ids(split, side)) for split, side in jobs],
            model_file,
            vocab_size,
            opts.workers,
            bar,
        )
    tokens: dict[str, dict[str, int]] = {split: {} for split in SPLITS}
    for (split, side), n_tokens in zip(jobs, counts, strict=True):
        tokens[split][side] = n_tokens
    shutil.rmtree(work)
    seconds["binarize"] = time.perf_counter() - started - sum(seconds.values())

    # Report: meta.json for the programs, report.txt and report.json for people.
    meta = DataMeta(
        src_lang=opts.src_lang,
        tgt_lang=opts.tgt_lang,
        vocab_size=vocab_size,
        sizes=sizes,
        n_refs={s: corpus.n_refs if s not in given_reports else 1 for s in HELD_OUT},
        corpus=corpus.description,
    )
    meta.save(out)
    result = {
        "corpus": corpus.description,
        "cleaning": report.to_dict(),
        "given": {s: r.to_dict() for s, r in given_reports.items()},
        "split": {
            "seed": opts.seed,
            "unit": corpus.grouped or "source sentence",
            "sizes": sizes,
            "held_out_groups": {s: list(w.groups) for s, w in writers.items() if w.groups},
        },
        "vocabulary": {
            "size": vocab_size,
            "model": model_file.name,
            "type": "joint BPE",
            "case_copies": opts.case_copies,
            "case_markup": opts.case_markup,
        },
        "tokens": tokens,
        "seconds": round(time.perf_counter() - started, 1),
        "stage_seconds": {stage: round(t, 1) for stage, t in seconds.items()},
    }
    write_report(files, result, report, given_reports)
    return result
