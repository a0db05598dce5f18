"""Fuzzed document readers (`aiayn translate --format text|markdown|html`): the file reader
(UTF-8, nothing binary) and the three parsers with their rebuild, on damaged and generated
documents, translated by the scripted translator of tests/documents (words reversed)."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from aiayn.commands.options.reading import read_document
from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents.segment import LETTER
from aiayn.documents.skeleton import html_skeleton
from tests.documents.conftest import ReversingTranslator
from tests.documents.test_html import PAGE
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import huge_line, mutated, read_or_refuse, scratch, wrongly_encoded

MARKDOWN = """---
title: x
---
# The *light* of God

And God said, **let there be** [light](x.html "The light"): and there was light.
And God saw it.

- The first `day`.
- The second ![day](d.png).

| a | b |
|---|---|
| The one | the *other* |

```python
print("And God said")
```

    indented code

<div>html block</div>
"""
TEXT = "In the beginning.\nAnd the earth was.\n\n\nDr. Smith came, e.g. on 3.5 days...\n"
DOCUMENTS = {"markdown": MARKDOWN, "html": PAGE, "text": TEXT}
# Pieces that documents are made of: words, markup and the characters parsers trip over.
PIECES = st.sampled_from(
    ["And", "God", "said.", " ", "\n", "\n\n", "<b>", "</b>", "<i>", "</p>", "<p>", "*", "**",
     "`", "[", "](x)", "#", "- ", "|", "<!--", "-->", "&amp;", "&", "<", ">", "\t", "\u00a0",
     "\u200b", "é", "\r", "<br>", "<a href='x'>", "</a>", "<script>", "```", "> "]
)  # fmt: skip
GENERATED = st.lists(PIECES, max_size=40).map("".join)


def damaged(fmt: str) -> st.SearchStrategy[str]:
    """The format's sample document with bytes changed, cut or inserted (decoded leniently,
    since the reader refuses what is not UTF-8), or a document made of markup pieces."""
    raw = mutated(DOCUMENTS[fmt].encode()).map(lambda b: b.decode("utf-8", "replace"))
    return raw.map(lambda s: s.replace("\0", "")) | GENERATED


def translate(document: str, fmt: str) -> str:
    options = DocumentOptions(progress=False, name="doc")
    return translate_document(ReversingTranslator(), document, fmt, DecodeConfig(), options)[0]


@FUZZ
@given(
    mutated(MARKDOWN.encode())
    | huge_line()
    | st.lists(st.text(max_size=20), max_size=6).flatmap(wrongly_encoded)
)
def test_the_document_reader_reads_utf8_or_names_the_byte(raw: bytes):
    with scratch() as tmp:
        path = tmp / "page.md"
        path.write_bytes(raw)
        text = read_or_refuse(lambda: read_document(path), path)
        if text is not None:
            assert "\0" not in text and text.encode("utf-8") in (raw, raw[3:])


@FUZZ
@given(damaged("markdown"))
@example("*a\n\nb*")  # emphasis open across a paragraph
@example("<")  # no words: was written back escaped, "\\<"
def test_markdown_is_rebuilt_whatever_it_holds(document: str):
    out = translate(document, "markdown")
    assert isinstance(out, str)
    if not LETTER.search(document):
        assert out == document  # nothing to translate: written out unchanged


@FUZZ
@given(damaged("html"))
@example("<p>Broken <b>nesting <i>is</b> here</i>.</p>")
@example("<p>A\x0cB \x01 c\uffff</p>")  # control characters: libxml2's tree refused them
@example("<!DOCTYPE html>")  # no element: lxml gave None, then an AttributeError
def test_html_is_rebuilt_well_formed(document: str):
    out = translate(document, "html")
    if not LETTER.search(document):
        assert out == document  # nothing to translate: written out unchanged
    if out == document:
        return
    html_skeleton(out)  # the output parses
    assert html_skeleton(translate(out, "html")) == html_skeleton(out)  # and is stable


LINE_END = re.compile(r"\r\n|\n|\r")


@FUZZ
@given(damaged("text"))
@example("And\n\rAnd")  # an old Mac line end: its blank line was lost
def test_text_keeps_its_blank_lines(document: str):
    out = translate(document, "text")
    blank = [line for line in LINE_END.split(document) if not line.strip()]
    assert len([line for line in LINE_END.split(out) if not line.strip()]) == len(blank)
