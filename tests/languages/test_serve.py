"""The server's "tgt_lang": the same translations as the Python API's, declared in the schema,
listed by /health for the page's picker, refused clearly where the model lacks it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from aiayn import open_translator
from aiayn.serve.app import create_app


@pytest.fixture(scope="module")
def client(multilingual_model):
    with TestClient(create_app(multilingual_model)) as client:
        yield client


def test_tgt_lang_gives_the_python_apis_translations(client, multilingual_model):
    texts = ["In the beginning God created the heavens.", "The dog sees the cat."]
    for lang in ("de", "fr"):
        response = client.post("/translate", json={"text": texts, "tgt_lang": lang, "beam": 2})
        assert response.status_code == 200, response.text
        translator = open_translator(multilingual_model, tgt_lang=lang)
        expected = translator.nbest(texts, translator.default_search.replace(beam=2))
        got = response.json()["translations"]
        assert [t["score"] for t in got] == pytest.approx([x[0].score for x in expected], abs=1e-4)


def test_a_document_is_translated_into_tgt_lang(client):
    body = {"text": "The dog sees the cat. The woman reads.", "format": "text", "tgt_lang": "fr"}
    assert client.post("/translate", json=body).status_code == 200
    body.pop("tgt_lang")
    refused = client.post("/translate", json=body)
    assert refused.status_code == 422 and "de, en, fr" in refused.json()["detail"]


def test_health_and_schema_name_the_languages(client):
    assert client.get("/health").json()["languages"] == ["de", "en", "fr"]
    schema = client.get("/openapi.json").json()
    assert "tgt_lang" in schema["components"]["schemas"]["TranslateRequest"]["properties"]
    page = client.get("/").text
    assert 'id="tgtlang"' in page and "health.languages" in page


@pytest.mark.parametrize(
    "lang, says",
    [("es", "tgt_lang es: this model was not trained"), ("xyz1", "not a language code")],
)
def test_a_language_the_model_lacks_is_422(client, lang, says):
    response = client.post("/translate", json={"text": "Hello.", "tgt_lang": lang})
    assert response.status_code == 422
    assert says in response.json()["detail"] and "de, en, fr" in response.json()["detail"]


def test_no_tgt_lang_for_a_multilingual_model_is_422(client):
    response = client.post("/translate", json={"text": "Hello."})
    assert response.status_code == 422
    assert "no target language" in response.json()["detail"]


def test_a_bilingual_model_lists_no_languages_and_refuses_one(talking_model):
    with TestClient(create_app(talking_model)) as client:
        assert client.get("/health").json()["languages"] == []
        response = client.post("/translate", json={"text": "The dog.", "tgt_lang": "de"})
        assert response.status_code == 422 and "bilingual" in response.json()["detail"]
        assert client.post("/translate", json={"text": "The dog."}).status_code == 200
