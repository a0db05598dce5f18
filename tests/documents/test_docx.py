"""Word documents: each paragraph of the body, tables, headers and footers a unit; runs'
formatting, hyperlinks and fields carried as tags; every other member of the zip kept byte for
byte. python-docx, which the reader does not use, checks the structure."""

import io
import zipfile

import pytest

from aiayn.cli import main
from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.documents import docx as reader
from aiayn.documents.inline import source_nodes
from tests.documents.office_files import word_file

QUIET = DocumentOptions(progress=False)
TEXT_PARTS = {"word/document.xml", "word/header1.xml", "word/footer1.xml"}


def formatted(data: bytes) -> list[list[tuple[str, bool | None, bool | None]]]:
    """Each body paragraph's characters with their bold and italic, as python-docx reads them;
    a hyperlink's characters marked 'link'."""
    import docx

    out = []
    for p in docx.Document(io.BytesIO(data)).paragraphs:
        chars = []
        for item in p.iter_inner_content():
            runs = item.runs if hasattr(item, "runs") else [item]
            for r in runs:
                style = "link" if item is not r else (r.bold, r.italic)
                chars.extend((c, style) for c in r.text)
        out.append(chars)
    return out


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {name: z.read(name) for name in z.namelist()}


def identity(data: bytes) -> bytes:
    """Each unit written back as its own source: what an identity model would give."""
    parsed = reader.parse(data)
    return parsed.rebuild([source_nodes(unit) for unit in parsed.units])


def test_an_identity_translation_keeps_the_document():
    import docx

    source = word_file()
    out = identity(source)
    assert formatted(out) == formatted(source)
    before, after = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(out))
    assert len(after.paragraphs) == len(before.paragraphs) == 4
    assert after.tables[0].cell(0, 0).text == "A cell of the table."
    assert after.sections[0].header.paragraphs[0].text == "The header of the book."
    assert b'<w:fldSimple w:instr="PAGE"><w:r><w:t>1</w:t>' in members(out)["word/footer1.xml"]
    assert after.sections[0].footer.paragraphs[0].text == "Page  of the book."  # field aside
    old, new = members(source), members(out)
    assert list(new) == list(old)
    assert {n: b for n, b in new.items() if n not in TEXT_PARTS} == {
        n: b for n, b in old.items() if n not in TEXT_PARTS
    }
    assert b"<w:instrText>REF chapter \\h</w:instrText>" in new["word/document.xml"]


def test_runs_of_one_formatting_are_merged():
    import docx

    first = docx.Document(io.BytesIO(identity(word_file()))).paragraphs[0]
    assert [(r.text, r.bold) for r in first.runs] == [
        ("The ", None),
        ("light", True),
        (" of God.", None),
    ]


def test_units_and_their_tags():
    units = reader.parse(word_file()).units
    assert [u.text for u in units] == [
        "The light of God.",
        "And God said, let there be light. Done.",  # a tab is a space for the model
        "See for more.",  # the field (its result "here") is a void tag
        "A cell of the table.",  # "2024" has no letters: not a unit
        "Page of the book.",
        "The header of the book.",
    ]
    tags = [(s.start, s.end, type(s.payload).__name__, s.void) for s in units[1].spans]
    assert tags == [(0, 12, "Format", False), (14, 32, "Shell", False), (33, 33, "Piece", True)]


def test_a_translation_moves_the_formatting_with_the_words(scripted):
    out, n = translate_document(scripted, word_file(), "docx", DecodeConfig(), QUIET)
    import docx

    d = docx.Document(io.BytesIO(out))
    assert [(r.text, r.bold) for r in d.paragraphs[0].runs] == [
        ("GOD. OF ", None),
        ("LIGHT", True),
        (" THE", None),
    ]
    assert [h.text for h in d.paragraphs[1].hyperlinks] == ["AND"]
    assert any(r.italic and r.text == "SAID, GOD" for r in d.paragraphs[1].runs)
    assert d.paragraphs[3].text == "2024" and n == 7
    assert d.sections[0].footer.paragraphs[0].text == "BOOK. THE  OF PAGE"  # field aside
    kept = {k: v for k, v in members(word_file()).items() if k not in TEXT_PARTS}
    assert {k: v for k, v in members(out).items() if k not in TEXT_PARTS} == kept


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda data: b"PK not really" + data[40:], "a damaged zip file"),
        (lambda data: data[: len(data) // 2], "not a zip file"),  # a download cut short
        (lambda data: without(data, "[Content_Types].xml"), "no [Content_Types].xml"),
        (lambda data: replaced(data, "word/document.xml", b"<w:document"), "line 1, column"),
    ],
)
def test_a_damaged_file_is_named(scripted, damage, says):
    options = DocumentOptions(progress=False, name="report.docx")
    with pytest.raises(ValueError, match=r"report\.docx") as err:
        translate_document(scripted, damage(word_file()), "docx", DecodeConfig(), options)
    assert says in str(err.value) and "save it as .docx" in str(err.value)


def without(data: bytes, name: str) -> bytes:
    return rezip({k: v for k, v in members(data).items() if k != name})


def replaced(data: bytes, name: str, content: bytes) -> bytes:
    return rezip(members(data) | {name: content})


def rezip(parts: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in parts.items():
            z.writestr(name, content)
    return out.getvalue()


def test_the_command_line_with_a_tiny_model(talking_model, tmp_path):
    import docx

    (tmp_path / "report.docx").write_bytes(word_file())
    argv = ["translate", "--model", str(talking_model), "--format", "docx", "--no-progress"]
    out = tmp_path / "bericht.docx"
    assert main([*argv, "--input", str(tmp_path / "report.docx"), "--output", str(out)]) == 0
    d = docx.Document(out)
    assert len(d.paragraphs) == 4 and d.paragraphs[3].text == "2024"
    assert any(r.bold for r in d.paragraphs[0].runs)  # the bold run is still there
    assert d.paragraphs[0].text != "The light of God."
    kept = {k: v for k, v in members(word_file()).items() if k not in TEXT_PARTS}
    assert {k: v for k, v in members(out.read_bytes()).items() if k not in TEXT_PARTS} == kept


def test_a_zip_file_goes_to_stdout_only_when_it_is_not_a_terminal(
    talking_model, tmp_path, monkeypatch, capsysbinary
):
    import docx

    (tmp_path / "report.docx").write_bytes(word_file())
    argv = ["translate", "--model", str(talking_model), "--format", "docx", "--no-progress"]
    argv += ["--input", str(tmp_path / "report.docx")]
    assert main(argv) == 0
    out = capsysbinary.readouterr().out
    assert len(docx.Document(io.BytesIO(out)).paragraphs) == 4
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(argv) == 2
    assert "--format docx writes a zip file, not text: give --output" in (
        capsysbinary.readouterr().err.decode()
    )
