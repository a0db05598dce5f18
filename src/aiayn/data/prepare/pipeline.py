"""`aiayn prepare`: a parallel corpus -> a ready data directory.

read + clean (streamed) -> split without leakage -> joint BPE (or `--vocab MODEL`: the model's,
`vocab`) -> binarize (parallel) -> report.

What the directory holds is named in `aiayn.layout.DataFiles`. The stages live apart: the
corpora in `corpus`, the split in `splits`, the report in `report`; what every prepare shares
(the directory built aside, the stage clock, the BPE's common options) in `skeleton`.
"""

from __future__ import annotations

import shutil
import sys
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from aiayn.data.bt_tag import BT_TAG
from aiayn.data.clean import CleanReport
from aiayn.data.data_dir import DataMeta
from aiayn.data.glossary import Glossary
from aiayn.data.lemmas import Lemmas
from aiayn.data.prepare.binarize import binarize
from aiayn.data.prepare.bpe import default_vocab_size
from aiayn.data.prepare.corpus import Corpus, open_corpus
from aiayn.data.prepare.mixing import CorpusSpec, corpus_names
from aiayn.data.prepare.options import PrepareOptions
from aiayn.data.prepare.report import add_report, mix_report, write_report
from aiayn.data.prepare.skeleton import (
    StageClock,
    build_aside,
    check_out,
    learn_bpe,
    vocabulary_report,
)
from aiayn.data.prepare.splits import (
    HELD_OUT,
    CorpusShare,
    SplitWriter,
    read_given_splits,
    split_corpus,
    write_train,
)
from aiayn.data.prepare.vocab import (
    Vocabulary,
    check_symbols,
    copy_vocabulary,
    model_vocabulary_report,
    open_vocabulary,
    unknown_pieces,
)
from aiayn.data.sources import DataError
from aiayn.data.term_tags import TERM_TAGS, TermAnnotator
from aiayn.layout import SIDES, DataFiles

__all__ = ["PrepareOptions", "build", "prepare"]


def prepare(opts: PrepareOptions) -> dict:
    """Build the data directory; returns the report (also printed and saved).

    It is built beside `opts.out` and swapped in only when complete, so a run that fails
    (a bad line in the corpus) leaves an earlier directory there as it was. Encoding runs in
    worker processes started afresh: a script that calls this must guard its entry point with
    `if __name__ == "__main__":`.
    """
    check_out(Path(opts.out))
    term_annotator(opts)  # a bad termbase is refused before any work
    if opts.vocab is not None:  # before any work
        vocab = open_vocabulary(opts.vocab)
        check_symbols(
            vocab,
            bt_symbols(opts),
            "the --synthetic corpus's sources begin with",
            "give --no-bt-tag (untagged back-translation), or prepare without --vocab",
        )
        check_symbols(
            vocab,
            TERM_TAGS if opts.terms else (),
            "--terms writes around each term",
            "a model learns the tags in its first training: prepare without --vocab, or drop "
            "--terms",
        )
    return build_aside(opts, build)


@dataclass(frozen=True)
class Splits:
    """The corpora read, cleaned and split: what the later stages and the report need of them."""

    corpora: list[Corpus]  # in the order given; the main one gives `valid` and `test`
    shares: list[CorpusShare]  # each corpus's sets and counts
    held_out: dict[str, SplitWriter]  # "valid", "test", "valid-NAME"...: their (closed) writers
    given: dict[str, CleanReport]  # the held-out splits given as files, and their cleaning
    sizes: dict[str, int]  # pairs per split, train first
    terms: TermAnnotator | None = None  # --terms: its annotations of the training sources

    @property
    def main(self) -> Corpus:
        """The corpus that gives `valid` and `test`."""
        return next(c for c, s in zip(self.corpora, self.shares, strict=True) if s.name == "")

    @property
    def description(self) -> str:
        """The corpus, or each of a mix with its weight."""
        if len(self.corpora) == 1 and self.shares[0].spec == CorpusSpec(self.shares[0].spec.path):
            return self.corpora[0].description
        return "; ".join(
            f"{c.description} x{s.spec.weight:g}" + (", synthetic" if s.spec.synthetic else "")
            for c, s in zip(self.corpora, self.shares, strict=True)
        )


