"""OpenDocument text: paragraphs, headings, list items, table cells and the footer units;
`text:span` and `text:a` tags around their words, spaces, tabs and line breaks void; every other
member of the zip kept byte for byte. odfpy, which the reader does not use, checks the
structure."""

import io

import pytest

from aiayn.cli import main
from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents import odt as reader
from aiayn.documents.inline import source_nodes
from tests.documents.office_files import odt_file
from tests.documents.test_docx import members, rezip

QUIET = DocumentOptions(progress=False)
TEXT_PARTS = {"content.xml", "styles.xml"}


def structure(data: bytes) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Each paragraph and heading as odfpy reads it: its tag, its text, and its spans' and
    links' (style or address, text)."""
    from odf import teletype
    from odf.element import Element
    from odf.opendocument import load
    from odf.text import A, H, P, Span

    doc = load(io.BytesIO(data))
    out = []
    for kind in (H, P):
        for p in doc.getElementsByType(kind):
            tags: list[tuple[str, str]] = []
            for tag in (Span, A):
                for el in p.getElementsByType(tag):
                    assert isinstance(el, Element)
                    name = el.getAttribute("stylename") or el.getAttribute("href")
                    tags.append((name, teletype.extractText(el)))
            out.append((p.qname[1], teletype.extractText(p), tags))
    return out


def identity(data: bytes) -> bytes:
    """Each unit written back as its own source: what an identity model would give."""
    parsed = reader.parse(data)
    return parsed.rebuild([source_nodes(unit) for unit in parsed.units])


def test_an_identity_translation_keeps_the_document():
    source = odt_file()
    out = identity(source)
    assert structure(out) == structure(source)
    assert len(structure(out)) == 8  # a heading; 7 paragraphs, the footer's among them
    old, new = members(source), members(out)
    assert list(new) == list(old)
    assert {n: b for n, b in new.items() if n not in TEXT_PARTS} == {
        n: b for n, b in old.items() if n not in TEXT_PARTS
    }
    assert new["content.xml"] == old["content.xml"]  # spans, a link, voids: all in place


def test_units_and_their_tags():
    units = reader.parse(odt_file()).units
    assert [u.text for u in units][:3] == [
        "The light",
        "The light of God.",
        "And God said, let there be light. Done.",  # a line break is a space for the model
    ]
    tags = [(s.start, s.end, s.payload.tag.split("}")[1], s.void) for s in units[2].spans]
    assert tags == [
        (0, 12, "span", False),
        (14, 32, "a", False),
        (33, 33, "line-break", True),
        (39, 39, "s", True),
        (39, 39, "span", True),  # a span around nothing is void
    ]
    assert [u.text for u in units][-1] == "The footer of the book."  # styles.xml's master page


def test_a_translation_moves_the_spans_with_the_words(scripted):
    out, n = translate_document(scripted, odt_file(), "odt", DecodeConfig(), QUIET)
    found = {text: tags for _, text, tags in structure(out)}
    assert found["GOD. OF LIGHT THE"] == [("Bold", "LIGHT")]
    assert "TABLE. THE OF CELL A" in found and "BOOK. THE OF FOOTER THE" in found
    assert "2024" in found and n == 8
    kept = {k: v for k, v in members(odt_file()).items() if k not in TEXT_PARTS}
    assert {k: v for k, v in members(out).items() if k not in TEXT_PARTS} == kept


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda data: data[: len(data) // 2], "not a zip file"),
        (lambda data: rezip(members(data) | {"mimetype": b"application/zip"}), "mimetype"),
        (
            lambda data: rezip({k: v for k, v in members(data).items() if k != "content.xml"}),
            "no content.xml",
        ),
        (lambda data: rezip(members(data) | {"content.xml": b"<a><b></a>"}), "line 1, column"),
    ],
)
def test_a_damaged_file_is_named(scripted, damage, says):
    options = DocumentOptions(progress=False, name="book.odt")
    with pytest.raises(ValueError, match=r"book\.odt") as err:
        translate_document(scripted, damage(odt_file()), "odt", DecodeConfig(), options)
    assert says in str(err.value) and ".odt" in str(err.value).removeprefix("book.odt")


def test_the_command_line_with_a_tiny_model(talking_model, tmp_path):
    (tmp_path / "book.odt").write_bytes(odt_file())
    argv = ["translate", "--model", str(talking_model), "--format", "odt", "--no-progress"]
    out = tmp_path / "buch.odt"
    assert main([*argv, "--input", str(tmp_path / "book.odt"), "--output", str(out)]) == 0
    got = structure(out.read_bytes())
    assert len(got) == 8 and ("p", "2024", []) in got
    assert [tags for _, _, tags in got][1][0][0] == "Bold"  # the span is still there
    kept = {k: v for k, v in members(odt_file()).items() if k not in TEXT_PARTS}
    assert {k: v for k, v in members(out.read_bytes()).items() if k not in TEXT_PARTS} == kept
