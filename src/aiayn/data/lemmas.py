"""Whether a text uses a term in any inflected form: the same lemmas, in order (simplemma, a
dictionary lemmatizer for ~50 languages: pure Python, no model to download). Term-aware
training (`prepare --terms`) asks it."""

from __future__ import annotations

from functools import lru_cache

from aiayn.data.glossary import WORD

INSTALL_HINT = 'pip install -e ".[terms]"  (or: pip install simplemma)'


class Lemmas:
    """Lemmas of one language's words, cached; in a language simplemma does not know, the words
    themselves (case-folded): a term then matches only in the form written (`by_lemma` False)."""

    def __init__(self, lang: str) -> None:
        try:
            import simplemma
            from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES
        except ImportError:
            raise ValueError(
                f"matching terms by their lemmas needs simplemma: {INSTALL_HINT}"
            ) from None
        self.lang = lang
        self.by_lemma = lang in SUPPORTED_LANGUAGES

        @lru_cache(maxsize=200_000)
        def lemma(word: str) -> str:
            found = simplemma.lemmatize(word, lang=lang) if self.by_lemma else word
            return found.casefold()

        self.lemma = lemma

    def of(self, text: str) -> list[str]:
        """The lemma of each word of `text`, in order."""
        return [self.lemma(w) for w in WORD.findall(text)]

    def uses(self, term: str, have: list[str]) -> bool:
        """Whether a text whose lemmas are `have` (`of`) holds `term`'s words in some form:
        their lemmas, contiguous."""
        want = self.of(term)
        n = len(want)
        return n > 0 and any(have[i : i + n] == want for i in range(len(have) - n + 1))
