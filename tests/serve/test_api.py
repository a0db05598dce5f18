"""The JSON API in process: good requests, the limits, bad input, and dynamic batching."""

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from aiayn.serve.app import Limits, create_app
from aiayn.serve.batcher import DynamicBatcher


@pytest.fixture(scope="module")
def client(tiny_run):
    app = create_app(tiny_run, Limits(max_chars=200, max_texts=4))
    with TestClient(app) as c:
        yield c


def test_health_and_page(client):
    assert client.get("/health").json()["status"] == "ok"
    page = client.get("/")
    assert page.status_code == 200 and "<canvas" in page.text and "/translate" in page.text
    assert "http" not in page.text.split("<script>")[1]  # no CDN: everything is served here


def test_the_server_searches_with_the_runs_length_setting(client, tiny_run):
    """The setting chosen on validation when the run closed, unless the server was told one."""
    from aiayn import layout
    from aiayn.evaluate.tuned import read_tuned

    tuned = read_tuned(layout.best_dir(tiny_run))
    assert tuned is not None
    search = client.get("/health").json()["search"]
    assert (search["alpha"], search["length_penalty"], search["stop"]) == (
        tuned.setting.alpha,
        tuned.setting.length_penalty,
        tuned.setting.stop,
    )
    assert "search.json" in search["origin"]
    app = create_app(tiny_run, search_options={"alpha": 0.6, "length_penalty": "gnmt"})
    with TestClient(app) as told:
        search = told.get("/health").json()["search"]
    assert (search["alpha"], search["length_penalty"]) == (0.6, "gnmt")
    assert search["origin"] == "set when the server started"


def test_a_body_over_the_cap_is_refused_before_it_is_read(client):
    cap = Limits(max_chars=200, max_texts=4).max_body
    big = b'{"text": "' + b"x" * (cap + 10) + b'"}'
    answer = client.post("/translate", content=big, headers={"content-type": "application/json"})
    assert answer.status_code == 413
    assert f"the limit is {cap:,}" in answer.json()["detail"]

    def chunks():  # no Content-Length: counted as it arrives
        yield b'{"text": "'
        for _ in range(cap // 1000 + 1):
            yield b"x" * 1000
        yield b'"}'

    answer = client.post(
        "/translate", content=chunks(), headers={"content-type": "application/json"}
    )
    assert answer.status_code == 413 and "more than" in answer.json()["detail"]
    escaped = json.dumps({"text": ["\U0001f600" * 200] * 4})  # each one escaped: \\ud83d\\ude00
    assert len(escaped) > 4 * 200 * 12
    ok = client.post("/translate", content=escaped, headers={"content-type": "application/json"})
    assert ok.status_code == 200  # the longest body the per-text limits allow


def test_one_text_and_a_list(client):
    one = client.post("/translate", json={"text": "The dog sees a cat."}).json()
    assert isinstance(one["translations"][0]["text"], str)
    texts = ["The dog sees a cat.", "The old man reads.", ""]
    many = client.post("/translate", json={"text": texts, "beam": 2}).json()["translations"]
    assert len(many) == 3 and many[2]["text"] == ""
    alone = [
        client.post("/translate", json={"text": t, "beam": 2}).json()["translations"][0]
        for t in texts
    ]
    assert [m["text"] for m in many] == [a["text"] for a in alone]


def test_nbest_and_attention(client):
    body = client.post(
        "/translate", json={"text": "The dog sees a cat.", "beam": 3, "nbest": 3, "attention": True}
    ).json()
    item = body["translations"][0]
    scores = [h["score"] for h in item["nbest"]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    att = item["attention"]
    assert len(att["cross"]) == len(att["target"]) and len(att["cross"][0]) == len(att["source"])
    assert all(abs(sum(row) - 1) < 1e-3 for row in att["cross"])


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"text": ["a"] * 5}, 413, "5 texts in one request; the limit is 4"),
        ({"text": "x" * 201}, 413, "text 0 has 201 characters; the limit is 200"),
        ({"text": 3}, 422, "invalid request: text"),
        ({"text": "a", "beam": 0}, 422, "invalid request: beam"),
        ({"text": "a", "beam": 2, "nbest": 3}, 422, "need 1 <= nbest (3) <= beam (2)"),
        ({"text": []}, 422, "give at least one text"),
        ({}, 422, "invalid request: text"),
    ],
)
def test_limits_and_bad_requests(client, body, status, message):
    response = client.post("/translate", json=body)
    assert response.status_code == status
    assert message in response.json()["detail"]


def test_invalid_json(client):
    response = client.post(
        "/translate", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422 and "invalid request" in response.json()["detail"]


def test_concurrent_requests_are_batched_and_kept_apart():
    calls = []

    def translate(texts, beam, nbest):
        calls.append(list(texts))
        return [[(t.upper(), 0.0)] for t in texts]

    async def scenario():
        batcher = DynamicBatcher(translate, max_texts=100, wait_ms=50)
        batcher.start()
        requests = [[f"r{i}-a", f"r{i}-b"] for i in range(10)]
        results = await asyncio.gather(*(batcher.submit(r, 4, 1) for r in requests))
        await batcher.stop()
        return requests, results

    requests, results = asyncio.run(scenario())
    for texts, result in zip(requests, results, strict=True):
        assert [r[0][0] for r in result] == [t.upper() for t in texts]  # its own, in order
    assert len(calls) < len(requests)  # batched together
    assert sorted(t for call in calls for t in call) == sorted(t for r in requests for t in r)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": "The dog\ud800 !"}, "text 0: holds a lone surrogate (\\ud800) at character 7"),
        ({"text": ["fine", "\udfff"]}, "text 1: holds a lone surrogate (\\udfff) at character 0"),
        ({"text": "a", "beem": 8}, "beem: Extra inputs are not permitted (known: text, beam"),
    ],
)
def test_bad_text_and_unknown_fields_are_refused_alone(client, body, message):
    raw = json.dumps(body).encode()  # json escapes the surrogate as \ud800, as a client would
    response = client.post("/translate", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_a_failing_batch_is_retried_so_only_the_guilty_request_fails():
    def translate(texts, beam, nbest):
        if "BAD" in texts:
            raise RuntimeError("the model failed on this batch")
        return [[(f"{t}->{len(t)}", 0.0)] for t in texts]  # distinct outputs by construction

    async def scenario():
        batcher = DynamicBatcher(translate, max_texts=100, wait_ms=50)
        batcher.start()
        requests = [[f"text {i}"] for i in range(7)] + [["BAD"]]
        results = await asyncio.gather(
            *(batcher.submit(r, 4, 1) for r in requests), return_exceptions=True
        )
        await batcher.stop()
        return requests, results

    requests, results = asyncio.run(scenario())
    assert isinstance(results[-1], RuntimeError)
    good = [r[0][0][0] for r in results[:-1]]
    assert good == [f"{t[0]}->{len(t[0])}" for t in requests[:-1]]
    assert len(set(good)) == 7
