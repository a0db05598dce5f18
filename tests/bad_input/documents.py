"""Bad documents for `aiayn translate --format ...`: a clear error naming the file and place, or
a named warning with nothing lost."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn
from tests.documents.office_files import odt_file, word_file


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


def translate(*flags: str) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn translate` of a small text with these flags (a misuse to refuse)."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / "a.txt").write_text("A cat runs.\n", encoding="utf-8")
        return aiayn(["translate", "--model", str(f.run), "--input", str(tmp / "a.txt"), *flags])

    return case


def zipped(parts: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in parts.items():
            z.writestr(name, content)
    return out.getvalue()


def office(make: Callable[[], bytes], name: str, content: bytes | None) -> bytes:
    """A good office file of the tests (docx or odt) with a member replaced or (None) removed."""
    with zipfile.ZipFile(io.BytesIO(make())) as z:
        parts = {n: z.read(n) for n in z.namelist() if n != name or content is not None}
    return zipped(parts if content is None else parts | {name: content})


OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)  # an old binary .doc's header


LONG = ("word " * 300).strip().encode() + b".\n"
PO = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
XLIFF = (
    b'<?xml version="1.0"?>\n<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
)
SRT = b"1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n"
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
    Case(
        "translate --format po: a string without its closing quote (polib drops the entry)",
        document("de.po", PO + b'msgid "Open\nmsgstr ""\n', "po"),
        2,
        ("de.po", "line 5", "'msgid \"Open'", "a quote missing", "msgfmt -c"),
    ),
    Case(
        "translate --format po: a line that is no PO keyword",
        document("de.po", PO + b'msgid "Open"\nmsgstr ""\nhello there\n', "po"),
        2,
        ("de.po", "line 7", "not a valid PO entry", "msgfmt -c"),
    ),
    Case(
        "translate --format xliff: an element left open",
        document("de.xlf", XLIFF + b"<file><body><trans-unit id='1'><source>Hi</source>", "xliff"),
        2,
        ("de.xlf", "line 3", "not well-formed XML", "xmllint --noout"),
    ),
    Case(
        "translate --format xliff: an HTML page",
        document("page.xlf", b"<html><body><p>Hi</p></body></html>", "xliff"),
        2,
        ("page.xlf", "line 1", "<html>", "not XLIFF 1.2 or 2.0", "the right --format"),
    ),
    Case(
        "translate --format srt: a timing line without its arrow",
        document("a.srt", SRT + b"2\n00:00:03,000 00:00:04,000\nBye.\n\n", "srt"),
        2,
        ("a.srt", "line 5", "not a subtitle", "'start --> end' timing", "fix it there"),
    ),
    Case(
        "translate --format srt: an HTML page",
        document("page.srt", b"<p>Hello</p>\n", "srt"),
        2,
        ("page.srt", "line 1", "not a subtitle", "the right --format"),
    ),
    Case(
        "translate --format srt: a tag left open",
        document(
            "a.srt",
            SRT.replace(b"Hello.", b"<i>Hello there."),
            "srt",
            check=lambda out: out.count("<i>") == 1 and out.rstrip().endswith("</i>"),
        ),
        0,
        ("a.srt", "line 3", "<i> closed at the subtitle's end"),
    ),
    Case(
        "translate --dry-run --nbest 2",
        translate("--dry-run", "--nbest", "2"),
        2,
        ("--dry-run copies each sentence once", "drop --nbest"),
    ),
    Case(
        "translate --retranslate --format html",
        translate("--retranslate", "--format", "html"),
        2,
        ("--retranslate is for --format po or xliff", "drop it or --format html"),
    ),
    Case(
        "translate --format docx: an old binary .doc renamed .docx",
        document("old.docx", OLE, "docx"),
        2,
        ("old.docx", "not a zip file", "Word document", "save it as .docx"),
    ),
    Case(
        "translate --format docx: a zip without the main document part",
        document("other.docx", office(word_file, "word/document.xml", None), "docx"),
        2,
        ("other.docx", "no main document part (word/document.xml)", "save it as .docx"),
    ),
    Case(
        "translate --format docx: broken XML in word/document.xml",
        document(
            "broken.docx", office(word_file, "word/document.xml", b"<w:document><w:p>"), "docx"
        ),
        2,
        ("broken.docx", "word/document.xml, line 1, column", "broken XML", "save it as .docx"),
    ),
    Case(
        "translate --format odt: not a zip file",
        document("plain.odt", b"The light of God.\n", "odt"),
        2,
        ("plain.odt", "not a zip file", "OpenDocument text", "save it as .odt"),
    ),
    Case(
        "translate --format odt: a zip without content.xml",
        document("empty.odt", office(odt_file, "content.xml", None), "odt"),
        2,
        ("empty.odt", "no content.xml", "save it as .odt"),
    ),
    Case(
        "translate --format odt: broken XML in content.xml",
        document("broken.odt", office(odt_file, "content.xml", b"<a><b></a>"), "odt"),
        2,
        ("broken.odt", "content.xml, line 1, column", "broken XML", "save it as .odt"),
    ),
    Case(
        "translate --format odt: a spreadsheet, not a text document",
        document(
            "sheet.odt",
            office(odt_file, "mimetype", b"application/vnd.oasis.opendocument.spreadsheet"),
            "odt",
        ),
        2,
        ("sheet.odt", "mimetype", "opendocument.spreadsheet", "not a text document"),
    ),
]
