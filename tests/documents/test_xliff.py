"""XLIFF 1.2 and 2.0 (documents/xliff.py): a target for each untranslated source, inline
elements copied and placed by alignment, translate="no" and existing targets left alone."""

import pytest
from lxml import etree

from aiayn.config import DecodeConfig
from aiayn.documents import DocumentOptions, translate_document
from aiayn.engines.copy import CopyTranslator
from tests.documents.conftest import WordTokenizer
from tests.documents.localisation_samples import XLIFF_12, XLIFF_20

QUIET = DocumentOptions(progress=False)


def run(translator, text: str, options: DocumentOptions = QUIET) -> str:
    return translate_document(translator, text, "xliff", DecodeConfig(), options)[0]


def pairs(text: str) -> list[tuple[etree._Element, etree._Element | None]]:
    root = etree.fromstring(text.encode())
    ns = root.nsmap[None]
    return [
        (s, s.getnext() if s.getnext() is not None and "target" in s.getnext().tag else None)
        for s in root.iter(f"{{{ns}}}source")
    ]


def inner(el) -> str:
    """An element's content as XML, without its own tag."""
    return (el.text or "") + "".join(etree.tostring(c, encoding="unicode") for c in el)


def ids(el) -> list[tuple[str, str | None]]:
    return sorted((etree.QName(c).localname, c.get("id")) for c in el.iter() if c is not el)


@pytest.mark.parametrize("document", [XLIFF_12, XLIFF_20])
def test_a_copy_fills_each_untranslated_target_with_its_source(document):
    out = run(CopyTranslator(WordTokenizer()), document)
    found = pairs(out)
    assert [inner(s) for s, _ in found] == [inner(s) for s, _ in pairs(document)]
    for source, target in found:
        text = source.text or ""
        if text in ("aiayn",):  # translate="no": no target made
            assert target is None
        elif text.startswith("Already"):  # an existing target: kept with its state
            assert (target.text, target.get("state")) == ("Schon fertig.", "final")
        else:
            assert inner(target) == inner(source)
    if 'version="1.2"' in document:
        marked = [t.get("state") for _, t in found if t is not None and t.get("state") != "final"]
        assert marked == ["needs-review-translation"] * 2
    else:
        segments = [s.getparent() for s, t in found if t is not None]
        assert [s.get("state") for s in segments] == ["translated"] * 2
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<xliff')


@pytest.mark.parametrize("document", [XLIFF_12, XLIFF_20])
def test_inline_elements_survive_a_reordering(scripted, document):
    out = run(scripted, document)
    for source, target in pairs(out):
        if target is not None and target.get("state") != "final":
            assert ids(target) == ids(source)
            assert (target.text or "").isupper()  # translated
    asked = [line for call in scripted.calls for line in call]
    assert "Press Ctrl and now." in asked or "Then close it." in asked


def test_retranslate_replaces_an_existing_target(scripted):
    out = run(scripted, XLIFF_12, DocumentOptions(progress=False, retranslate=True))
    done = next(t for s, t in pairs(out) if s.text == "Already done.")
    assert (done.text, done.get("state")) == ("DONE. ALREADY", "needs-review-translation")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (XLIFF_12.replace("</g>", "</x>"), r"f.xlf: line 6: not well-formed XML.*xmllint"),
        ("<html><body>hi</body></html>", r"f.xlf: line 1: <html>.*not XLIFF 1.2 or 2.0"),
    ],
)
def test_a_damaged_file_is_an_error_naming_its_line(document, message):
    with pytest.raises(ValueError, match=message):
        run(CopyTranslator(WordTokenizer()), document, DocumentOptions(name="f.xlf"))
