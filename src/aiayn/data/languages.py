"""Languages of a multilingual model (Johnson et al. 2017): the target language is named by a
tag, one SentencePiece piece `<2de>` per language, written in front of the source text.

A data directory made with `aiayn prepare --langs` writes its source lines tagged ("<2de> In the
beginning..."); its SentencePiece model holds every tag as one piece, so a model directory
knows its languages from its vocabulary alone. A bilingual model has no tags.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TAG = re.compile(r"<2([a-z]{2,3})>")  # a language tag piece; group 1: the ISO 639 code


def tag(lang: str) -> str:
    """The piece that asks for `lang`: "de" -> "<2de>"."""
    return f"<2{lang}>"


def tagged(line: str, lang: str) -> str:
    """`line` with the tag asking for `lang` in front, as the model was trained to read it."""
    return f"{tag(lang)} {line}"


def split_tag(line: str) -> tuple[str | None, str]:
    """(the language a tagged line asks for, the line without its tag); (None, line) if none."""
    found = TAG.match(line)
    if found is None:
        return None, line
    return found.group(1), line[found.end() :].lstrip(" ")


def tag_languages(pieces: Iterable[str]) -> list[str]:
    """The languages a vocabulary has tags for, sorted; [] for a bilingual one."""
    return sorted(m.group(1) for p in pieces if (m := TAG.fullmatch(p)))
