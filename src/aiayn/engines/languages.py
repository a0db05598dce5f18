"""The target language of a multilingual model: its tag, written in front of every source line.

A model whose SentencePiece vocabulary holds `<2xx>` tags (aiayn.data.languages) translates
into the language its source line's tag names. `MultilingualTranslator` writes that tag, so
every engine (ours, CTranslate2, ONNX) gets it: the tag is text in front of the source. A
bilingual model has no tags and is used as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aiayn.config import DecodeConfig
from aiayn.data.languages import split_tag, tagged
from aiayn.data.tokenizer import Tokenizer
from aiayn.decode.attention_maps import Attention
from aiayn.decode.controls.words import Controls
from aiayn.engines.base import Alternative, Translation

if TYPE_CHECKING:
    from aiayn.engines.base import Translator

CODE = re.compile(r"[a-z]{2,3}")  # an ISO 639 code, as the tags spell them


def model_languages(translator: Translator) -> list[str]:
    """The languages the translator's model has tags for, sorted; [] for a bilingual model."""
    from aiayn.data.languages import tag_languages

    tokenizer = translator.tokenizer
    return tag_languages(tokenizer.pieces(range(tokenizer.vocab_size)))


def check_language(lang: str, languages: list[str], what: str = "--tgt-lang") -> str:
    """`lang` if the model has a tag for it; else a ValueError that names the model's
    languages (and says when `lang` is not a language code at all)."""
    from aiayn.evaluate.langid import known_languages

    known = ", ".join(languages)
    if not CODE.fullmatch(lang) or lang not in {*known_languages(), *languages}:
        raise ValueError(
            f"{what} {lang!r}: not a language code aiayn knows (ISO 639-1, two letters, as "
            f"'de'); this model translates into: {known}"
        )
    if lang not in languages:
        raise ValueError(
            f"{what} {lang}: this model was not trained to translate into it (no <2{lang}> tag "
            f"in its vocabulary); it translates into: {known}"
        )
    return lang


def for_language(
    translator: Translator, tgt_lang: str | None, what: str = "--tgt-lang"
) -> Translator:
    """The translator that writes `tgt_lang`'s tag in front of every line (a multilingual
    model), or `translator` itself (a bilingual model, tgt_lang None). A multilingual model
    opened without a language translates lines that carry their own tag ("<2de> ...").
    what: the option's name in messages."""
    if isinstance(translator, MultilingualTranslator):
        return translator if tgt_lang is None else translator.into(tgt_lang, what)
    languages = model_languages(translator)
    if not languages:
        if tgt_lang is not None:
            raise ValueError(
                f"{what} {tgt_lang}: this model is bilingual (no <2xx> language tags in its "
                f"vocabulary): it translates into the one language it was trained on; drop "
                f"{what}"
            )
        return translator
    if tgt_lang is not None:
        check_language(tgt_lang, languages, what)
    return MultilingualTranslator(translator, languages, tgt_lang)


class MultilingualTranslator:
    """A `Translator` on a multilingual model that asks for `tgt_lang` (None: each line names
    its own language with a tag). Blank lines stay untagged: they translate to ""."""

    def __init__(self, inner: Translator, languages: list[str], tgt_lang: str | None) -> None:
        self.inner = inner
        self.languages = languages
        self.tgt_lang = tgt_lang
        self.tokenizer: Tokenizer = inner.tokenizer

    def into(self, lang: str, what: str = "--tgt-lang") -> MultilingualTranslator:
        """The same model asked for another language."""
        return MultilingualTranslator(
            self.inner, self.languages, check_language(lang, self.languages, what)
        )

    @property
    def default_search(self) -> DecodeConfig:
        return self.inner.default_search

    @property
    def search_origin(self) -> str:
        return self.inner.search_origin

    @property
    def shortlist(self) -> Any:
        """The inner engine's lexical shortlist (None: the full output layer), for `/health`."""
        return getattr(self.inner, "shortlist", None)

    def tagged(self, lines: list[str]) -> list[str]:
        """The lines as the model reads them: each with its target language's tag."""
        return [self.tag(line, n) for n, line in enumerate(lines, start=1)]

    def tag(self, line: str, n: int = 1) -> str:
        """Line n as the model reads it: `tgt_lang`'s tag in front (in place of a tag the line
        has); with no `tgt_lang`, the line's own tag, checked."""
        if not line.strip():
            return line
        lang, text = split_tag(line)
        if self.tgt_lang is not None:
            return tagged(text, self.tgt_lang)
        if lang is None:
            raise ValueError(
                f"line {n}: no target language: this model translates into "
                f"{', '.join(self.languages)}; name one with --tgt-lang (tgt_lang= in Python, "
                '"tgt_lang" in a request), or begin the line with its tag, e.g. '
                f"'<2{self.languages[0]}> ...'"
            )
        check_language(lang, self.languages, f"line {n}: the tag <2{lang}>: language")
        return line

    def translate(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[str]:
        return self.inner.translate(self.tagged(lines), cfg, controls)

    def nbest(
        self, lines: list[str], cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[list[Translation]]:
        return self.inner.nbest(self.tagged(lines), cfg, controls)

    def alternatives(
        self, line: str, k: int, cfg: DecodeConfig | None = None, controls: Controls | None = None
    ) -> list[Alternative]:
        return self.inner.alternatives(self.tag(line), k, cfg, controls)

    def attention(self, line: str, found: Translation, head: int | None = None) -> Attention:
        return self.inner.attention(self.tag(line), found, head)

    def warm_up(self, beams: Iterable[int]) -> None:
        self.inner.warm_up(beams)
