"""Bad documents for `aiayn translate --format ...`: a clear error naming the file and place, or
a named warning with nothing lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn


def document(
    name: str, content: bytes, fmt: str, *flags: str, check: Callable[[str], bool] | None = None
) -> Callable[[Fixtures, Path], Outcome]:
    """Translate a document of `content`; `check` says whether the output kept what it must."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / name).write_bytes(content)
        out = tmp / "out"
        argv = ["translate", "--model", str(f.run), "--input", str(tmp / name)]
        outcome = aiayn([*argv, "--output", str(out), "--format", fmt, "--no-progress", *flags])
        kept = outcome.code != 0 or (out.exists() and (check is None or check(out.read_text())))
        return Outcome(outcome.code, outcome.message, kept, outcome.traceback)

    return case


def repaired(text: str) -> bool:
    """Every tag of the broken input is in the output once, and it parses."""
    from lxml import html

    html.fragment_fromstring(text, create_parent="div")
    return all(text.count(tag) == 1 for tag in ("<b>", "</b>", "<i>", "</i>"))


LONG = ("word " * 300).strip().encode() + b".\n"
CASES = [
    Case(
        "translate --format text: a binary file",
        document("image.txt", b"GIF89a\x01\x00\x00\x00\xff", "text"),
        2,
        ("image.txt", "NUL byte at byte offset 7", "binary", "text, Markdown or HTML"),
    ),
    Case(
        "translate --format markdown: Latin-1, not UTF-8",
        document("latin1.md", "# Überschrift\n\nGrüße\n".encode("latin-1"), "markdown"),
        2,
        ("latin1.md", "not valid UTF-8 at byte offset 2", "line 1", "convert the file to UTF-8"),
    ),
    Case(
        "translate --format text: an empty document",
        document("empty.txt", b"\n\n", "text", check=lambda out: out == "\n\n"),
        0,
        ("empty.txt", "nothing to translate", "written out unchanged"),
    ),
    Case(
        "translate --format text: a sentence over the limit, --too-long error",
        document(
            "long.txt",
            b"Short one.\n\n" + LONG,
            "text",
            "--max-input-tokens",
            "50",
            "--too-long",
            "error",
        ),
        2,
        (
            "long.txt",
            "1 sentence(s) longer than --max-input-tokens 50",
            "line 3",
            "--too-long truncate",
        ),
    ),
    Case(
        "translate --format text: a sentence over the limit, --too-long skip",
        document(
            "long.txt",
            b"Short one.\n\n" + LONG,
            "text",
            "--max-input-tokens",
            "50",
            "--too-long",
            "skip",
            check=lambda out: LONG.decode() in out,
        ),
        0,
        ("long.txt", "line 3", "left untranslated"),
    ),
    Case(
        "translate --format html: broken nesting",
        document(
            "broken.html", b"<p>Broken <b>nesting <i>is</b> here</i>.</p>", "html", check=repaired
        ),
        0,
        (
            "broken.html",
            "malformed HTML, repaired as a browser would",
            "line 1",
            "Opening and ending tag mismatch",
        ),
    ),
    Case(
        "translate --format html: a tag left open across a paragraph",
        document(
            "open.html",
            b"<p>One <b>two</p>\n<p>three</b> four.</p>",
            "html",
            check=lambda out: out.count("<b>") == 1 and out.count("<p>") == 2,
        ),
        0,
        ("open.html", "malformed HTML", "line 2", "Unexpected end tag : b"),
    ),
]
