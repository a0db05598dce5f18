"""The languages of `aiayn translate` and `aiayn evaluate`: the target language of a
multilingual model, and the source language found per line."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiayn.engines import Translator


def add_tgt_lang(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tgt-lang",
        metavar="LANG",
        help="a multilingual model's output language (ISO 639-1, e.g. de): its <2de> tag goes "
        "in front of every line; without it, each line must begin with its own tag",
    )


def add_src_lang(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--src-lang",
        choices=["auto"],
        help="auto: identify each input line's language (py3langid, among a multilingual "
        "model's languages) and say on stderr what was found, naming lines already in the "
        "target language",
    )


def report_sources(lines: list[str], translator: Translator, tgt_lang: str | None) -> None:
    """Identify each line's language among the model's (every language py3langid knows, for a
    bilingual model) and say on stderr what was found, and which lines are already in the
    target language."""
    from aiayn.engines.languages import model_languages
    from aiayn.evaluate.langid import UNKNOWN, Identifier

    languages = model_languages(translator)
    found = Identifier(languages or None).identify(lines)
    counts = Counter(x for x in found if x != UNKNOWN)
    summary = ", ".join(f"{lang} {n} line(s)" for lang, n in counts.most_common()) or "no text"
    print(f"source language (py3langid, per line): {summary}", file=sys.stderr)
    same = [n for n, x in enumerate(found, start=1) if x == tgt_lang]
    if same:
        shown = ", ".join(map(str, same[:20])) + (", ..." if len(same) > 20 else "")
        print(f"already in {tgt_lang}, the target language: line(s) {shown}", file=sys.stderr)