def build(opts: PrepareOptions) -> dict:
    """Write the data directory into `opts.out` (an empty directory)."""
    clock, files, report = StageClock(), DataFiles(Path(opts.out)), CleanReport()
    splits = read_and_split(opts, report)
    clock.done("read, clean, split")
    vocab = vocabulary(opts, files, splits.sizes["train"])
    clock.done("learn BPE" if opts.vocab is None else "copy the model's vocabulary")
    tokens = binarize_splits(opts, files, splits.sizes, vocab)
    clock.done("binarize")
    # Report: meta.json for the programs, report.txt and report.json for people.
    write_meta(opts, splits, vocab)
    result = {
        **corpus_report(opts, splits, report),
        "vocabulary": (
            vocabulary_report(opts, vocab.tokenizers["src"], vocab.size)
            if vocab.model is None
            else model_vocabulary_report(vocab, unknown_pieces(files, vocab.tokenizers, vocab.size))
        ),
        "tokens": tokens,
        **clock.report(),
    }
    write_report(files, result, report, splits.given)
    return result


def bt_symbols(opts: PrepareOptions) -> tuple[str, ...]:
    """The <BT> tag, one piece, where a synthetic corpus's sources carry it."""
    return (BT_TAG,) if opts.bt_tag and any(s.synthetic for s in opts.mix()) else ()


def term_annotator(opts: PrepareOptions) -> TermAnnotator | None:
    """The annotator of training sources where `--terms` gives a termbase (else None)."""
    if opts.terms is None:
        return None
    if not Path(opts.terms).is_file():
        raise DataError(f"--terms {opts.terms}: no such file; give a termbase, source<TAB>target")
    try:
        return TermAnnotator(Glossary.load(opts.terms), Lemmas(opts.tgt_lang))
    except ValueError as err:
        raise DataError(f"--terms: {err}") from None


def vocabulary(opts: PrepareOptions, files: DataFiles, n_train: int) -> Vocabulary:
    """Each side's tokenizer: one joint BPE for both languages, learned on the training split
    only; or (`--vocab MODEL`) the model's, copied."""
    if opts.vocab is not None:
        return copy_vocabulary(open_vocabulary(opts.vocab), files.root)
    model_file, size = learn_bpe(
        opts,
        [files.text("train", side) for side in SIDES],
        opts.vocab_size or default_vocab_size(n_train),
        max_sentences=opts.bpe_sentences,
        exact=opts.vocab_size is not None,  # a default size may shrink to what the data has
        user_symbols=bt_symbols(opts) + (TERM_TAGS if opts.terms else ()),
    )
    return Vocabulary(dict.fromkeys(SIDES, model_file), size)


def read_and_split(opts: PrepareOptions, report: CleanReport) -> Splits:
    """Read + clean (streamed) and split without leakage, a corpus at a time: the held-out
    splits first, then train (from candidates kept aside in `.work`, removed after).
    `report` gets the cleaning of every corpus together."""
    out = Path(opts.out)
    work = out / ".work"
    work.mkdir(exist_ok=True)
    held_out: set[int] = set()
    with ExitStack() as stack:
        shares = [CorpusShare(spec, i, name, {}) for i, (spec, name) in enumerate(named(opts))]
        corpora = [open_corpus(opts, s.spec.path, s.clean) for s in shares]
        writers = held_out_writers(opts, shares, corpora, stack)
        given = read_given_splits(opts, writers, held_out)
        with open(work / "train.candidates.tsv", "w", encoding="utf-8") as candidates:
            for share, corpus in zip(shares, corpora, strict=True):
                split_corpus(opts, share, corpus, held_out, candidates)
        train = SplitWriter(out, "train", 1, stack)
        terms = term_annotator(opts)
        write_train(opts, work / "train.candidates.tsv", held_out, shares, train, terms)
    for share in shares:
        share.clean.kept = share.kept + sum(share.held_out_sizes().values())
        add_report(report, share.clean)
    sizes = {"train": train.count, **{s: w.count for s, w in writers.items()}}
    for split, n in sizes.items():
        if n == 0:
            raise DataError(f"the {split} split is empty; check the corpus and the split sizes")
    shutil.rmtree(work)
    return Splits(corpora, shares, writers, given, sizes, terms)


