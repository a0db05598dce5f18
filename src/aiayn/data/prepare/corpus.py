"""The corpora `aiayn prepare` reads: those the options name (a Bible pair, a TSV, two aligned
files), and validation or test files given apart; read in batches, checked for a wrong
encoding."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from aiayn.data.clean import INVALID_UTF8, NUL_BYTE, CleanReport
from aiayn.data.prepare import bible
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.sources import DataError, Pair, count_lines, read_tsv, read_two_files


@dataclass
class Corpus:
    """A stream of pairs, with its size (for the split fractions) and a description."""

    pairs: Iterator[Pair]
    size: int
    description: str
    n_refs: int = 1
    grouped: str = ""  # what a split group is, if not the source sentence
    group_sizes: dict[str, int] | None = None  # known up front: held-out groups are chosen


def open_corpus(opts: PrepareOptions, path: str, report: CleanReport) -> Corpus:
    """A corpus the options name: `path` ("bible" or a TSV file), or their two aligned files."""
    if (opts.src_file is None) != (opts.tgt_file is None):
        raise DataError("give both --src-file and --tgt-file, or neither")
    if opts.src_file is not None and opts.tgt_file is not None:
        return Corpus(
            read_two_files(opts.src_file, opts.tgt_file, report),
            count_lines(opts.src_file),
            f"{opts.src_file} ({opts.src_lang}) + {opts.tgt_file} ({opts.tgt_lang})",
        )
    if path != "bible":
        tsv = Path(path)
        return Corpus(read_tsv(tsv, report), count_lines(tsv), f"{tsv} (TSV)")
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
        found = report.examples.get(INVALID_UTF8) or report.examples.get(NUL_BYTE)
        where = found[0] if found else "an unnamed line"
        raise DataError(
            f"{source}: {bad:,} of {report.read:,} lines are not UTF-8 text (first at {where}); "
            "the file is probably in another encoding (UTF-16, Latin-1...): convert it, e.g. "
            "`iconv -f UTF-16 -t UTF-8 in > out` or `iconv -f LATIN1 -t UTF-8 in > out`"
        )
