"""Protected spans: URLs, e-mail addresses, paths and file names, code identifiers, numbers and
versions, printf/ICU/brace placeholders, and the user's own patterns are taken out of a
sentence before it is translated and put back after, verbatim.

A model trained today has no placeholder pieces, so a protected span travels the way a
Markdown code span does: it becomes a void `Span` (its text taken out) and is put
back at the target position aligned to where it stood (inline.py). No model can lose or double
it. A model that learned placeholder pieces (`⟨p0⟩`, ...) could carry them itself;
`repair_placeholders` is what would make its output whole (a lost one re-inserted at its
aligned place, a doubled one kept once), counted, never dropped silently.

Such a model, designed but not built (measuring whether it helps needs GPU-hours): `aiayn
prepare --placeholders` would give every training pair in which the same protected span occurs
on both sides the same numbered piece on both sides (`⟨p0⟩`, `⟨p1⟩`... as SentencePiece
user-defined symbols, the way language tags are kept whole in data/prepare/bpe.py), and
`LineTranslator` would send such a model the pieces instead of taking the spans out, repairing
its output with `repair_placeholders`. The patterns would then move down to `data/`, which
`prepare` may import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex  # the user's patterns: `re` with a time limit (a sacreBLEU dependency)

from aiayn.documents.inline import Node, Span, Tagged

EXTENSIONS = (
    "json|xml|xhp|html?|md|txt|py|js|ts|css|cpp|hpp|[ch]|java|ya?ml|toml|ini|cfg|conf|sh|exe|"
    "dll|so|png|jpe?g|gif|svg|pdf|csv|tsv|pot?|xlf|xliff|odt|ods|docx?|xlsx?|zip|gz|tar|log|sql|"
    "rs|go|rb|php|bat|ps1|srt"
)
# What is protected without being asked, by kind (docs/translation.md, Protected spans).
BUILTIN: dict[str, str] = {
    "url": r"\b(?:https?|ftp|file)://[^\s<>\"']*[^\s<>\"'.,;:!?)\]}]|\bwww\.[\w-]+(?:\.[\w-]+)+",
    "e-mail": r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b",
    "windows path": r"\b[A-Za-z]:\\(?:[^\\\s<>:\"|?*]+(?: [^\\\s<>:\"|?*]+)*\\)*[^\\\s<>:\"|?*]*",
    "path": r"(?<![\w/.])(?:~|\.{1,2})?/[\w.~-]+(?:/[\w.~-]+)*/?",
    "file name": rf"\b(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:{EXTENSIONS})\b",
    "printf": r"%(?:\d+\$)?[-+#0]*\d*(?:\.\d+)?(?:l{0,2}|h)[sdifuxXeEgGcp]|%\(\w+\)[-+#0]*\d*"
    r"(?:\.\d+)?[sdifuxXeEgGc]",
    "placeholder": r"\$\{[^{}\s]+\}|\$\[[^\[\]\s]+\]|\{[\w.]*\}",
    "call": r"\b[A-Za-z_][\w.]*\(\)",
    "dotted name": r"\b[a-z_]\w*(?:\.[a-z_]\w*){2,}\b",
    "CamelCase": r"\b(?=\w*[a-z][A-Z])[A-Za-z]\w*\b",
    "snake_case": r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b",
    "number": r"\bv?\d+(?:[.,]\d+)+\b|\bv\d+\b",
}
# A user's pattern gets this long per text: one that backtracks without end (`(a+)+$`) is an
# error, not a server held (the built-in patterns are linear)
SECONDS = 1.0
PLACEHOLDER = "⟨p{}⟩"  # a placeholder piece a model may have learned (prepare --placeholders)
PLACEHOLDER_RE = re.compile(r"⟨p(\d+)⟩")


@dataclass(frozen=True)
class Protected:
    """A protected span's payload: its text, and the characters it touched in the source (no
    space between: '(config.json),'), so that it touches them again where they come back."""

    text: str
    before: str = ""  # the character just before it; "" after a space or at the start
    after: str = ""  # ...and just after it


class Protector:
    """The patterns a translation protects: the built-in ones and the user's, each checked."""

    def __init__(
        self, patterns: tuple[str, ...] = (), builtin: bool = True, field: str = "--protect"
    ) -> None:
        """`field` names where the user's patterns come from, for messages."""
        self.patterns = [re.compile(p) for p in (*BUILTIN.values(),) * builtin]
        self.default = builtin and not patterns  # the protection every request gets
        for pattern in patterns:
            self.patterns.append(checked(pattern, f"{field} {pattern!r}"))

    @classmethod
    def load(
        cls, patterns: tuple[str, ...] = (), files: tuple[Path, ...] = (), builtin: bool = True
    ) -> Protector:
        """The built-in patterns (unless `builtin` is False), `patterns`, and those of each
        file (one regular expression a line; blank lines and lines starting with # skipped)."""
        found = cls(patterns, builtin)
        for path in files:
            found.patterns += read_patterns(path)
            found.default = False
        return found

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The protected [start, end) ranges of `text`: leftmost first, the longest where two
        start together, none overlapping."""
        found = sorted(
            {m.span() for p in self.patterns for m in matches(p, text) if m.end() > m.start()},
            key=lambda s: (s[0], -s[1]),
        )
        out: list[tuple[int, int]] = []
        for start, end in found:
            if not out or start >= out[-1][1]:
                out.append((start, end))
        return out

    def tagged(self, sentence: Tagged) -> Tagged:
        """`sentence` with each protected range that lies whole inside one tag (or outside all)
        taken out of its text, a void span left where it stood."""
        cuts = [c for c in self.spans(sentence.text) if fits(c, sentence.spans)]
        if not cuts:
            return sentence
        return reduce(sentence, cuts)


def matches(pattern: Any, text: str) -> Iterator[Any]:
    """The pattern's matches in `text`; a user's (a `regex` pattern) within SECONDS."""
    if not isinstance(pattern, regex.Pattern):
        yield from pattern.finditer(text)
        return
    try:
        yield from list(pattern.finditer(text, timeout=SECONDS))
    except TimeoutError:
        raise ValueError(
            f"protect pattern {pattern.pattern!r}: took over {SECONDS:g} s on a text of "
            f"{len(text):,} characters (it backtracks, e.g. a repeat inside a repeat); write a "
            "simpler pattern"
        ) from None


def checked(pattern: str, where: str) -> Any:
    """A user's regular expression (compiled by `regex`: `re`'s syntax, with a time limit), or
    an error that names it and what is wrong."""
    try:
        compiled = regex.compile(pattern)
    except regex.error as err:
        raise ValueError(
            f"{where}: not a regular expression ({err}); write a Python regular expression, "
            "e.g. 'TKT-\\d+'"
        ) from None
    if compiled.fullmatch(""):
        raise ValueError(
            f"{where}: matches the empty string, so it would protect nothing; make it match "
            "at least one character"
        )
    return compiled


def read_patterns(path: Path) -> list[Any]:
    """The regular expressions of a --protect-file, each checked and named by its line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(
            f"--protect-file {path}: cannot read it ({err}); give a UTF-8 text "
            "file, one regular expression a line"
        ) from None
    return [
        checked(line, f"{path}, line {n}: {line!r}")
        for n, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def fits(cut: tuple[int, int], spans: tuple[Span, ...]) -> bool:
    """Whether a range lies whole inside or outside every tag, none sitting strictly within."""
    a, b = cut
    for span in spans:
        if span.void:
            if a < span.start < b:
                return False
            continue
        inside = span.start <= a and b <= span.end
        if not inside and a < span.end and b > span.start:
            return False
        if inside and not fits(cut, span.children):
            return False
    return True


def reduce(sentence: Tagged, cuts: list[tuple[int, int]]) -> Tagged:
    """The sentence with each cut taken out and a void `Protected` span where it stood; a cut
    touching text on both sides leaves a space, so that the words around it stay apart."""
    text = sentence.text
    touched = {(a, b): (text[a - 1 : a].strip(), text[b : b + 1].strip()) for a, b in cuts}
    gap = {c: " " if all(t) else "" for c, t in touched.items()}
    pieces, cursor = [], 0
    for a, b in cuts:
        pieces.append(text[cursor:a] + gap[(a, b)])
        cursor = b
    pieces.append(text[cursor:])

    def moved(pos: int) -> int:  # a position outside the cuts, in the reduced text
        return pos - sum(b - a - len(gap[(a, b)]) for a, b in cuts if b <= pos)

    def protected(a: int, b: int) -> Span:
        return Span(moved(a), moved(a), Protected(text[a:b], *touched[(a, b)]), void=True)

    def rebuild(spans: tuple[Span, ...], lo: int, hi: int) -> tuple[Span, ...]:
        mine = [c for c in cuts if lo <= c[0] and c[1] <= hi]
        items: list[tuple[int, int, Span]] = []
        for span in spans:
            kids = () if span.void else rebuild(span.children, span.start, span.end)
            mine = [c for c in mine if span.void or not (span.start <= c[0] < span.end)]
            new = Span(moved(span.start), moved(span.end), span.payload, span.void, kids)
            items.append((span.start, 0, new))
        items += [(a, 1, protected(a, b)) for a, b in mine]
        return tuple(s for _, _, s in sorted(items, key=lambda x: x[:2]))

    return Tagged("".join(pieces), rebuild(sentence.spans, 0, len(text)), sentence.line)


def restore(nodes: list[Node]) -> list[Node]:
    """Rendered nodes with each protected span written back as its text (a void tag no format
    needs to know), touching its neighbours as it did in the source."""
    out: list[Node] = []
    glue_next = ""  # the character the last span touched after it
    for node in nodes:
        if isinstance(node, str):
            if glue_next and node[:1] == " " and node.lstrip()[:1] == glue_next:
                node = node.lstrip(" ")
            glue_next = ""
            out.append(node)
            continue
        payload, kids = node
        glue_next = ""
        if not isinstance(payload, Protected):
            out.append((payload, None if kids is None else restore(kids)))
            continue
        last = out[-1] if out else None
        if isinstance(last, str) and glued_after(payload, last):
            out[-1] = last.rstrip(" ")
        out.append(payload.text)
        glue_next = payload.after
    return out


def glued_after(payload: Protected, last: str) -> bool:
    """Whether a span comes after the character it touched in the source (and a space)."""
    if not (payload.before and last.endswith(" ")):
        return False
    return last.rstrip()[-1:] == payload.before


@dataclass(frozen=True)
class Repaired:
    text: str
    lost: int  # placeholders the output lacked, re-inserted at their aligned place
    doubled: int  # copies beyond the first, removed


def repair_placeholders(output: str, spans: list[str], anchors: list[int]) -> Repaired:
    """An output of a model that carries placeholders, each `⟨pK⟩` replaced by the K-th span:
    a lost one goes in before target word `anchors[K]` (where its source word is aligned), a
    doubled one is kept where it first stands.

    Args:
        spans: the protected texts, K-th for `⟨pK⟩`.
        anchors: for each, the target word (of the output with its placeholders removed)
            where a lost one goes; past the end: at the end.
    """
    words: list[str | int] = []  # a word, or the index of a span
    seen: set[int] = set()
    doubled = 0
    for word in output.split():
        m = PLACEHOLDER_RE.fullmatch(word)
        k = int(m.group(1)) if m else len(spans)
        if k >= len(spans):
            words.append(word)
        elif k in seen:
            doubled += 1
        else:
            seen.add(k)
            words.append(k)
    lost = [k for k in range(len(spans)) if k not in seen]
    for k in sorted(lost, key=lambda k: (-anchors[k], -k)):  # the later first: indices stay true
        plain = [i for i, w in enumerate(words) if isinstance(w, str)]
        words.insert(plain[anchors[k]] if anchors[k] < len(plain) else len(words), k)
    text = " ".join(w if isinstance(w, str) else spans[w] for w in words)
    return Repaired(text, len(lost), doubled)


def repair_warning(name: str, lost: int, doubled: int) -> str:
    """The warning that counts a file's or request's repaired placeholders ("" when none)."""
    if not (lost or doubled):
        return ""
    return (
        f"warning: {name}: {lost} placeholder(s) lost and {doubled} doubled by the model; "
        "each lost one put back at its aligned place, each doubled one kept once"
    )


def protected_texts(spans: tuple[Span, ...]) -> list[str]:
    """The texts of the protected spans among `spans` and their children, in order."""
    found: list[str] = []
    for span in spans:
        if isinstance(span.payload, Protected):
            found.append(span.payload.text)
        found += protected_texts(span.children)
    return found


def holds(output: str, spans: list[str]) -> bool:
    """Whether `output` holds each span as often as the list does."""
    return all(output.count(span) >= spans.count(span) for span in set(spans))
