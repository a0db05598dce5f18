"""Word documents (.docx, .docm, .dotx), read with lxml on the package's XML (package.py):
python-docx cannot reach footnotes, endnotes, fields, text boxes or content controls, so the
WordprocessingML parts are read directly. Every paragraph (`w:p`) of the main document, its
tables and text boxes, the headers, footers, footnotes and endnotes is a unit; its runs' text
is the running text. The paragraph's most common run formatting is its base; runs formatted
otherwise (bold, italic, a character style...) become tags, adjacent runs of the same
formatting merged first (Word splits runs at every edit); a hyperlink, a tracked insertion or a
smart tag is a tag around its runs. Tabs, breaks, drawings, note references, bookmarks, content
controls and fields (kept whole, their results untranslated) are void tags. Styles, numbering,
images and section properties are untouched.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiayn.documents.inline import Node, Tagged, plain
from aiayn.documents.office import Gaps
from aiayn.documents.package import Kind, Package
from aiayn.documents.parsed import Parsed

KIND = Kind("a Word document (.docx)", "open it in your word processor and save it as .docx")
TYPES = "[Content_Types].xml"
# the parts that hold running text, by content type
MAIN = re.compile(
    r"(wordprocessingml\.(document|template)|ms-word\.\w+\.macroEnabled\w*)\.main\+xml$"
)
OTHER = re.compile(r"wordprocessingml\.(header|footer|footnotes|endnotes)\+xml$")
CONTAINERS = {"hyperlink", "ins", "moveTo", "smartTag", "customXml", "dir", "bdo"}  # wrap runs
PROPERTIES = {"pPr", "rPr", "smartTagPr", "customXmlPr"}  # kept first in their element
BREAKS = {"tab", "ptab", "br", "cr"}  # between two words: a space for the model


@dataclass(frozen=True)
class Format:
    """Runs of one formatting (their `w:rPr`, None for none): a tag over their text."""

    rpr: Any


@dataclass(frozen=True)
class Piece:
    """One non-text child of a run (a tab, a break, a drawing...), with its run's formatting."""

    rpr: Any
    child: Any


@dataclass(frozen=True)
class Whole:
    """Elements kept as they are (a field, a bookmark, a content control)."""

    elements: tuple[Any, ...]


@dataclass(frozen=True)
class Shell:
    """A hyperlink, insertion or smart tag: its runs are rewritten inside it."""

    element: Any


def parse(data: bytes) -> Parsed:
    from lxml import etree

    package = Package(data, KIND)
    names = text_parts(package)
    trees = {name: package.xml(name, "a part of the document") for name in names}
    units: list[Tagged] = []
    writes: list = []
    for tree in trees.values():
        ns = f"{{{etree.QName(tree.getroot()).namespace}}}"
        for p in list(tree.getroot().iter(f"{ns}p")):
            paragraph(p, ns, units, writes)

    def rebuild(outputs: list[list[Node]]) -> bytes:
        for put, unit in writes:
            put(outputs[unit])
        return package.rebuilt(trees)

    return Parsed(units, rebuild)


def text_parts(package: Package) -> list[str]:
    """The main document part, then headers, footers and notes, as [Content_Types] lists them."""
    types = package.xml(TYPES, "the package's list of parts")
    main: list[str] = []
    other: list[str] = []
    for el in types.getroot().iter("{*}Override"):
        name, kind = el.get("PartName", "").lstrip("/"), el.get("ContentType", "")
        if name not in package.members:
            continue
        if MAIN.search(kind):
            main.append(name)
        elif OTHER.search(kind):
            other.append(name)
    if not main:
        raise ValueError(
            f"{TYPES} names no main document part (word/document.xml): not {KIND.name}, or "
            f"damaged; {KIND.fix}"
        )
    return [main[0], *other]


def local(el) -> str:
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def paragraph(p, ns: str, units: list[Tagged], writes: list) -> None:
    """One paragraph as a unit, if it has letters in its runs."""
    nodes = items(p, ns)
    counts: Counter = Counter()
    raw = texts(nodes, counts)
    if not re.search(r"[^\W\d_]", raw):
        return
    base = counts.most_common(1)[0][0]
    rpr = next(n[0].rpr for n in flat(nodes) if isinstance(n[0], Format) and key(n[0].rpr) == base)
    gaps = Gaps(lambda payload: isinstance(payload, Piece) and local(payload.child) in BREAKS)
    nodes = gaps.read(merged(nodes, base))
    text, spans = plain(nodes)
    lead, trail = raw[: len(raw) - len(raw.lstrip())], raw[len(raw.rstrip()) :]

    def put(out: list[Node]) -> None:
        for child in content(p):
            p.remove(child)
        write(p, [lead, *out, trail], rpr, Writing(ns, gaps))

    writes.append((put, len(units)))
    units.append(Tagged(text, spans, p.sourceline or 0))


