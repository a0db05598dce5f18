"""XLIFF 1.2 and 2.0 (.xlf, .xliff), read and written by lxml, as HTML is (translate-toolkit's
XLIFF classes bring a large tree of dependencies for what a tree walk does here).

Each `<source>` whose unit has no translation yet (an empty or missing `<target>`; every one
with --retranslate) is translated into a `<target>` beside it; a unit (or file) marked
`translate="no"` is left alone. Inline elements are tags placed by alignment (inline.py):
`<g>`, `<mrk>` (1.2) and `<pc>`, `<mrk>` (2.0) wrap the words they wrapped; `<x/>`, `<bx/>`,
`<ex/>`, `<ph>`, `<bpt>`, `<ept>`, `<it>` (1.2) and `<ph/>`, `<sc/>`, `<ec/>`, `<cp/>` (2.0) are
copied whole, their native code untranslated. A new translation is marked for review as each
version's CAT tools read it: 1.2 `state="needs-review-translation"` with
`state-qualifier="mt-suggestion"`; 2.0 `state="translated"` on the `<segment>` (the state
before `reviewed` and `final`, which stay the reviewer's to give).
"""

from __future__ import annotations

import copy
import re

from aiayn.documents.inline import Node, Tagged, plain
from aiayn.documents.parsed import Parsed

VERSIONS = {
    "urn:oasis:names:tc:xliff:document:1.2": "1.2",
    "urn:oasis:names:tc:xliff:document:2.0": "2.0",
}
WRAPPING = {"g", "mrk", "pc"}  # inline elements around words; the others are copied whole
DECLARATION = re.compile(r"\s*<\?xml[^>]*\?>")


def parse(text: str, retranslate: bool = False) -> Parsed:
    root, version = read(text)
    ns = root.nsmap[None] if None in root.nsmap else root.tag[1:].split("}")[0]
    q = {name: f"{{{ns}}}{name}" for name in ("source", "target", "trans-unit", "segment")}
    holder = q["trans-unit"] if version == "1.2" else q["segment"]
    units: list[Tagged] = []
    sources = []
    kept = 0
    for el in root.iter(holder):
        source = el.find(q["source"])
        if source is None or skipped(el):
            continue
        target = el.find(q["target"])
        if target is not None and has_text(target) and not retranslate:
            kept += 1
            continue
        nodes = [source.text or ""]
        for child in source:
            nodes += [inline_tree(child), child.tail or ""]
        tagged_text, spans = plain(nodes)
        units.append(Tagged(tagged_text, spans, source.sourceline or 0))
        sources.append(source)
    warnings = (
        [f"{kept} units already translated, kept as they are (--retranslate: translate them)"]
        if kept
        else []
    )

    def rebuild(outputs: list[list[Node]]) -> str:
        for source, nodes in zip(sources, outputs, strict=True):
            write_target(source, q["target"], nodes, version)
        return serialize(root, text)

    return Parsed(units, rebuild, warnings)


def retranslating(text: str) -> Parsed:
    """`parse` for --retranslate: units that have a target are translated again."""
    return parse(text, retranslate=True)


def read(text: str):
    """The document's root and its XLIFF version; damaged XML or another format is an error
    naming the line."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False)
    try:
        root = etree.fromstring(DECLARATION.sub("", text, count=1).encode("utf-8"), parser)
    except etree.XMLSyntaxError as err:
        raise ValueError(
            f"line {err.lineno or 1}: not well-formed XML ({err.msg}); fix the file there "
            "(`xmllint --noout FILE` names every error) or give the right --format"
        ) from None
    namespace = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    if etree.QName(root).localname != "xliff" or namespace not in VERSIONS:
        raise ValueError(
            f"line {root.sourceline}: <{etree.QName(root).localname}> in namespace "
            f"{namespace or 'none'!r} is not XLIFF 1.2 or 2.0 (<xliff xmlns="
            f'"{next(iter(VERSIONS))}">); give an XLIFF file or the right --format'
        )
    return root, VERSIONS[namespace]


def skipped(el) -> bool:
    """A unit (or its file, or group) marked translate="no"."""
    return any(a.get("translate") == "no" for a in el.iterancestors()) or (
        el.get("translate") == "no"
    )


def has_text(target) -> bool:
    return bool("".join(target.itertext()).strip()) or len(target) > 0


def inline_tree(el) -> Node:
    """An inline element: wrapping ones with their children, the rest whole (void)."""
    from lxml import etree

    if not isinstance(el.tag, str) or etree.QName(el).localname not in WRAPPING:
        return (el, None)
    kids: list[Node] = [el.text or ""]
    for child in el:
        kids += [inline_tree(child), child.tail or ""]
    return (el, kids)


def write_target(source, tag: str, nodes: list[Node], version: str) -> None:
    """The `<target>` beside `source` (made if missing), holding `nodes` between the source's
    leading and trailing whitespace, marked for review."""
    target = source.getnext()
    if target is None or target.tag != tag:
        target = source.makeelement(tag, {})
        before = source.getprevious()
        indent = source.getparent().text if before is None else before.tail
        target.tail = source.tail
        source.addnext(target)
        source.tail = indent  # the target on a line of its own, as the source is
    for child in list(target):
        target.remove(child)
    target.text = None
    whole = "".join(source.itertext())
    lead = whole[: len(whole) - len(whole.lstrip())]
    trail = whole[len(whole.rstrip()) :] if whole.strip() else ""
    fill(target, [lead, *nodes, trail])
    if version == "1.2":
        target.set("state", "needs-review-translation")
        target.set("state-qualifier", "mt-suggestion")
    else:
        source.getparent().set("state", "translated")


def fill(parent, nodes: list[Node]) -> None:
    """Text and copies of the source's inline elements appended to `parent`; a copied
    element that touched a word without a space in the source touches it again."""
    last = None
    for node in glue(nodes):
        if isinstance(node, str):
            if last is None:
                parent.text = (parent.text or "") + node
            else:
                last.tail = (last.tail or "") + node
            continue
        el, kids = node
        made = copy.deepcopy(el) if kids is None else el.makeelement(el.tag, el.attrib)
        made.tail = None
        parent.append(made)
        if kids is not None:
            fill(made, kids)
        last = made


def glue(nodes: list[Node]) -> list[Node]:
    """The spaces next to a void element taken away on each side where the source had none."""
    out = list(nodes)
    for k, node in enumerate(out):
        if isinstance(node, str) or node[1] is not None:
            continue
        el = node[0]
        before = el.getparent().text if el.getprevious() is None else el.getprevious().tail
        if k and isinstance(out[k - 1], str) and before and not before[-1].isspace():
            out[k - 1] = out[k - 1].rstrip(" ")
        after = el.tail
        if k + 1 < len(out) and isinstance(out[k + 1], str) and after and not after[0].isspace():
            out[k + 1] = out[k + 1].lstrip(" ")
    return out


def serialize(root, text: str) -> str:
    """The tree as XML, with the input's declaration as it was written."""
    from lxml import etree

    declaration = DECLARATION.match(text)
    head = ""
    if declaration:
        gap = text[declaration.end() : text.find("<", declaration.end())]
        head = declaration.group() + gap
    body = etree.tostring(root.getroottree(), encoding="unicode")
    return head + body + text[len(text.rstrip()) :]
