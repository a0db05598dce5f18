"""Splitting corpora without leakage: held-out pairs chosen by a seeded hash of their group (a
Bible chapter, else the source sentence), or whole groups chosen up front to a size, a set per
corpus; given validation/test files kept whole; training pairs whose source is held out in any
set dropped, the rest written as often as their corpus's weight says."""

from __future__ import annotations

import hashlib
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from aiayn.data.bt_tag import bt_tagged
from aiayn.data.clean import HELD_OUT_SOURCE, CleanOptions, CleanReport, PairFilter, source_key
from aiayn.data.prepare.corpus import FILTER_BATCH, Corpus, batched, check_encoding, read_given
from aiayn.data.prepare.mixing import CorpusSpec, copies
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.sources import DataError, Pair
from aiayn.data.term_tags import TermAnnotator
from aiayn.layout import SIDES, DataFiles

HELD_OUT = ("valid", "test")


class SplitWriter:
    """Writes one split's text files: source, target and any extra references."""

    def __init__(self, out: Path, split: str, n_refs: int, stack: ExitStack) -> None:
        self.split = split
        self.n_refs = n_refs
        streams = [*SIDES] + [f"ref{k}" for k in range(1, n_refs)]
        self.files = [
            stack.enter_context(open(DataFiles(out).text(split, s), "w", encoding="utf-8"))  # noqa: SIM115
            for s in streams
        ]
        self.count = 0
        self.groups: dict[str, None] = {}  # ordered set

    def write(self, pair: Pair) -> None:
        texts = [pair.src, pair.tgt, *pair.refs][: len(self.files)]
        texts += [pair.tgt] * (len(self.files) - len(texts))
        for f, text in zip(self.files, texts, strict=True):
            f.write(text + "\n")
        self.count += 1
        if pair.group:
            self.groups[pair.group] = None


@dataclass
class CorpusShare:
    """One corpus of a mix as it is split: its writers and its counts, for the report."""

    spec: CorpusSpec
    index: int  # in the order the corpora were given
    name: str  # in its held-out sets' names (valid-NAME)
    holds: dict[str, SplitWriter | None]  # "valid", "test": where it holds pairs out, if it does
    clean: CleanReport = field(default_factory=CleanReport)
    kept: int = 0  # distinct training pairs
    train: int = 0  # training pairs written, repeats by weight included

    def held_out_sizes(self) -> dict[str, int]:
        """Its held-out sets, by split name, and their sizes."""
        return {w.split: w.count for w in self.holds.values() if w is not None}


def seeded_unit(group: str, seed: int) -> float:
    """A number in [0, 1) from a seeded hash of the group: the same on every run and machine."""
    digest = hashlib.blake2b(f"{seed}|{group}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


def assign_split(group: str, seed: int, p_valid: float, p_test: float) -> str:
    """A split for a group, from a seeded hash: deterministic, and the same for every member."""
    u = seeded_unit(group, seed)
    return "test" if u < p_test else "valid" if u < p_test + p_valid else "train"


def choose_groups(sizes: dict[str, int], seed: int, n_valid: int, n_test: int) -> dict[str, str]:
    """Held-out groups in a seeded random order, until each split reaches its size."""
    order = sorted(sizes, key=lambda g: hashlib.blake2b(f"{seed}|{g}".encode()).digest())
    chosen, filled = {}, {"test": 0, "valid": 0}
    targets = {"test": n_test, "valid": n_valid}
    for group in order:
        split = next((s for s in ("test", "valid") if filled[s] < targets[s]), None)
        if split is None:
            break
        chosen[group] = split
        filled[split] += sizes[group]
    return chosen


def read_given_splits(opts: PrepareOptions, writers: dict, held_out: set[int]) -> dict:
    """Validation/test files the user gave: kept whole (only empty or unreadable lines go, so
    scores are on the whole set); their sources are remembered to keep them out of training."""
    reports = {}
    whole = CleanOptions(max_words=10**9, max_ratio=float("inf"), dedup=False)
    for split, files in (("valid", opts.valid_files), ("test", opts.test_files)):
        if not files:
            continue
        reports[split] = report = CleanReport()
        for batch in batched(read_given(files, report), FILTER_BATCH):
            for pair in PairFilter(whole, report).keep(batch):
                writers[split].write(pair)
                held_out.add(source_key(pair.src))
        check_encoding(report, str(files[0]))
        report.kept = writers[split].count
    return reports


def split_corpus(
    opts: PrepareOptions, share: CorpusShare, corpus: Corpus, held_out: set[int], candidates
) -> None:
    """Clean one corpus a batch at a time; held-out pairs go to its writers (none for a
    synthetic corpus, or a split given as files), training candidates to a file with the
    corpus's index (filtered once every held-out source is known)."""
    given = set(held_out)
    report, holds = share.clean, share.holds
    sizes = {
        s: (opts.valid_size if s == "valid" else opts.test_size) if holds[s] else 0
        for s in HELD_OUT
    }
    p_valid, p_test = (sizes[s] / max(corpus.size, 1) for s in HELD_OUT)
    if corpus.size == 0:
        raise DataError(f"{corpus.description}: the corpus is empty")
    if p_valid + p_test > 0.5:
        raise DataError(
            f"{corpus.description}: the corpus has about {corpus.size:,} pairs: --valid-size "
            f"{opts.valid_size} and --test-size {opts.test_size} would leave too little for "
            "training"
        )
    chosen = None
    if corpus.group_sizes is not None:  # whole groups (Bible chapters), chosen up front
        chosen = choose_groups(corpus.group_sizes, opts.seed, sizes["valid"], sizes["test"])
    keep = PairFilter(opts.clean, report)
    pairs = tqdm(
        corpus.pairs,
        total=corpus.size,
        desc="read",
        unit=" pairs",
        disable=not opts.progress,
        file=sys.stderr,
    )
    for batch in batched(iter(pairs), FILTER_BATCH):
        for pair in keep.keep(batch):
            key = source_key(pair.src)
            if chosen is not None:
                split = chosen.get(pair.group, "train")
            else:  # grouped by source sentence, so repeats of a source stay together
                split = assign_split(str(key), opts.seed, p_valid, p_test)
            if split == "train":
                candidates.write(f"{pair.src}\t{pair.tgt}\t{pair.where}\t{share.index}\n")
            elif key in given:  # already held out: in a given file, or an earlier corpus's set
                report.drop(HELD_OUT_SOURCE, pair.where)
            else:
                writer = holds[split]
                assert writer is not None, "a split is only chosen where it has a size"
                writer.write(pair)
                held_out.add(key)
    check_encoding(report, corpus.description)


def write_train(
    opts: PrepareOptions,
    candidates: Path,
    held_out: set[int],
    shares: list[CorpusShare],
    train,
    terms: TermAnnotator | None = None,
) -> None:
    """Training pairs, less any whose source sentence is held out (no leakage), each written
    as often as its corpus's weight says; a synthetic corpus's sources tagged <BT>; with a
    termbase, sources annotated with the terms their targets use."""
    with open(candidates, encoding="utf-8") as f:
        for line in f:
            src, tgt, where, index = line.rstrip("\n").split("\t")
            share = shares[int(index)]
            if source_key(src) in held_out:
                share.clean.drop(HELD_OUT_SOURCE, where)
                continue
            share.kept += 1
            spec = share.spec
            n = copies(spec.weight, opts.seed, share.index, src, tgt)
            src = terms(src, tgt) if terms is not None else src
            pair = Pair(bt_tagged(src) if spec.synthetic and opts.bt_tag else src, tgt, where)
            for _ in range(n):
                train.write(pair)
            share.train += n
