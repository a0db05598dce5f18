"""HTML, read by lxml (libxml2's HTML parser, which repairs broken markup the way browsers
mostly do; each repair is named in a warning): the text of block elements and the `alt` and
`title` attributes are translated; `script`, `style`, `pre`, `code` (and `kbd`, `samp`),
`translate="no"` and `class="notranslate"` are left untouched. Inline elements inside a run of
text (`<b>`, `<a href>`, `<span>`...) become tags placed by alignment (inline.py); the output
has the input's elements, attributes and order.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from aiayn.documents.inline import Node, Tagged, plain
from aiayn.documents.parsed import Parsed

UNTOUCHED = {"script", "style", "pre", "code", "kbd", "samp", "textarea", "template", "svg", "math"}
INLINE = {
    "a",
    "abbr",
    "acronym",
    "b",
    "bdi",
    "bdo",
    "big",
    "br",
    "cite",
    "code",
    "data",
    "dfn",
    "em",
    "font",
    "i",
    "img",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "time",
    "tt",
    "u",
    "var",
    "wbr",
}
VOID = {"br", "img", "wbr", "input", "hr"}
ATTRIBUTES = ("alt", "title")
URL_ATTRIBUTES = {"href", "src", "action", "cite", "data", "name", "longdesc", "usemap"}
DOCUMENT = re.compile(r"<!doctype|<html[\s>]|<body[\s>]|<head[\s>]", re.I)
# libxml2 knows HTML 4's tags only; an HTML5 tag is not a repair
HARMLESS = re.compile(r"Tag \S+ invalid|htmlParseEntityRef|Misplaced DOCTYPE")

# What XML (and so libxml2's tree) cannot hold: C0 controls but tab, newline and carriage
# return; surrogates; U+FFFE and U+FFFF.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def untouched(el) -> bool:
    """script/style/pre/code..., translate="no", class="notranslate", comments."""
    if not isinstance(el.tag, str):
        return True
    return (
        el.tag in UNTOUCHED
        or el.get("translate", "").lower() == "no"
        or "notranslate" in el.get("class", "").split()
    )


def is_inline(el) -> bool:
    """An element that belongs to the run of text around it."""
    if not isinstance(el.tag, str):
        return True  # a comment stays where it is in the run
    if el.tag not in INLINE:
        return False
    return untouched(el) or all(is_inline(c) for c in el)


def parse(text: str) -> Parsed:
    from lxml import etree, html

    text, controls = CONTROL.subn("", text)
    parser = html.HTMLParser(recover=True, encoding="utf-8", remove_comments=False)
    data = text.encode("utf-8")
    whole = bool(DOCUMENT.search(text[:2000]))
    if whole:
        parsed = etree.fromstring(data, parser)
        if parsed is None:  # a doctype and nothing else: no element, so nothing to translate
            return Parsed([], lambda outputs: text, ["no element in it"])
        root = parsed.getroottree().getroot()
    else:
        root = html.fragment_fromstring(data, create_parent="div", parser=parser)
    warnings = [
        f"line {e.line}, column {e.column}: {e.message.strip()}"
        for e in parser.error_log
        if not HARMLESS.search(e.message)
    ]
    if warnings:
        warnings = [
            "malformed HTML, repaired as a browser would: "
            + "; ".join(warnings[:5])
            + (f" (and {len(warnings) - 5} more)" if len(warnings) > 5 else "")
        ]
    if controls:
        warnings.append(
            f"{controls} control characters or noncharacters removed (HTML does not allow "
            "them, and libxml2's tree cannot hold them)"
        )
    units: list[Tagged] = []
    writes: list[tuple[Any, int]] = []  # (what to write back, its unit)
    visit(root, units, writes)

    def rebuild(outputs: list[list[Node]]) -> str:
        for target, unit in writes:
            target(outputs[unit])
        return serialize(root, whole) + ("\n" if whole and text.endswith("\n") else "")

    return Parsed(units, rebuild, warnings)


def serialize(root, whole: bool) -> str:
    """The tree as HTML. libxml2's writer drops a <meta http-equiv="Content-Type"> and
    percent-escapes spaces and non-ASCII characters in URL attributes; markers keep both as
    they were."""
    from lxml import html

    kept: dict[str, tuple[Any, str, str]] = {}
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for name, value in el.attrib.items():
            meta = name == "http-equiv" and value.lower() == "content-type"
            if meta or (name in URL_ATTRIBUTES and (not value.isascii() or " " in value)):
                marker = f"aiayn-kept-{len(kept)}-"
                kept[marker] = (el, name, value)
                el.set(name, marker)
    if whole:
        tree = root.getroottree()
        out = html.tostring(tree, encoding="unicode", method="html", doctype=tree.docinfo.doctype)
    else:
        out = (root.text or "") + "".join(
            html.tostring(c, encoding="unicode", method="html") for c in root
        )
    for marker, (el, name, value) in kept.items():
        out = out.replace(marker, escape(value, quote=True), 1)
        el.set(name, value)
    return out


def visit(el, units: list[Tagged], writes: list) -> None:
    """Collect the runs of text of `el` and of its block descendants, and their attributes."""
    if untouched(el):
        return
    attributes(el, units, writes)
    run: list = []  # the inline children of the current run
    anchor: Any = None  # the element whose tail opens the run (None: el.text)
    for child in list(el):
        if is_inline(child):
            run.append(child)
            inline_attributes(child, units, writes)
            continue
        add_run(el, anchor, run, units, writes)
        visit(child, units, writes)
        anchor, run = child, []
    add_run(el, anchor, run, units, writes)


def inline_attributes(el, units: list[Tagged], writes: list) -> None:
    if not untouched(el):
        attributes(el, units, writes)
        for child in el:
            inline_attributes(child, units, writes)


def attributes(el, units: list[Tagged], writes: list) -> None:
    for name in ATTRIBUTES:
        value = el.get(name)
        if value and value.strip():

            def put(nodes: list[Node], el=el, name=name) -> None:
                el.set(name, "".join(n for n in nodes if isinstance(n, str)))

            writes.append((put, len(units)))
            units.append(Tagged(" ".join(value.split()), line=el.sourceline or 0))


def add_run(parent, anchor, run: list, units: list[Tagged], writes: list) -> None:
    """One run of text: the text after `anchor` (or the parent's own text) and the inline
    elements that follow, with their tails."""
    first = parent.text if anchor is None else anchor.tail
    nodes: list[Node] = [first or ""]
    for child in run:
        nodes.append(inline_tree(child))
        nodes.append(child.tail or "")
    text, spans = plain(nodes)
    if not re.search(r"[^\W\d_]", text):
        return
    lead = re.match(r"\s*", nodes[0]).group()  # type: ignore[union-attr]
    last = nodes[-1] if isinstance(nodes[-1], str) else ""
    trail = last[len(last.rstrip()) :]
    line = (anchor if anchor is not None else parent).sourceline or 0

    def put(out: list[Node]) -> None:
        for child in run:
            parent.remove(child)
        set_text(parent, anchor, None)
        attach(parent, anchor, [lead, *out, trail])

    writes.append((put, len(units)))
    units.append(Tagged(text, spans, line))


def inline_tree(el) -> Node:
    if untouched(el) or el.tag in VOID or not isinstance(el.tag, str):
        return (el, None)
    kids: list[Node] = [el.text or ""]
    for child in el:
        kids.append(inline_tree(child))
        kids.append(child.tail or "")
    return (el, kids)


def set_text(parent, after, value: str | None) -> None:
    if after is None:
        parent.text = value
    else:
        after.tail = value


def attach(parent, after, nodes: list[Node]) -> None:
    """Put text and elements into `parent` after the element `after` (None: at its start)."""
    index = 0 if after is None else parent.index(after) + 1
    slot = after
    for node in nodes:
        if isinstance(node, str):
            if node:
                current = parent.text if slot is None else slot.tail
                set_text(parent, slot, (current or "") + node)
            continue
        el, kids = node
        el.tail = None
        if kids is not None:
            el.text = None
            for child in list(el):
                el.remove(child)
        parent.insert(index, el)
        index += 1
        if kids is not None:
            attach(el, None, kids)
        slot = el
