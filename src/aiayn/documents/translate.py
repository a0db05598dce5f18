"""A document through a `Translator`: read it (text, markdown, html, po, xliff, srt), split
its running text into sentences, translate every distinct sentence in one batched search (cut
into calls along its batches' borders, so that a progress bar can move), put inline tags back
by alignment and write the document.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiayn.config import DecodeConfig
from aiayn.decode.translate import length_batches
from aiayn.documents import docx, html, markdown, odt, po, srt, text, xliff
from aiayn.documents.alignment import Choice, word_pairs
from aiayn.documents.chunks import split_long
from aiayn.documents.inline import Node, Tagged, need, project, source_nodes
from aiayn.documents.parsed import Parsed
from aiayn.documents.protect import Protector, holds, protected_texts, restore
from aiayn.documents.segment import join, needs_translation, sentences_of
from aiayn.engines.base import Translation, Translator

READERS: dict[str, Callable[[Any], Parsed]] = {
    "text": text.parse,
    "markdown": markdown.parse,
    "html": html.parse,
    "po": po.parse,
    "xliff": xliff.parse,
    "srt": srt.parse,
    "docx": docx.parse,
    "odt": odt.parse,
}
# the formats whose entries may already hold a translation: --retranslate replaces it too
RETRANSLATING: dict[str, Callable[[Any], Parsed]] = {
    "po": po.retranslating,
    "xliff": xliff.retranslating,
}
BINARY = ("docx", "odt")  # formats read and written as bytes (zip packages), not str
FORMATS = ("lines", *READERS)
CHUNK = 1024  # sentences per call: enough for full batches, often enough for the progress bar


@dataclass(frozen=True)
class DocumentOptions:
    language: str = "en"  # the source language, for the sentence splitter
    progress: bool = True  # a progress bar over sentences on stderr
    choice: Choice = field(default_factory=Choice)  # where alignments are read from
    name: str = "<stdin>"  # the input, as messages name it
    retranslate: bool = False  # po, xliff: entries already translated are translated again
    protect: Protector | None = field(default_factory=Protector)  # spans kept verbatim; None: off


def translate_document(
    translator: Translator,
    document: str | bytes,
    fmt: str,
    cfg: DecodeConfig,
    options: DocumentOptions = DocumentOptions(),
) -> tuple[str | bytes, int]:
    """The translated document (bytes for a format in BINARY) and how many sentences it had;
    warnings go to stderr."""
    try:
        parsed = (RETRANSLATING[fmt] if options.retranslate else READERS[fmt])(document)
    except ValueError as err:  # a damaged file: the reader says where in it
        raise ValueError(f"{options.name}: {err}") from None
    for warning in parsed.warnings:
        print(f"warning: {options.name}: {warning}", file=sys.stderr)
    units = [prepared(translator, u, cfg, options) for u in parsed.units]
    sentences = [s for unit in units for s in unit if needs_translation(s)]
    if not sentences:
        print(
            f"warning: {options.name}: nothing to translate (no text in it as --format {fmt} "
            "reads it); written out unchanged",
            file=sys.stderr,
        )
        return document, 0
    aligner = Aligner(translator, options.choice)
    done, found = translate_sentences(translator, sentences, cfg, options, aligner)
    if options.protect is not None:  # those that lost a span: again with their spans out
        units, done = reprotected(translator, units, found, done, cfg, options, aligner)
    outputs = [
        restore(join([done[s.text](s) if needs_translation(s) else source_nodes(s) for s in unit]))
        for unit in units
    ]
    report(aligner, options.name)
    return parsed.rebuild(outputs), len(sentences)


def prepared(
    translator: Translator, unit: Tagged, cfg: DecodeConfig, options: DocumentOptions
) -> list[Tagged]:
    """A unit's sentences as they are first searched: (--too-long split) one over
    --max-input-tokens cut into chunks; protected spans stay in (`reprotected`)."""
    found = sentences_of(unit, options.language)
    if cfg.too_long != "split":
        return found
    chunks = split_long(found, cfg.max_input_tokens, translator.tokenizer.encode)
    return [chunk for sentence in chunks for chunk in sentence]


def reprotected(
    translator: Translator,
    units: list[list[Tagged]],
    found: dict[str, str],
    done: dict[str, Callable[[Tagged], list[Node]]],
    cfg: DecodeConfig,
    options: DocumentOptions,
    aligner: Aligner,
) -> tuple[list[list[Tagged]], dict[str, Callable[[Tagged], list[Node]]]]:
    """The sentences whose translation (`found`: by text) lost or changed a protected span,
    searched again with their spans taken out, to be put back by alignment: a model trained on
    such text carries most spans itself, in their context (line mode does the same: lines.py).
    Returns the units with those sentences in their protected form, and how to write each."""
    assert options.protect is not None
    again: dict[str, Tagged] = {}
    for s in (s for unit in units for s in unit if s.text in found):
        protected = options.protect.tagged(s)
        spans = protected_texts(protected.spans)
        if spans and not holds(found[s.text], spans):
            again[s.text] = protected
    if not again:
        return units, done
    redone, _ = translate_sentences(translator, list(again.values()), cfg, options, aligner)
    return [[again.get(s.text, s) for s in unit] for unit in units], done | redone


def translate_sentences(
    translator: Translator,
    sentences: list[Tagged],
    cfg: DecodeConfig,
    options: DocumentOptions,
    aligner: Aligner,
) -> tuple[dict[str, Callable[[Tagged], list[Node]]], dict[str, str]]:
    """For each distinct sentence text, how to write one of its occurrences translated; and
    the translation of each sentence searched."""
    from tqdm import tqdm

    tagged = {s.text for s in sentences if s.spans}
    texts = list(dict.fromkeys(s.text for s in sentences))
    source = fit(translator, texts, sentences, cfg, options.name)  # text -> what is searched
    found: dict[str, Translation | str | None] = {t: None for t in texts if t not in source}
    bar = tqdm(total=len(texts), unit="sentence", disable=not options.progress, file=sys.stderr)
    with bar:
        bar.update(len(found))
        for chunk in calls(translator, [t for t in texts if t in source], source, cfg):
            plain = [t for t in chunk if t not in tagged]
            marked = [t for t in chunk if t in tagged]
            if plain:
                out = translator.translate([source[t] for t in plain], cfg)
                found.update(zip(plain, out, strict=True))
            if marked:
                best = translator.nbest([source[t] for t in marked], cfg.replace(nbest=1))
                found.update((t, b[0]) for t, b in zip(marked, best, strict=True))
            bar.update(len(chunk))
    searched = {t: f if isinstance(f, str) else f.text for t, f in found.items() if f is not None}
    return {t: aligner.writer(source.get(t, t), found[t]) for t in texts}, searched


def calls(
    translator: Translator, todo: list[str], source: dict[str, str], cfg: DecodeConfig
) -> list[list[str]]:
    """`todo` cut into calls of about CHUNK sentences (so that the progress bar moves) along
    the borders of the batches one call over all of them would make (`length_batches`, in
    their order): every batch is the same as in line mode over these sentences, and so is
    every translation, which a batch's shape can otherwise change by a float's last bit."""
    ids = translator.tokenizer.encode([source[t] for t in todo])
    out: list[list[str]] = [[]]
    for batch in length_batches([len(x) for x in ids], cfg.max_tokens):
        if len(out[-1]) >= CHUNK:
            out.append([])
        out[-1].extend(todo[i] for i in batch)
    return [c for c in out if c]


def report(aligner: Aligner, name: str) -> None:
    """Sentences kept in the source language, and why."""
    if aligner.empty:
        print(
            f"warning: {name}: {aligner.empty} sentence(s) translated to nothing; kept as they "
            "were",
            file=sys.stderr,
        )
    if aligner.cramped:
        print(
            f"warning: {name}: {aligner.cramped} sentence(s) translated to fewer words than "
            "their tags need; kept as they were",
            file=sys.stderr,
        )


class Aligner:
    """Places a sentence's tags on its translation; without attention maps (an engine that
    cannot show them) the tags go around the nearest words, and a warning says so once."""

    def __init__(self, translator: Translator, choice: Choice) -> None:
        self.translator, self.choice, self.warned = translator, choice, False
        self.empty = 0  # sentences whose translation came out empty
        self.cramped = 0  # ...or with fewer words than the tags around them need

    def writer(
        self, source: str, found: Translation | str | None
    ) -> Callable[[Tagged], list[Node]]:
        if found is None:  # left out (--too-long skip): kept as it came
            return source_nodes
        text_ = found if isinstance(found, str) else found.text
        if not text_.strip():  # nothing came out: the source is kept, not lost
            self.empty += 1
            return source_nodes
        if isinstance(found, str):
            return lambda s: [found]
        pairs = self.pairs(source, found)
        n_words = len(found.text.split())

        def write(s: Tagged) -> list[Node]:
            if n_words < sum(need(span) for span in s.spans):
                self.cramped += 1  # more tags than words to hold them: the source is kept
                return source_nodes(s)
            return project(s, found.text, pairs)

        return write

    def pairs(self, source: str, found: Translation) -> set[tuple[int, int]]:
        if not found.tokens:
            return set()
        try:
            maps = self.translator.attention(source, found, self.choice.head)
        except ValueError as err:
            if not self.warned:
                print(f"warning: tags placed without alignments: {err}", file=sys.stderr)
                self.warned = True
            return set()
        return word_pairs(maps, len(source.split()), len(found.text.split()), self.choice)


def fit(
    translator: Translator, texts: list[str], sentences: list[Tagged], cfg: DecodeConfig, name: str
) -> dict[str, str]:
    """What the search reads for each sentence: one over --max-input-tokens is named and then
    truncated, left out (skip: kept untranslated), or refused (error), as --too-long says;
    with split, what is left over the limit is one word longer than it, and truncated."""
    ids = translator.tokenizer.encode(texts)
    long = [i for i, x in enumerate(ids) if len(x) > cfg.max_input_tokens]
    if not long:
        return dict(zip(texts, texts, strict=True))
    line = {s.text: s.line for s in sentences}
    named = "; ".join(
        f"line {line[texts[i]]}: {texts[i][:40]!r}... ({len(ids[i])} pieces)" for i in long[:5]
    )
    message = (
        f"{name}: {len(long)} sentence(s) longer than --max-input-tokens "
        f"{cfg.max_input_tokens}: {named}"
    )
    if cfg.too_long == "error":
        raise ValueError(f"{message}; raise --max-input-tokens or choose --too-long truncate")
    cut = cfg.too_long in ("truncate", "split")
    what = "truncated" if cut else "left untranslated"
    print(f"warning: {message}: {what}", file=sys.stderr)
    out = dict(zip(texts, texts, strict=True))
    for i in long:
        if cut:
            out[texts[i]] = translator.tokenizer.decode([ids[i][: cfg.max_input_tokens]])[0]
        else:
            del out[texts[i]]
    return out
