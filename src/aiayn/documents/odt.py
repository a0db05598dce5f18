"""OpenDocument text (.odt, .ott), read with lxml on the package's XML (package.py): odfpy
writes back every XML member and the manifest even when nothing changed, and lxml leaves all
but the paragraphs as they were. Every paragraph and heading (`text:p`, `text:h`) of the body
(list items, table cells, frames and notes included) and of the master pages' headers and
footers is a unit. `text:span` and `text:a` are tags around their text (void where they wrap
none); spaces (`text:s`), tabs, line breaks, fields, notes, frames and bookmarks are void tags
kept as they are. Styles, settings, images and the manifest are untouched.
"""

from __future__ import annotations

import re

from aiayn.documents.html import attach
from aiayn.documents.inline import Node, Tagged, plain
from aiayn.documents.office import Gaps
from aiayn.documents.package import Kind, Package
from aiayn.documents.parsed import Parsed

KIND = Kind("an OpenDocument text (.odt)", "open it in your word processor and save it as .odt")
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
WRAPS = {f"{TEXT}span", f"{TEXT}a"}
PARAGRAPHS = {f"{TEXT}p", f"{TEXT}h"}
BREAKS = {f"{TEXT}tab", f"{TEXT}line-break"}  # between two words: a space for the model
MIMETYPE = re.compile(rb"application/vnd\.oasis\.opendocument\.text(-template|-master)?$")
# where running text lives: the body of content.xml, the master pages of styles.xml
PARTS = {"content.xml": f"{OFFICE}body", "styles.xml": f"{OFFICE}master-styles"}


def parse(data: bytes) -> Parsed:
    package = Package(data, KIND)
    mimetype = package.member("mimetype", "what kind of OpenDocument it is").strip()
    if not MIMETYPE.match(mimetype):
        raise ValueError(
            f"mimetype: {mimetype.decode('ascii', 'replace')!r}, not a text document; "
            "--format odt reads text documents (.odt)"
        )
    trees = {name: package.xml(name, "the document's text") for name in PARTS}
    units: list[Tagged] = []
    writes: list = []
    for name, where in PARTS.items():
        for root in trees[name].getroot().iter(where):
            for p in [el for el in root.iter() if el.tag in PARAGRAPHS]:
                paragraph(p, units, writes)

    def rebuild(outputs: list[list[Node]]) -> bytes:
        for put, unit in writes:
            put(outputs[unit])
        return package.rebuilt(trees)

    return Parsed(units, rebuild)


def paragraph(p, units: list[Tagged], writes: list) -> None:
    """One paragraph or heading as a unit, if it has letters outside its void tags."""
    gaps = Gaps(lambda el: el.tag in BREAKS)
    nodes = gaps.read(children(p))
    text, spans = plain(nodes)
    if not re.search(r"[^\W\d_]", text):
        return

    def put(out: list[Node]) -> None:
        for child in list(p):
            p.remove(child)
        p.text = None
        attach(p, None, out)
        for el in gaps.voids:
            el.tail = gaps.after(el, el.tail or "") or None

    writes.append((put, len(units)))
    units.append(Tagged(text, spans, p.sourceline or 0))


def children(el) -> list[Node]:
    """An element's text and inline children, each child followed by its tail."""
    nodes: list[Node] = [el.text or ""]
    for child in el:
        nodes.append(tree(child))
        nodes.append(child.tail or "")
    return nodes


def tree(el) -> Node:
    """A span or link that holds text is a tag around it; anything else is void."""
    if el.tag in WRAPS:
        kids = children(el)
        if plain(kids)[0].strip():
            return (el, kids)
    return (el, None)
