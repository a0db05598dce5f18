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
    """The tree of text and tags of one inline run, each tag holding its source Markdown."""
    cursor = 0
    root: list[Node] = []
    stack: list[tuple[str, list[Node], int]] = []  # (closing type, its list, where it opened)
    current = root

    def take(pattern: str) -> str:
        nonlocal cursor
        m = re.compile(pattern, re.S).match(content, cursor)
        if m is None:
            raise UnplaceableError(f"cannot match {pattern!r} at {content[cursor : cursor + 20]!r}")
        cursor = m.end()
        return m.group()

    skip_to_close = False
    for tok in children:
        kind = tok.type
        if skip_to_close:
            skip_to_close = kind != "link_close"
            continue
        if kind == "text":
            take(fuzzy(tok.content))
            current.append(tok.content)
        elif kind in ("softbreak",):
            take(r"[ \t]*\n[ \t]*")
            current.append(" ")
        elif kind == "hardbreak":
            current.append((Raw(take(r"(?: {2,}|\\)\n")), None))
        elif kind == "code_inline":
            current.append((Raw(take(r"(`+)(?:.*?[^`])??\1(?!`)")), None))
        elif kind == "html_inline":
            current.append((Raw(take(re.escape(tok.content))), None))
        elif kind in PAIRED:
            opened = take(re.escape(tok.markup))
            stack.append((PAIRED[kind], current, len(current)))
            current.append((opened, []))
            current = current[-1][1]
        elif kind == "link_open" and tok.markup == "autolink":
            current.append((Raw(take(r"<[^<>\s]*>")), None))
            skip_to_close = True
        elif kind == "link_open":
            take(r"\[")
            stack.append(("link_close", current, len(current)))
            current.append(("[", []))
            current = current[-1][1]
        elif kind in PAIRED.values() or kind == "link_close":
            closing = take(re.escape(tok.markup)) if kind != "link_close" else link_tail(take)
            expected, parent, at = stack.pop()
            if expected != kind:
                raise UnplaceableError(f"{kind} where {expected} was expected")
            opened, kids = parent[at]
            parent[at] = (Pair(opened, closing), kids)
            current = parent
        elif kind == "image":
            take(r"!\[")
            alt = "".join(c.content for c in tok.children or [] if c.type == "text")
            balanced_label(take)
            current.append((Image(len(units), link_tail(take)), None))
            units.append(Tagged(alt, line=line + 1))
        else:
            raise UnplaceableError(f"a {kind} token")
    if stack or content[cursor:].strip():
        raise UnplaceableError("markup left open")
    return root


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
