"""Plain text: paragraphs are runs of non-blank lines; blank lines (and their spacing) are kept
as they are, the soft-wrapped lines of a paragraph are joined, and the paragraph is written back
on one line with its first line's indentation."""

from __future__ import annotations

import re

from aiayn.documents.inline import Node, Tagged, text_of
from aiayn.documents.parsed import Parsed

LINE = re.compile(r".*?(?:\r\n|\n|\r|$)")  # Unix, Windows and old Mac line ends


def parse(text: str) -> Parsed:
    lines = [m.group() for m in LINE.finditer(text) if m.group()]
    pieces: list[str | int] = []  # kept text, or the index of a paragraph
    units: list[Tagged] = []
    paragraph: list[str] = []
    start = 0

    def close() -> None:
        if paragraph:
            first = paragraph[0]
            indent = first[: len(first) - len(first.lstrip())]
            ending = paragraph[-1][len(paragraph[-1].rstrip("\r\n")) :]
            pieces.append(indent)
            pieces.append(len(units))
            pieces.append(ending)
            units.append(Tagged(" ".join(x.strip() for x in paragraph), line=start))
            paragraph.clear()

    for n, line in enumerate(lines, start=1):
        if line.strip():
            if not paragraph:
                start = n
            paragraph.append(line)
        else:
            close()
            pieces.append(line)
    close()

    def rebuild(outputs: list[list[Node]]) -> str:
        return "".join(p if isinstance(p, str) else text_of(outputs[p]) for p in pieces)

    return Parsed(units, rebuild)
