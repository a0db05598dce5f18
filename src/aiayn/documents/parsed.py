"""What a format's reader gives the translation: the document's units of running text and how
to write the document back around their translations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aiayn.documents.inline import Node, Tagged


@dataclass
class Parsed:
    units: list[Tagged]  # paragraphs, headings, cells...: each split into sentences later
    # each unit's translation -> the document (bytes for a zip package: docx, odt)
    rebuild: Callable[[list[list[Node]]], str | bytes]
    warnings: list[str] = field(default_factory=list)  # repairs made while reading, in words
