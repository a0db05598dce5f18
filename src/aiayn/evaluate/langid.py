"""Which language a text is in: `--src-lang auto` and the off-target rate of `aiayn evaluate`.

py3langid (a maintained, offline port of langid.py: a naive Bayes model over byte n-grams, 97
languages) rather than lingua-language-detector: on single held-out verses of the 22 languages
of the default corpus, restricted to those languages, py3langid is right on 99.3% or more of
every language's verses (lingua: 97.0% or more), 5x faster and in under a third of the memory
(benchmarks/README.md, "language identification"; benchmarks/langid_bench.py).

An identifier chooses among a set of languages: the languages of the model or data directory
at hand where they are known (both libraries confuse close languages, e.g. Indonesian and
Malay, when they may choose any of their languages), else every language py3langid knows.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from functools import cache
from typing import Any

UNKNOWN = "?"  # what a blank text is identified as: no language


@cache
def _model() -> Any:
    """py3langid's model, loaded once per process (about 0.3 s)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise ValueError(
            'language identification needs py3langid: pip install -e ".[multilingual]"'
        ) from None

    return LanguageIdentifier.from_model_file(MODEL_FILE)


@cache
def known_languages() -> frozenset[str]:
    """Every language code the identifier knows (ISO 639-1)."""
    return frozenset(_model().labels)


class Identifier:
    """Identifies texts' languages among `languages` (None: every one it knows).

    Codes it does not know (a model's tag for a language py3langid lacks) are left out of the
    choice; an identifier left with fewer than two languages is refused.
    """

    def __init__(self, languages: Iterable[str] | None = None) -> None:
        self._model = copy.copy(_model())
        if languages is None:
            self.languages = sorted(known_languages())
            return
        self.languages = sorted(set(languages) & known_languages())
        if len(self.languages) < 2:
            raise ValueError(
                f"language identification needs two or more languages it knows; got "
                f"{sorted(set(languages))} (it knows {', '.join(sorted(known_languages()))})"
            )
        self._model.set_languages(self.languages)

    def __call__(self, text: str) -> str:
        """The text's language code; UNKNOWN for a blank text."""
        if not text.strip():
            return UNKNOWN
        return str(self._model.classify(text)[0])

    def identify(self, texts: Iterable[str]) -> list[str]:
        return [self(t) for t in texts]


def off_target_rate(outputs: list[str], lang: str, identify: Identifier) -> float:
    """The share of outputs not identified as `lang` (a blank output counts as off target:
    it is not in the requested language); 0 for no outputs."""
    if not outputs:
        return 0.0
    return sum(found != lang for found in identify.identify(outputs)) / len(outputs)
