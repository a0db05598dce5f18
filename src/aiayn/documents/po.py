"""gettext catalogues (.po, .pot), read and written by polib (the field's pure-Python PO library;
translate-toolkit does more than this needs and brings a large tree of dependencies).

Each entry without a translation (an empty msgstr; every one with --retranslate) is
translated: msgid into msgstr, or msgid into msgstr[0] and msgid_plural into the other forms
the catalogue's Plural-Forms header counts (one form only: msgid_plural's). Obsolete entries,
the header, comments, flags, references and contexts are kept; each translated entry is marked
`fuzzy`, so that a reviewer sees it in every PO editor before it ships.

What a program fills in or a user types must survive the model: format placeholders (`%s`,
`%1$s`, `%(name)s`, `{name}`, `$[officename]`), markup (`<b>`) and the line breaks inside a
message become void tags, kept verbatim and placed by alignment (inline.py); the accelerator
marker (`_File`, `&Open`, `~Save`) goes back into the word aligned to the one it marked, before
the same letter where that word has it, else before its first letter.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from aiayn.documents.inline import Node, Tagged, plain
from aiayn.documents.parsed import Parsed

PLACEHOLDER = re.compile(
    r"""%(?:\d+\$)?[-+\#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGaAcspn%]
    |%\([^)\s]+\)[-+\#0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]   # Python's %(name)s
    |\{[^{}\s]*\}                                          # {name}, {0}, {}
    |\$\[[^\]\s]+\]                                        # LibreOffice's $[officename]
    |<[^<>\n]+>                                            # markup
    |\n                                                    # a line break inside a message
    """,
    re.X,
)
# A marker before a letter: KDE's and Windows' & and LibreOffice's ~ anywhere in a word (not
# an entity), GNOME's _ at a word's start only (inside a word it joins a snake_case name)
ACCELERATOR = re.compile(r"(?:(?<![\w&~])_|(?<![&~])[&~](?!\w+;))(?=[^\W_])")
LETTER = re.compile(r"[^\W\d_]")
PLURALS = re.compile(r"nplurals\s*=\s*(\d+)")
# A keyword or continuation line and its string: polib drops an entry whose string is not
# closed, or not opened, without a word; these lines are checked first
STRING_LINE = re.compile(r'^(?:#~\s*)?(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\b|")')
QUOTED = re.compile(r'^(?:#~\s*)?[\w\[\]]*\s*"(?:[^"\\]|\\.)*"\s*$')


@dataclass(frozen=True)
class Placeholder:
    """A piece of a message kept verbatim; `glued` sides touched the text without a space."""

    text: str
    glued_left: bool
    glued_right: bool


@dataclass(frozen=True)
class Accelerator:
    """The accelerator marker, before `letter` of the word it marks."""

    marker: str
    letter: str


def parse(text: str, retranslate: bool = False) -> Parsed:
    """A catalogue's untranslated entries as units (every one when `retranslate`)."""
    catalogue = read(text)
    plurals = PLURALS.search(catalogue.metadata.get("Plural-Forms", ""))
    units: list[Tagged] = []
    writes: list[tuple[Any, list[int]]] = []  # (entry, its units: msgid[, msgid_plural])
    kept = 0
    for entry in catalogue:
        if entry.obsolete or not entry.msgid:
            continue
        if not retranslate and translated(entry):
            kept += 1
            continue
        messages = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
        writes.append((entry, list(range(len(units), len(units) + len(messages)))))
        units.extend(message_unit(m, entry.linenum) for m in messages)
    warnings = (
        [f"{kept} entries already translated, kept as they are (--retranslate: translate them)"]
        if kept
        else []
    )
    skipped = [0]  # accelerators that found no word

    def rebuild(outputs: list[list[Node]]) -> str:
        for entry, ids in writes:
            found = [render(outputs[i], skipped) for i in ids]
            found = [edges(m, f) for m, f in zip(messages_of(entry), found, strict=True)]
            fill(entry, found, int(plurals.group(1)) if plurals else None)
            if "fuzzy" not in entry.flags:
                entry.flags.insert(0, "fuzzy")  # first, as msgmerge writes it
        if skipped[0]:
            print(
                f"warning: {skipped[0]} accelerator marker(s) dropped: their translation has "
                "no letter to carry one; add them in review",
                file=sys.stderr,
            )
        return str(catalogue)

    return Parsed(units, rebuild, warnings)


def retranslating(text: str) -> Parsed:
    """`parse` for --retranslate: entries that have a translation are translated again."""
    return parse(text, retranslate=True)