def named(opts: PrepareOptions) -> list[tuple[CorpusSpec, str]]:
    """Each corpus and the name its held-out sets get: "" for the main one (the first that is
    not synthetic), whose sets are `valid` and `test`."""
    mix = opts.mix()
    main = next(i for i, spec in enumerate(mix) if not spec.synthetic)
    return [
        (s, "" if i == main else n)
        for i, (s, n) in enumerate(zip(mix, corpus_names(mix), strict=True))
    ]


def held_out_writers(
    opts: PrepareOptions, shares: list[CorpusShare], corpora: list[Corpus], stack: ExitStack
) -> dict[str, SplitWriter]:
    """The held-out sets' writers, the main corpus's first (`valid`, `test`: also where given
    files go), then each other real corpus's (`valid-NAME`...); a synthetic corpus has none."""
    writers: dict[str, SplitWriter] = {}
    given = {"valid": opts.valid_files, "test": opts.test_files}
    pairs = sorted(zip(shares, corpora, strict=True), key=lambda sc: sc[0].name != "")
    for share, corpus in pairs:  # the main corpus first: `valid`, `test` lead the splits
        for split in HELD_OUT:
            main = share.name == ""
            if main or not (share.spec.synthetic or given[split]):
                name = DataFiles.held_out(split, share.name)
                writers[name] = SplitWriter(Path(opts.out), name, corpus.n_refs, stack)
            share.holds[split] = None if given[split] or share.spec.synthetic else writers[name]
    return writers


def binarize_splits(
    opts: PrepareOptions, files: DataFiles, sizes: dict[str, int], vocab: Vocabulary
) -> dict[str, dict[str, int]]:
    """Every split's token ids, encoded in worker processes, each side with its tokenizer (one
    pool per tokenizer); returns the tokens per split and side."""
    tokens: dict[str, dict[str, int]] = {split: {} for split in sizes}
    with tqdm(
        total=2 * sum(sizes.values()),
        desc="binarize",
        unit=" sentences",
        disable=not opts.progress,
        file=sys.stderr,
    ) as bar:
        for model_file in dict.fromkeys(vocab.tokenizers.values()):
            sides = [side for side in SIDES if vocab.tokenizers[side] == model_file]
            jobs = [(split, side) for split in sizes for side in sides]
            counts = binarize(
                [(files.text(split, side), files.ids(split, side)) for split, side in jobs],
                model_file,
                vocab.size,
                opts.workers,
                bar,
            )
            for (split, side), n_tokens in zip(jobs, counts, strict=True):
                tokens[split][side] = n_tokens
    return {split: {side: tokens[split][side] for side in SIDES} for split in sizes}


def write_meta(opts: PrepareOptions, splits: Splits, vocab: Vocabulary) -> None:
    """meta.json: what the programs that read the directory need of it."""
    DataMeta(
        src_lang=opts.src_lang,
        tgt_lang=opts.tgt_lang,
        vocab_size=vocab.size,
        sizes=splits.sizes,
        n_refs={s: w.n_refs if s not in splits.given else 1 for s, w in splits.held_out.items()},
        corpus=splits.description,
        vocab_from=str(vocab.model or ""),
    ).save(Path(opts.out))


def terms_report(opts: PrepareOptions, terms: TermAnnotator | None) -> dict[str, Any]:
    """--terms: how many training sources were annotated, with how many terms."""
    if terms is None:
        return {}
    return {
        "terms": {
            "termbase": str(opts.terms),
            "terms": len(terms.glossary.terms),
            "annotated_pairs": terms.pairs,
            "annotations": terms.terms,
        }
    }


def corpus_report(opts: PrepareOptions, splits: Splits, report: CleanReport) -> dict[str, Any]:
    """The report's first entries: the corpus, its cleaning, the given sets, the split."""
    return {
        "corpus": splits.description,
        **terms_report(opts, splits.terms),
        "cleaning": report.to_dict(),
        "corpora": mix_report(splits.shares, splits.corpora),
        "given": {s: r.to_dict() for s, r in splits.given.items()},
        "split": {
            "seed": opts.seed,
            "unit": splits.main.grouped or "source sentence",
            "sizes": splits.sizes,
            "held_out_groups": {s: list(w.groups) for s, w in splits.held_out.items() if w.groups},
        },
    }
