"""SubRip subtitles (.srt), read and written by the `srt` library (chosen over pysubs2, which
reads every format into an ASS event list and writes SRT back renumbered, its tags turned into
ASS overrides and back: `srt` keeps each subtitle's number, timing and text as they are).

Each subtitle's lines are joined into one unit of running text (dialogue, lines that all begin
with a dash, stays one unit per speaker), translated, and broken again into at most as many
lines, at the spaces nearest to where the source's lines ended in proportion (so a copy comes
back as it was). Numbers and timings are untouched. `<i>`, `<b>`, `<u>`, `<font>` are tags
placed by alignment (inline.py), read by the standard library's HTML tokenizer; ASS overrides
such as `{\\an8}` are kept as void tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from aiayn.documents.inline import Node, Tagged, plain, text_of
from aiayn.documents.parsed import Parsed

OVERRIDE = re.compile(r"\{\\[^{}]*\}")  # {\an8}, {\i1}: ASS overrides that some SRT files carry
DASH = ("-", "‐", "–", "—")  # a dialogue line's first character
# kept before the translation as it was: leading overrides and a speaker's dash
PREFIX = re.compile(r"(?:\{\\[^{}]*\}\s*)*(?:[-‐–—]\s+)?")


@dataclass(frozen=True)
class Tag:
    """An inline tag as the subtitle wrote it; `name` closes it."""

    raw: str
    name: str


def parse(text: str) -> Parsed:
    subtitles = read(text)
    units: list[Tagged] = []
    plan: list[list[tuple[int, str, list[int]]]] = []  # per subtitle: (unit, prefix, line lengths)
    warnings: list[str] = []
    line = 1
    for sub in subtitles:
        groups = speakers(sub.content.split("\n"))
        plan.append([])
        for group in groups:
            joined = " ".join(group)
            prefix = PREFIX.match(joined).group()  # type: ignore[union-attr]
            nodes, closed = inline_nodes(joined[len(prefix) :])
            if closed:
                warnings.append(f"line {line + 2}: {closed} closed at the subtitle's end")
            tagged_text, spans = plain(nodes)
            plan[-1].append((len(units), prefix, [len(x.strip()) for x in group]))
            units.append(Tagged(tagged_text, spans, line + 2))
        line += 3 + sub.content.count("\n")
    eol = "\r\n" if "\r\n" in text else "\n"

    def rebuild(outputs: list[list[Node]]) -> str:
        import srt

        for sub, groups in zip(subtitles, plan, strict=True):
            sub.content = "\n".join(
                prefix + render(rebalance(outputs[u], lengths, len(prefix)))
                for u, prefix, lengths in groups
            )
        return srt.compose(subtitles, reindex=False, eol=eol)

    return Parsed(units, rebuild, warnings)


def read(text: str) -> list:
    """The subtitles; a damaged file is an error naming the line where it stops making sense."""
    import srt

    try:
        subtitles = list(srt.parse(text))
    except (srt.SRTParseError, ValueError) as err:
        start = getattr(err, "expected_start", None)  # where the unreadable text begins
        where = f"line {text.count(chr(10), 0, start) + 1}: " if start is not None else ""
        found = getattr(err, "unmatched_content", "").strip().split("\n")[0][:60]
        raise ValueError(
            f"{where}not a subtitle (number, 'start --> end' timing, text, blank line): "
            f"{found!r}; fix it there or give the right --format"
        ) from None
    if not subtitles and text.strip():
        raise ValueError("line 1: no subtitle in it; give an .srt file or the right --format")
    return subtitles


def speakers(lines: list[str]) -> list[list[str]]:
    """The subtitle's lines as units: all of them, or one per line of a dialogue."""
    if len(lines) > 1 and all(x.lstrip().startswith(DASH) for x in lines):
        return [[x] for x in lines]
    return [lines]


class Tokens(HTMLParser):
    """A subtitle's text as text and (Tag, children) nodes; every byte kept."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[tuple[Tag | None, list[Node]]] = [(None, [])]

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.stack.append((Tag(self.get_starttag_text() or f"<{tag}>", tag), []))

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.stack[-1][1].append((Tag(self.get_starttag_text() or f"<{tag}/>", tag), None))

    def handle_endtag(self, tag: str) -> None:
        if len(self.stack) > 1 and self.stack[-1][0].name == tag:  # type: ignore[union-attr]
            self.pop()
        else:  # a stray end tag: kept where it is
            self.stack[-1][1].append((Tag(f"</{tag}>", ""), None))

    def handle_data(self, data: str) -> None:
        cursor = 0
        for m in OVERRIDE.finditer(data):
            self.stack[-1][1].extend([data[cursor : m.start()], (Tag(m.group(), ""), None)])
            cursor = m.end()
        self.stack[-1][1].append(data[cursor:])

    def handle_entityref(self, name: str) -> None:
        self.stack[-1][1].append(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self.stack[-1][1].append(f"&#{name};")

    def pop(self) -> None:
        tag, kids = self.stack.pop()
        self.stack[-1][1].append((tag, kids))


def inline_nodes(text: str) -> tuple[list[Node], str]:
    """The nodes of a subtitle's text, and the tags it left open (closed at its end), named."""
    tokens = Tokens()
    tokens.feed(text)
    tokens.close()
    rawdata = tokens.rawdata  # what the tokenizer held back: a "<" that opens no tag
    if rawdata:
        tokens.stack[-1][1].append(rawdata)
    unclosed = [t.raw for t, _ in tokens.stack[1:] if t is not None]
    while len(tokens.stack) > 1:
        tokens.pop()
    return tokens.stack[0][1], ", ".join(unclosed)


def render(nodes: list[Node]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        else:
            tag, kids = node
            closing = f"</{tag.name}>" if kids is not None else ""
            out.append(tag.raw + render(kids or []) + closing)
    return "".join(out)


def rebalance(nodes: list[Node], lengths: list[int], prefix: int = 0) -> list[Node]:
    """The text broken at most len(lengths) - 1 times, at the spaces nearest to the source
    lines' ends scaled to the translation's length (`prefix`: characters written before it)."""
    flat = " " * prefix + text_of(nodes)
    spaces = [i for i, c in enumerate(flat) if c == " " and i >= prefix]
    source = sum(lengths) + len(lengths) - 1
    breaks: list[int] = []
    end = -1
    for n in lengths[:-1]:
        end += n + 1
        target = end * len(flat) / max(source, 1)
        later = [i for i in spaces if i > (breaks[-1] if breaks else -1)]
        if later:
            breaks.append(min(later, key=lambda i: abs(i - target)))
    return broken(nodes, set(breaks), [prefix])


def broken(nodes: list[Node], breaks: set[int], at: list[int]) -> list[Node]:
    """`nodes` with the spaces at these positions of their text turned into line breaks."""
    out: list[Node] = []
    for node in nodes:
        if isinstance(node, str):
            chars = list(node)
            for k in range(len(chars)):
                if at[0] + k in breaks:
                    chars[k] = "\n"
            at[0] += len(node)
            out.append("".join(chars))
        else:
            tag, kids = node
            out.append((tag, None if kids is None else broken(kids, breaks, at)))
    return out