def read(text: str):
    """The catalogue; a damaged one is an error naming its line."""
    import polib

    if not text.strip():
        raise ValueError("empty: not a PO catalogue; give a .po or .pot file")
    for n, line in enumerate(text.splitlines(), start=1):
        if STRING_LINE.match(line) and not QUOTED.match(line):
            raise ValueError(
                f"line {n}: {line[:60]!r} is not a keyword and one quoted string (a quote "
                "missing?); fix the file there (`msgfmt -c` names every error) or give the "
                "right --format"
            )
    try:
        return polib.pofile(text, wrapwidth=79)  # msgcat's and msgmerge's page width
    except (OSError, ValueError) as err:
        where = re.search(r"line (\d+)", str(err))
        line = f"line {where.group(1)}: " if where else ""
        raise ValueError(
            f"{line}not a valid PO entry ({err}); fix the file (`msgfmt -c --check-format` "
            "names every error) or give the right --format"
        ) from None


def translated(entry) -> bool:
    """Whether an entry holds a translation (a fuzzy one too: it awaits its reviewer)."""
    return bool(entry.msgstr) or any(entry.msgstr_plural.values())


def messages_of(entry) -> list[str]:
    return [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])


def fill(entry, found: list[str], nplurals: int | None) -> None:
    """msgstr, or every plural form: [0] from msgid, the rest from msgid_plural."""
    if not entry.msgid_plural:
        entry.msgstr = found[0]
        return
    n = nplurals or max(len(entry.msgstr_plural), 2)
    forms = [found[1]] if n == 1 else [found[0]] + [found[1]] * (n - 1)
    entry.msgstr_plural = dict(enumerate(forms))


def edges(message: str, translation: str) -> str:
    """The translation with the message's leading and trailing whitespace (often a "\\n" that
    msgfmt -c requires on both sides)."""
    lead = message[: len(message) - len(message.lstrip())]
    trail = message[len(message.rstrip()) :] if message.strip() else ""
    return lead + translation.strip() + trail


def message_unit(message: str, line: int) -> Tagged:
    """A message as a sentence: placeholders, line breaks and the accelerator as void tags."""
    core = message.strip()
    nodes: list[Node] = []
    kept = [m.span() for m in PLACEHOLDER.finditer(core)]
    found = [m.start() for m in ACCELERATOR.finditer(core)]
    found = [at for at in found if not any(a <= at < b for a, b in kept)]
    start = 0
    if len(found) == 1:  # more than one: not a key (R&D & co., a name), left in the text
        at = found[0]
        word = max(core.rfind(" ", 0, at), core.rfind("\n", 0, at)) + 1
        marked = Accelerator(core[at], core[at + 1])
        nodes += [*pieces(core[:word]), (marked, None)]
        core, start = core[:at] + core[at + 1 :], word
    nodes += pieces(core[start:], core[:start])
    text, spans = plain(nodes)
    return Tagged(text, spans, line)


def pieces(text: str, before: str = "") -> list[Node]:
    """Text with each placeholder as a void tag, set apart by spaces so that it sits between
    words for the alignment; `before` is the text that precedes (to see what it touched)."""
    nodes: list[Node] = []
    cursor = 0
    for m in PLACEHOLDER.finditer(text):
        left = text[m.start() - 1] if m.start() else before[-1:]
        right = text[m.end() : m.end() + 1]
        glued = (bool(left) and not left.isspace(), bool(right) and not right.isspace())
        if m.group() == "\n":
            glued = (True, True)  # a line break takes no space on either side
        nodes += [text[cursor : m.start()], " " if glued[0] else ""]
        nodes += [(Placeholder(m.group(), *glued), None), " " if glued[1] else ""]
        cursor = m.end()
    nodes.append(text[cursor:])
    return [n for n in nodes if n]


def render(nodes: list[Node], skipped: list[int]) -> str:
    """A translated message: placeholders glued back as they were, the accelerator put back
    into the next word (else the one before; else dropped and counted in `skipped`)."""
    parts: list[str] = []
    texts: list[int] = []  # which parts are translated text (an accelerator may go there)
    glue, pending = False, None
    for node in nodes:
        if isinstance(node, str):
            if glue:
                node, glue = node.lstrip(" "), False
            if pending is not None and LETTER.search(node):
                node, pending = mark(node.lstrip(" "), pending), None
            texts.append(len(parts))
            parts.append(node)
            continue
        payload = node[0]
        if isinstance(payload, Accelerator):
            pending = payload
            continue
        if payload.glued_left and parts:
            parts[-1] = parts[-1].rstrip(" ")
        parts.append(payload.text)
        glue = payload.glued_right
    if pending is not None:
        last = [k for k in texts if LETTER.search(parts[k])]
        if not last:
            skipped[0] += 1
        else:
            words = parts[last[-1]].split(" ")
            k = max(i for i, w in enumerate(words) if LETTER.search(w))
            words[k] = mark(words[k], pending)
            parts[last[-1]] = " ".join(words)
    return re.sub(" {2,}", " ", "".join(parts)).strip(" ")  # tags side by side: one space


def mark(text: str, accelerator: Accelerator) -> str:
    """`text` with the marker before its first word's `letter` (any case), else before its
    first letter."""
    word = text.split(" ", 1)[0]
    at = word.lower().find(accelerator.letter.lower())
    if at < 0:
        found = LETTER.search(text)
        at = found.start() if found else 0
    return text[:at] + accelerator.marker + text[at:]