def content(el) -> list:
    """An element's children but its properties."""
    return [c for c in el if local(c) not in PROPERTIES]


def items(parent, ns: str) -> list[Node]:
    """A paragraph's (or container's) content as nodes: text pieces as (Format, [text]),
    containers with their own nodes, everything else void; a complex field (from its
    `w:fldChar begin` to its end) is one void node."""
    out: list[Node] = []
    field: list = []
    depth = 0
    for child in content(parent):
        name = local(child)
        if depth or (name == "r" and child.find(f"{ns}fldChar") is not None):
            field.append(child)
            for mark in child.iter(f"{ns}fldChar"):
                kind = mark.get(f"{ns}fldCharType")
                depth += 1 if kind == "begin" else -1 if kind == "end" else 0
            if depth <= 0:
                out.append((Whole(tuple(field)), None))
                field, depth = [], 0
        elif name == "r":
            out.extend(run(child, ns))
        elif name in CONTAINERS:
            out.append((Shell(child), items(child, ns)))
        else:
            out.append((Whole((child,)), None))
    if field:  # a field still open at the paragraph's end
        out.append((Whole(tuple(field)), None))
    return out


def run(r, ns: str) -> list[Node]:
    rpr = r.find(f"{ns}rPr")
    out: list[Node] = []
    for child in content(r):
        if local(child) == "t":
            out.append((Format(rpr), [child.text or ""]))
        else:
            out.append((Piece(rpr, child), None))
    return out


def key(rpr) -> str:
    """What makes two runs' formatting the same (their `w:rPr`, written out)."""
    from lxml import etree

    return "" if rpr is None else etree.tostring(rpr, encoding="unicode")


def texts(nodes: list[Node], counts: Counter) -> str:
    """The raw text of the nodes; `counts` gets each formatting's number of characters."""
    out = []
    for payload, kids in nodes:
        if isinstance(payload, Format):
            counts[key(payload.rpr)] += len(kids[0])
            out.append(kids[0])
        elif isinstance(payload, Shell):
            out.append(texts(kids, counts))
    return "".join(out)


def flat(nodes: list[Node]) -> list[Node]:
    """Every node, containers' own nodes included."""
    out = []
    for node in nodes:
        out.append(node)
        if isinstance(node[0], Shell):
            out.extend(flat(node[1]))
    return out


def merged(nodes: list[Node], base: str) -> list[Node]:
    """Text of the base formatting as plain text; adjacent runs of one formatting as one tag."""
    out: list[Node] = []
    for payload, kids in nodes:
        if isinstance(payload, Shell):
            out.append((payload, merged(kids, base)))
        elif not isinstance(payload, Format):
            out.append((payload, kids))
        elif key(payload.rpr) == base:
            out.append(kids[0])
        elif out and isinstance(out[-1], tuple) and isinstance(out[-1][0], Format):
            if key(out[-1][0].rpr) == key(payload.rpr):
                out[-1][1][0] += kids[0]
            else:
                out.append((payload, list(kids)))
        else:
            out.append((payload, list(kids)))
    return out


@dataclass
class Writing:
    ns: str  # WordprocessingML's namespace, in braces
    gaps: Gaps  # the paragraph's void tags
    void: Any = None  # the void tag just written, if text has not followed it yet


def write(parent, nodes: list[Node], rpr, at: Writing) -> None:
    """Nodes written into `parent` as runs; text takes the formatting `rpr`."""
    from lxml import etree

    text = ""
    for node in [*nodes, None]:
        if isinstance(node, str):
            if at.void is not None:
                node, at.void = at.gaps.after(at.void, node), None
            text += node
            continue
        if text:
            parent.append(text_run(rpr, text, at.ns))
            text = ""
        if node is None:
            break
        payload, kids = node
        if isinstance(payload, Format):
            write(parent, kids, payload.rpr, at)
        elif isinstance(payload, Piece):
            r = etree.SubElement(parent, f"{at.ns}r")
            if payload.rpr is not None:
                r.append(copy.deepcopy(payload.rpr))
            r.append(payload.child)
        elif isinstance(payload, Whole):
            parent.extend(payload.elements)
        else:
            for child in content(payload.element):
                payload.element.remove(child)
            write(payload.element, kids, rpr, at)
            parent.append(payload.element)
        at.void = payload if kids is None else None


def text_run(rpr, text: str, ns: str):
    """A `w:r` of `text` (spaces kept) in the formatting `rpr`."""
    from lxml import etree

    r = etree.Element(f"{ns}r")
    if rpr is not None:
        r.append(copy.deepcopy(rpr))
    t = etree.SubElement(r, f"{ns}t")
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return r
