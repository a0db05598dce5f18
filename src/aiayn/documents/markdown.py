"""Markdown, read by markdown-it-py (CommonMark, with tables and strikethrough): the text of
headings, paragraphs, list items, table cells, link text and image alt text is translated; code
spans, fenced and indented code, URLs, HTML blocks and front matter stay byte-identical.

Each inline run (the content of a paragraph, heading or cell) is replaced where it lies in the
source; everything else is copied. Emphasis and links become tags placed by alignment
(inline.py); code spans, inline HTML, images and line breaks move as void tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aiayn.documents.inline import Node, Tagged, plain, text_of
from aiayn.documents.parsed import Parsed
from aiayn.documents.segment import LETTER

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.M | re.S)
PAIRED = {"em_open": "em_close", "strong_open": "strong_close", "s_open": "s_close"}
ESCAPE = re.compile(r"([\\`*_\[\]<>|])")
BLOCK_START = re.compile(r"^(\d+)([.)])(?=\s|$)|^([-+*#>=])(?=\s|$)")


class UnplaceableError(ValueError):
    """An inline run whose tokens could not be matched to its source (left as it is)."""


@dataclass(frozen=True)
class Raw:
    """Markdown written back as it was: a code span, inline HTML, a line break."""

    text: str


@dataclass(frozen=True)
class Pair:
    """The two halves of emphasis or a link: '**' and '**', '[' and '](url "title")'."""

    open: str
    close: str


@dataclass(frozen=True)
class Image:
    """An image: '![' + its alt text (translated as a unit of its own) + '](src)'."""

    alt: int  # the unit holding its alt text
    tail: str


def parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def parse(text: str) -> Parsed:
    front = FRONT_MATTER.match(text)
    head = front.group() if front else ""
    body = text[len(head) :]
    first_line = head.count("\n")
    starts = [0] + [m.end() for m in re.finditer(r"\n", body)]
    units: list[Tagged] = []
    places: list[tuple[int, int, int]] = []  # (start, end, unit) of each inline run
    warnings: list[str] = []
    line_cursor: dict[int, int] = {}
    for token in parser().parse(body):
        if token.type != "inline" or not token.map or not token.content.strip():
            continue
        line = token.map[0]
        where = locate(body, starts, line, token.content, line_cursor.get(line, 0))
        if where is None:
            warnings.append(f"line {first_line + line + 1}: could not place its text; kept")
            continue
        line_cursor[line] = where[1] - starts[line] if token.map[1] - line == 1 else 0
        try:
            nodes = inline_nodes(token.content, token.children or [], units, first_line + line)
        except UnplaceableError as err:
            warnings.append(f"line {first_line + line + 1}: {err}; kept as it is")
            continue
        text_, spans = plain(nodes)
        places.append((where[0], where[1], len(units)))
        units.append(Tagged(text_, spans, first_line + line + 1))

    def rebuild(outputs: list[list[Node]]) -> str:
        out, cursor = [], 0
        for start, end, unit in sorted(places):
            out.append(body[cursor:start])
            if LETTER.search(body[start:end]):
                out.append(escape_start(write(outputs[unit], outputs)))
            else:  # no word in it, alt texts included: nothing translated, not one byte changed
                out.append(body[start:end])
            cursor = end
        out.append(body[cursor:])
        return head + "".join(out)

    return Parsed(units, rebuild, warnings)


def locate(
    body: str, starts: list[int], line: int, content: str, after: int
) -> tuple[int, int] | None:
    """(start, end) of an inline run's content in the source: each of its lines is found in
    the source line it came from (a table cell's '\\|' reads as '|')."""
    lines = content.split("\n")
    span_start = span_end = 0
    for k, part in enumerate(lines):
        if line + k >= len(starts):
            return None
        lo = starts[line + k]
        hi = starts[line + k + 1] if line + k + 1 < len(starts) else len(body)
        pattern = "".join(r"\\?\|" if c == "|" else re.escape(c) for c in part)
        m = re.compile(pattern).search(body, lo + (after if k == 0 else 0), hi)
        if m is None:
            return None
        span_start = m.start() if k == 0 else span_start
        span_end = m.end()
    return span_start, span_end


def inline_nodes(content: str, children, units: list[Tagged], line: int) -> list[Node]:
    """The tree of text and tags of one inline run, each tag holding its source Markdown; an
    image's alt text becomes a unit of its own, appended to `units`."""
    reader = InlineReader(content, units, line)
    for tok in children:
        reader.read(tok)
    return reader.finish()


class InlineReader:
    """Reads an inline run's tokens in order, each matched against the run's source text (so
    that a tag keeps the exact Markdown it was written with), into a tree of nodes."""

    def __init__(self, content: str, units: list[Tagged], line: int) -> None:
        self.content, self.units, self.line = content, units, line
        self.cursor = 0  # the source is matched up to here
        self.root: list[Node] = []
        self.current = self.root  # the list the next node goes in
        self.stack: list[tuple[str, list[Node], int]] = []  # (closing type, its list, its place)
        self.skip_to_close = False  # in an autolink, taken whole with its opening

    def take(self, pattern: str) -> str:
        """The source text at the cursor that `pattern` matches; the cursor moves past it."""
        m = re.compile(pattern, re.S).match(self.content, self.cursor)
        if m is None:
            at = self.content[self.cursor : self.cursor + 20]
            raise UnplaceableError(f"cannot match {pattern!r} at {at!r}")
        self.cursor = m.end()
        return m.group()

    def read(self, tok) -> None:
        """One token: text, a void tag, or a tag's opening or closing half."""
        kind = tok.type
        if self.skip_to_close:
            self.skip_to_close = kind != "link_close"
        elif kind == "text":
            self.take(fuzzy(tok.content))
            self.current.append(tok.content)
        elif kind in ("softbreak",):
            self.take(r"[ \t]*\n[ \t]*")
            self.current.append(" ")
        elif kind == "hardbreak":
            self.void(r"(?: {2,}|\\)\n")
        elif kind == "code_inline":
            self.void(r"(`+)(?:.*?[^`])??\1(?!`)")
        elif kind == "html_inline":
            self.void(re.escape(tok.content))
        elif kind in PAIRED:
            self.open(PAIRED[kind], self.take(re.escape(tok.markup)))
        elif kind == "link_open" and tok.markup == "autolink":
            self.void(r"<[^<>\s]*>")
            self.skip_to_close = True
        elif kind == "link_open":
            self.open("link_close", self.take(r"\["))
        elif kind in PAIRED.values():
            self.close(kind, self.take(re.escape(tok.markup)))
        elif kind == "link_close":
            self.close(kind, link_tail(self.take))
        elif kind == "image":
            self.image(tok)
        else:
            raise UnplaceableError(f"a {kind} token")

    def void(self, pattern: str) -> None:
        """A tag that wraps nothing (a code span, inline HTML, a break): its source as it is."""
        self.current.append((Raw(self.take(pattern)), None))

    def open(self, closing: str, opened: str) -> None:
        """A tag's opening half: the nodes that follow go inside it until `closing`."""
        self.stack.append((closing, self.current, len(self.current)))
        self.current.append((opened, []))
        self.current = self.current[-1][1]

    def close(self, kind: str, closing: str) -> None:
        """A tag's closing half: the tag becomes a `Pair` of its two halves."""
        expected, parent, at = self.stack.pop()
        if expected != kind:
            raise UnplaceableError(f"{kind} where {expected} was expected")
        opened, kids = parent[at]
        parent[at] = (Pair(opened, closing), kids)
        self.current = parent

    def image(self, tok) -> None:
        """An image: a void tag here, and its alt text a unit of its own."""
        self.take(r"!\[")
        alt = "".join(c.content for c in tok.children or [] if c.type == "text")
        balanced_label(self.take)
        self.current.append((Image(len(self.units), link_tail(self.take)), None))
        self.units.append(Tagged(alt, line=self.line + 1))

    def finish(self) -> list[Node]:
        """The tree, once every tag has closed and the whole source is matched."""
        if self.stack or self.content[self.cursor :].strip():
            raise UnplaceableError("markup left open")
        return self.root


def fuzzy(text: str) -> str:
    """A pattern for a text token's source: any character may be backslash-escaped or
    written as an entity."""
    return "".join(
        re.escape(c) if c.isalnum() or c.isspace() else rf"(?:\\?{re.escape(c)}|&[#\w]+;)"
        for c in text
    )


def balanced_label(take) -> str:
    """The inside of [...] up to its closing bracket (brackets inside may nest)."""
    return take(r"(?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*")


def link_tail(take) -> str:
    """']' and what follows a link's text: '(url "title")', '[label]', '[]' or nothing."""
    return take(
        r"\](?:\((?:[^()\\\"']|\\.|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\([^()]*\))*\)"
        r"|\[(?:[^\[\]\\]|\\.)*\])?"
    )


def write(nodes: list[Node], outputs: list[list[Node]]) -> str:
    """A translated inline run as Markdown."""
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(ESCAPE.sub(r"\\\1", node))
            continue
        payload, kids = node
        if isinstance(payload, Raw):
            out.append(payload.text)
        elif isinstance(payload, Image):
            alt = ESCAPE.sub(r"\\\1", text_of(outputs[payload.alt]))
            out.append(f"![{alt}{payload.tail}")
        else:
            out.append(payload.open + write(kids or [], outputs) + payload.close)
    return "".join(out)


def escape_start(text: str) -> str:
    """A translation that begins like a list item or a heading ('3. ', '- ') is escaped so
    that it stays a paragraph."""
    return BLOCK_START.sub(
        lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}", text, count=1
    )
