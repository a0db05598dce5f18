"""The languages of `aiayn translate` and `aiayn evaluate`: the target language of a
multilingual model, and the source language (the sentence splitter's, or found per line)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

from aiayn.commands.options.renamed import old_spelling

if TYPE_CHECKING:
    from aiayn.engines import Translator

AUTO = "auto"  # --src-lang auto: each line's language identified
SPLITTER_DEFAULT = "en"  # the sentence splitter's language when none is given or found


def add_tgt_lang(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tgt-lang",
        metavar="LANG",
        help="a multilingual model's output language (ISO 639-1, e.g. de): its <2de> tag goes "
        "in front of every line; without it, each line must begin with its own tag",
    )


def add_src_lang(p: argparse.ArgumentParser) -> None:
    src = p.add_argument(
        "--src-lang",
        metavar="LANG|auto",
        default=SPLITTER_DEFAULT,
        help="the source language (ISO 639-1): the sentence splitter's with --format text, "
        "markdown or html (default: en); auto: identify each input line's language "
        "(py3langid, among a multilingual model's languages), say on stderr what was found, "
        "naming lines already in the target language, and split by the language found most",
    )
    old_spelling(p, "--source-lang", src)


def source_language(args: argparse.Namespace, lines: list[str], translator: Translator) -> str:
    """The source language the command line gives; for `auto`, the one found most in `lines`
    (each line's is reported on stderr), English when none is found."""
    if args.src_lang != AUTO:
        return args.src_lang
    found = identify_sources(lines, translator, args.tgt_lang)
    return found.most_common(1)[0][0] if found else SPLITTER_DEFAULT


def say_mismatch(args: argparse.Namespace, texts: list[str]) -> None:
    """A warning on stderr when the input reads as another language than the model's source
    (where the model's run says which, and py3langid is installed)."""
    from aiayn.evaluate.mismatch import mismatch_warning, model_source_language

    name = "<stdin>" if args.input is None else str(args.input)
    warning = mismatch_warning(texts, model_source_language(args.model), name)
    if warning:
        print(warning, file=sys.stderr)


def identify_sources(
    lines: list[str], translator: Translator, tgt_lang: str | None
) -> Counter[str]:
    """Identify each line's language among the model's (every language py3langid knows, for a
    bilingual model), say on stderr what was found, and which lines are already in the target
    language; how many lines each language has."""
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
    return counts
