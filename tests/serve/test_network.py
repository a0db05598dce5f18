"""A server that can face a network: API keys, the rate limit, the cap on waiting requests, the
per-request budget, and the warning for a server that anyone can reach."""

import threading
import time

import pytest
from fastapi.testclient import TestClient

from aiayn.cli import main
from aiayn.commands.serve import exposure_warning
from aiayn.serve.app import Limits, create_app
from aiayn.serve.keys import read_keys
from tests.serve.step_clock import step_clock

KEY = "k" * 20 + "-first"
OTHER = "o" * 20 + "_second"
DOG = {"text": "The dog sees a cat."}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def keyed(tiny_run):
    with TestClient(create_app(tiny_run, api_keys=frozenset({KEY, OTHER}))) as client:
        yield client


def test_a_request_needs_one_of_the_keys(keyed, caplog):
    ok = keyed.post("/translate", json=DOG, headers=bearer(KEY))
    assert ok.status_code == 200 and len(ok.json()["translations"]) == 1
    assert keyed.post("/translate", json=DOG, headers=bearer(OTHER)).status_code == 200
    missing = keyed.post("/translate", json=DOG)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    assert "Authorization: Bearer KEY" in missing.json()["detail"]
    for wrong in (KEY[:-1], KEY + "x", KEY.upper(), "Basic " + KEY):
        headers = {"Authorization": wrong} if " " in wrong else bearer(wrong)
        answer = keyed.post("/translate", json=DOG, headers=headers)
        assert answer.status_code == 401, wrong
        assert wrong not in answer.text and KEY not in caplog.text  # never echoed or logged
    assert keyed.get("/health").status_code == 200  # open: a load balancer has no key
    assert keyed.get("/").status_code == 200


def test_the_key_file(tmp_path):
    good = tmp_path / "keys"
    good.write_text(f"# the team's keys\n{KEY}\n\n  {OTHER}  \n")
    assert read_keys(good) == {KEY, OTHER}
    for text, says in (
        ("# only a comment\n\n", "holds no key"),
        (f"{KEY}\nshort\n", "line 2: a key of 5 characters"),
        (f"{KEY} {OTHER}\n", "line 1: a key holds only letters"),
    ):
        good.write_text(text)
        with pytest.raises(ValueError) as err:
            read_keys(good)
        assert says in str(err.value) and str(good) in str(err.value)
        assert OTHER not in str(err.value)  # a key is a secret: the line is named, not shown


def test_over_the_rate_a_client_gets_429_with_retry_after(tiny_run):
    app = create_app(tiny_run, Limits(rate="2/minute"), api_keys=frozenset({KEY, OTHER}))
    with TestClient(app) as client:
        answers = [client.post("/translate", json=DOG, headers=bearer(KEY)) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        assert int(answers[2].headers["Retry-After"]) > 0
        assert "rate limit exceeded: 2 per 1 minute" in answers[2].json()["detail"]
        # each key has its own count; the health check none
        assert client.post("/translate", json=DOG, headers=bearer(OTHER)).status_code == 200
        assert all(client.get("/health").status_code == 200 for _ in range(4))


def test_more_waiting_requests_than_the_cap_get_503_at_once(tiny_run):
    app = create_app(tiny_run, Limits(max_pending=2))
    gate = threading.Event()
    with TestClient(app) as client:
        batcher = app.state.batcher
        batcher.executor.submit(gate.wait)  # the model thread is busy until the gate opens
        answers: list = []
        waiting = [
            threading.Thread(target=lambda: answers.append(client.post("/translate", json=DOG)))
            for _ in range(2)
        ]
        for thread in waiting:
            thread.start()
        for _ in range(1000):  # until both are queued (no clock: at most ~10 s)
            if batcher.pending == 2:
                break
            time.sleep(0.01)
        assert batcher.pending == 2
        busy = client.post("/translate", json=DOG)
        gate.set()
        for thread in waiting:
            thread.join()
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "1"
    assert "busy (--max-pending 2 reached)" in busy.json()["detail"]
    assert [a.status_code for a in answers] == [200, 200]


def test_a_degenerate_text_gets_its_budget_and_the_others_their_answers(tiny_run):
    """A clock that ticks once per output step (and once per model call) makes the budget of
    seconds a budget of steps: 100. With eos held back every output runs to its length limit:
    the ordinary text's (its length + 50) is under 100; one character repeated 1000 times runs
    towards its output cap (512) and is stopped."""
    held = {"min_len": 10_000}
    app = create_app(tiny_run, Limits(max_seconds=100), wait_ms=200, search_options=held)
    with step_clock(), TestClient(app) as client:
        solo = client.post("/translate", json=DOG).json()
        answers: dict = {}

        def ask(name: str, body: dict) -> None:
            answers[name] = client.post("/translate", json=body)

        both = [
            threading.Thread(target=ask, args=("degenerate", {"text": "a" * 1000})),
            threading.Thread(target=ask, args=("dog", DOG)),
        ]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join()
    assert answers["dog"].status_code == 200 and answers["dog"].json() == solo
    over = answers["degenerate"]
    assert over.status_code == 422
    assert "over budget" in over.json()["detail"] and "100 s per request" in over.json()["detail"]


def test_a_server_beyond_loopback_without_keys_warns_loudly(tiny_run, monkeypatch, capsys):
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert exposure_warning(host, keyed=False) is None, host
    assert exposure_warning("0.0.0.0", keyed=True) is None
    for host in ("0.0.0.0", "::", "192.168.1.7", "myhost"):
        assert "WITHOUT API KEYS" in (exposure_warning(host, keyed=False) or ""), host
    started = []
    monkeypatch.setattr("uvicorn.run", lambda app, **where: started.append(where))
    assert main(["serve", "--model", str(tiny_run), "--host", "0.0.0.0"]) == 0
    err = capsys.readouterr().err
    assert "WARNING: serving on 0.0.0.0" in err and "--api-keys FILE" in err
    assert started == [{"host": "0.0.0.0", "port": 8000, "log_level": "info"}]
