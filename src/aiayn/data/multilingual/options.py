"""What `aiayn prepare --langs` takes: the languages, the directions, the held-out sizes and the
joint vocabulary; and the check of a `--langs` / `--pivot` spelling."""

from __future__ import annotations

from dataclasses import dataclass

from aiayn.data.prepare.bible import DEFAULT_VERSION
from aiayn.data.prepare.options import CommonOptions
from aiayn.data.sources import DataError

KNOWN = ", ".join(sorted(DEFAULT_VERSION))


@dataclass(frozen=True, kw_only=True)
class MultiOptions(CommonOptions):
    """A multilingual Bible data directory (`aiayn prepare --langs en,de,fr`); the held-out
    sizes count verses, the same in every language."""

    langs: tuple[str, ...]  # ISO 639-1 codes with a Bible version (bible.DEFAULT_VERSION)
    pivot: str | None = "en"  # English-centric (en<->X); None: every ordered pair
    vocab_size: int = 32_000  # joint SentencePiece pieces (docs/data.md: why 32k)
    character_coverage: float = 1.0  # every character of the mix has a piece (docs/data.md)
    bpe_temperature: float = 5.0  # languages mixed for BPE with p_l ~ n_l^(1/T)
    bpe_sentences: int = 300_000  # verses in that mix (bounds the trainer's time and memory)

    def check_languages(self) -> None:
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

    def check_sizes(self) -> None:
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
