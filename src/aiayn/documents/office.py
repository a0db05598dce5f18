"""What the office readers (docx.py, odt.py) share: the whitespace around void tags. A tab or
a line break between two words separates them for the model (a space is read after it, and
none written back); and where a space followed a void tag in the source (a field, a note
reference), one follows it when written back, which `plain`'s single space would lose."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiayn.documents.inline import Node


class Gaps:
    """The void tags of one paragraph, and which of them whitespace followed in the source."""

    def __init__(self, is_break: Callable[[Any], bool]) -> None:
        self.is_break = is_break
        self.spaced: set[int] = set()  # ids of the payloads with whitespace after them
        self.voids: list[Any] = []  # every void payload, in document order

    def read(self, nodes: list[Node]) -> list[Node]:
        """`nodes` with a space after each break; notes which voids had whitespace after."""
        out: list[Node] = []
        for k, node in enumerate(nodes):
            if isinstance(node, str):
                out.append(node)
                continue
            payload, kids = node
            out.append((payload, kids if kids is None else self.read(kids)))
            if kids is not None:
                continue
            self.voids.append(payload)
            after = nodes[k + 1] if k + 1 < len(nodes) else ""
            if isinstance(after, str) and after[:1].isspace():
                self.spaced.add(id(payload))
            elif self.is_break(payload):
                out.append(" ")
        return out

    def after(self, payload: Any, text: str) -> str:
        """The text that follows a void tag, as it is written back."""
        if id(payload) in self.spaced:
            return text if not text or text[:1].isspace() else " " + text
        return text.lstrip() if self.is_break(payload) else text
