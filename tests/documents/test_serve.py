"""POST /translate with "format": a whole document, as `aiayn translate --format` gives it."""

import base64

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient

from aiayn.cli import main
from aiayn.documents.skeleton import html_skeleton
from aiayn.serve.app import Limits, create_app
from aiayn.serve.limits import check_file
from tests.documents.office_files import odt_file, word_file
from tests.documents.test_html import PAGE


@pytest.fixture(scope="module")
def client(talking_model):
    with TestClient(create_app(talking_model, Limits(max_document_chars=5000))) as c:
        yield c


def test_a_document_is_translated_as_the_command_line_does(client, talking_model, tmp_path):
    got = client.post("/translate", json={"text": PAGE, "format": "html", "beam": 2})
    assert got.status_code == 200, got.text
    out = got.json()["document"]
    assert html_skeleton(out) == html_skeleton(PAGE) and got.json()["sentences"] > 5
    (tmp_path / "page.html").write_text(PAGE)
    argv = ["translate", "--model", str(talking_model), "--input", str(tmp_path / "page.html")]
    assert main([*argv, "--output", str(tmp_path / "out"), "--format", "html", "--beam", "2"]) == 0
    assert out == (tmp_path / "out").read_text()


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"text": ["a", "b"], "format": "text"}, 422, "takes one text (the document)"),
        ({"text": "x" * 5001, "format": "markdown"}, 413, "the limit is 5000"),
        ({"text": "A dog.", "format": "pdf"}, 422, "format"),
        ({"text": "<p>not base64</p>", "format": "docx"}, 422, "the file in base64"),
        ({"text": "bm90IGEgemlw", "format": "odt"}, 422, "not a zip file"),
    ],
)
def test_bad_document_requests(client, body, status, says):
    got = client.post("/translate", json=body)
    assert got.status_code == status and says in got.json()["detail"]


@pytest.mark.parametrize("fmt", ["po", "xliff", "srt"])
def test_localisation_files_through_the_api(client, fmt):
    import polib
    import srt

    from tests.documents.localisation_samples import PO, SRT, XLIFF_12

    document = {"po": PO, "xliff": XLIFF_12, "srt": SRT}[fmt]
    got = client.post("/translate", json={"text": document, "format": fmt, "beam": 2})
    assert got.status_code == 200, got.text
    out = got.json()["document"]
    if fmt == "po":
        assert [e.msgid for e in polib.pofile(out)] == [e.msgid for e in polib.pofile(PO)]
    elif fmt == "srt":
        assert [s.start for s in srt.parse(out)] == [s.start for s in srt.parse(SRT)]
    else:
        assert out.count("<target") == XLIFF_12.count("<target") + 1
    damaged = document.replace("\n", "\n<<<\n", 3)[:200]
    bad = client.post("/translate", json={"text": damaged, "format": fmt})
    assert bad.status_code == 422 and "line" in bad.json()["detail"], bad.text


def test_retranslate_through_the_api_replaces_an_existing_translation(client):
    import polib

    from tests.documents.localisation_samples import PO

    def done(retranslate: bool) -> polib.POEntry:
        got = client.post(
            "/translate", json={"text": PO, "format": "po", "retranslate": retranslate}
        )
        assert got.status_code == 200, got.text
        return next(e for e in polib.pofile(got.json()["document"]) if e.msgid == "Already done")

    kept, again = done(False), done(True)
    assert kept.msgstr == "Schon fertig" and "fuzzy" not in kept.flags
    assert again.msgstr != "Schon fertig" and "fuzzy" in again.flags


@pytest.mark.parametrize(("fmt", "make"), [("docx", word_file), ("odt", odt_file)])
def test_an_office_file_in_base64(client, talking_model, tmp_path, fmt, make):
    data = make()
    got = client.post("/translate", json={"text": base64.b64encode(data).decode(), "format": fmt})
    assert got.status_code == 200, got.text
    (tmp_path / f"in.{fmt}").write_bytes(data)
    argv = ["translate", "--model", str(talking_model), "--input", str(tmp_path / f"in.{fmt}")]
    out = tmp_path / f"out.{fmt}"
    assert main([*argv, "--output", str(out), "--format", fmt]) == 0
    assert base64.b64decode(got.json()["document"]) == out.read_bytes()


def test_an_office_file_over_the_limits():
    with pytest.raises(HTTPException) as err:
        check_file(base64.b64encode(word_file()).decode(), "docx", Limits(max_document_bytes=100))
    assert err.value.status_code == 413 and "the limit is 100" in err.value.detail
    with pytest.raises(HTTPException) as err:
        check_file(base64.b64encode(odt_file()).decode(), "odt", Limits(max_document_chars=50))
    assert (
        err.value.status_code == 413 and "characters of text; the limit is 50" in err.value.detail
    )


def test_protected_spans_come_back_verbatim_in_lines_and_documents(client):
    text = "Open /text/sbasic/shared/01050200.xhp and TKT-42 with %s now."
    got = client.post("/translate", json={"text": text, "protect": ["TKT-\\d+"], "beam": 2})
    assert got.status_code == 200, got.text
    out = got.json()["translations"][0]["text"]
    assert all(s in out for s in ("/text/sbasic/shared/01050200.xhp", "TKT-42", "%s"))
    plain = client.post("/translate", json={"text": text, "beam": 2}).json()
    assert "TKT-42" not in plain["translations"][0]["text"]  # not asked: translated
    doc = client.post("/translate", json={"text": text, "format": "text", "beam": 2}).json()
    assert "/text/sbasic/shared/01050200.xhp" in doc["document"] and "%s" in doc["document"]


def test_no_protect_and_a_bad_pattern(client):
    got = client.post("/translate", json={"text": "Open config.json.", "no_protect": True})
    assert got.status_code == 200
    bad = client.post("/translate", json={"text": "A dog.", "protect": ["TKT-("]})
    assert bad.status_code == 422 and "protect 'TKT-('" in bad.json()["detail"]
