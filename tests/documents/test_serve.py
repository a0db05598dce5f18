"""POST /translate with "format": a whole document, as `aiayn translate --format` gives it."""

import pytest
from fastapi.testclient import TestClient

from aiayn.cli import main
from aiayn.documents.skeleton import html_skeleton
from aiayn.serve.app import Limits, create_app
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
    ],
)
def test_bad_document_requests(client, body, status, says):
    got = client.post("/translate", json=body)
    assert got.status_code == status and says in got.json()["detail"]


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
