"""A document's structure with its text left out: what a translation must keep. Tests and
benchmarks/documents_bench.py compare input and output by it."""

from __future__ import annotations

from typing import Any

CODE_TOKENS = {"fence", "code_block", "html_block", "code_inline", "html_inline"}
TEXT_TOKENS = {"text", "softbreak"}
TEXT_ATTRIBUTES = {"alt", "title"}  # translated in HTML


def markdown_skeleton(text: str) -> list[tuple[Any, ...]]:
    """Every token markdown-it-py reads, text aside: its type, tag and attributes (a link's
    href, an image's src), nesting, and the whole content of code and HTML."""
    from aiayn.documents.markdown import parser

    out: list[tuple[Any, ...]] = []

    def add(tokens) -> None:
        for t in tokens:
            if t.type in TEXT_TOKENS:
                continue
            attrs = {k: v for k, v in (t.attrs or {}).items() if k not in TEXT_ATTRIBUTES}
            content = t.content if t.type in CODE_TOKENS else ""
            out.append((t.type, t.tag, t.nesting, t.info, sorted(attrs.items()), content))
            if t.type == "inline":
                add(t.children or [])

    add(parser().parse(text))
    return out


def code_blocks(text: str) -> list[str]:
    """The source lines of every fenced and indented code block, exactly."""
    from aiayn.documents.markdown import parser

    lines = text.splitlines(keepends=True)
    return [
        "".join(lines[t.map[0] : t.map[1]])
        for t in parser().parse(text)
        if t.type in ("fence", "code_block") and t.map
    ]


def html_skeleton(text: str) -> Any:
    """The element tree as the HTML parser reads it: tags, attributes (alt and title aside),
    order, and the whole content of what is left untouched (script, style, pre, code,
    translate="no"...)."""
    from lxml import etree, html

    from aiayn.documents.html import DOCUMENT, untouched

    parser = html.HTMLParser(recover=True, encoding="utf-8")
    data = text.encode("utf-8")
    if DOCUMENT.search(text[:2000]):
        root = etree.fromstring(data, parser)
    else:
        root = html.fragment_fromstring(data, create_parent="div", parser=parser)

    def walk(el) -> Any:
        if not isinstance(el.tag, str):
            return ("comment", el.text)
        attrs = sorted((k, v) for k, v in el.attrib.items() if k not in TEXT_ATTRIBUTES)
        if untouched(el):
            inner = (el.text or "") + "".join(
                etree.tostring(c, encoding="unicode", method="html", with_tail=True) for c in el
            )
            return (el.tag, attrs, inner)
        return (el.tag, attrs, [walk(c) for c in el])

    return walk(root)
