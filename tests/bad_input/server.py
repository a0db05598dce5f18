"""Bad input for a server that faces a network: a damaged key file, a rate or a limit that
cannot be kept, a request without a key or with a wrong one, over the rate, over the cap on
waiting requests, and a degenerate text over its budget. "Kept" means: the server still answers
the next good request, and no key was ever shown."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, argv_case, serve_request

KEY = "bad-input-key-" + "7" * 16
GOOD = {"text": "The dog sees."}
LIMITS_NO_SERVER_KEEPS = ("--max-pending", "0", "--max-seconds", "0", "--max-output-tokens", "-5")


def serve_with_key_file(content: bytes) -> Callable[[Fixtures, Path], Outcome]:
    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / "keys").write_bytes(content)
        outcome = aiayn(["serve", "--model", str(f.run), "--api-keys", str(tmp / "keys")])
        shown = KEY in outcome.message  # a key is a secret: the line is named, never shown
        return Outcome(outcome.code, outcome.message, not shown, outcome.traceback)

    return case


def ask(
    headers: dict[str, str], body: dict | None = None, **limits
) -> Callable[[Fixtures, Path], Outcome]:
    """One request to a server with the key KEY (and these Limits), then a good one."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        from fastapi.testclient import TestClient

        from aiayn.serve.app import Limits, create_app

        app = create_app(f.run, Limits(**limits), api_keys=frozenset({KEY}))
        with TestClient(app) as client:
            answer = client.post("/translate", json=body or GOOD, headers=headers)
            alive = client.post("/translate", json=GOOD, headers={"Authorization": f"Bearer {KEY}"})
        kept = alive.status_code == 200 and KEY not in answer.text
        return Outcome(answer.status_code, answer.json()["detail"], kept)

    return case


def latin1_body(f: Fixtures, tmp: Path) -> Outcome:
    from fastapi.testclient import TestClient

    from aiayn.serve.app import create_app

    body = '{"text": "Der Schl\xfcssel."}'.encode("latin-1")
    with TestClient(create_app(f.run)) as client:
        answer = client.post(
            "/translate", content=body, headers={"Content-Type": "application/json"}
        )
        alive = client.post("/translate", json=GOOD).status_code == 200
    return Outcome(answer.status_code, answer.json()["detail"], alive)


def over_the_rate(f: Fixtures, tmp: Path) -> Outcome:
    from fastapi.testclient import TestClient

    from aiayn.serve.app import Limits, create_app

    with TestClient(create_app(f.run, Limits(rate="1/minute"))) as client:
        first = client.post("/translate", json=GOOD)
        second = client.post("/translate", json=GOOD)
    message = f"{second.json()['detail']} (Retry-After: {second.headers.get('Retry-After')})"
    return Outcome(second.status_code, message, first.status_code == 200)


def more_waiting_than_the_cap(f: Fixtures, tmp: Path) -> Outcome:
    """The model thread held busy, one request waiting, a second one over --max-pending 1."""
    from fastapi.testclient import TestClient

    from aiayn.serve.app import Limits, create_app

    app = create_app(f.run, Limits(max_pending=1))
    gate = threading.Event()
    with TestClient(app) as client:
        app.state.batcher.executor.submit(gate.wait)
        first: list = []
        waiting = threading.Thread(
            target=lambda: first.append(client.post("/translate", json=GOOD))
        )
        waiting.start()
        while app.state.batcher.pending < 1 and waiting.is_alive():
            gate.wait(0.01)
        busy = client.post("/translate", json=GOOD)
        gate.set()
        waiting.join()
    return Outcome(busy.status_code, busy.json()["detail"], first[0].status_code == 200)


def degenerate_text_over_budget(f: Fixtures, tmp: Path) -> Outcome:
    """'a' 1000 times, under a budget of 100 steps (tests/serve/step_clock.py), eos held back so
    that every output runs to its length limit: it is stopped, and the server goes on."""
    from fastapi.testclient import TestClient

    from aiayn.serve.app import Limits, create_app
    from tests.serve.step_clock import step_clock

    app = create_app(f.run, Limits(max_seconds=100), search_options={"min_len": 10_000})
    with step_clock(), TestClient(app) as client:
        answer = client.post("/translate", json={"text": "a" * 1000})
        alive = client.post("/translate", json=GOOD).status_code == 200
    return Outcome(answer.status_code, answer.json()["detail"], alive)


CASES = [
    Case(
        "serve --api-keys: no such file",
        argv_case("serve", "--model", "RUN", "--api-keys", "TMP/none"),
        2,
        ("--api-keys TMP/none", "No such file", "one key per line"),
    ),
    Case(
        "serve --api-keys: a file of comments and blank lines",
        serve_with_key_file(b"# keys for the team\n\n"),
        2,
        ("TMP/keys holds no key", "one key per line", "secrets.token_urlsafe"),
    ),
    Case(
        "serve --api-keys: a 5-character key on line 2",
        serve_with_key_file(f"{KEY}\nshort\n".encode()),
        2,
        ("TMP/keys, line 2", "5 characters is too easy to guess", "at least 16"),
    ),
    Case(
        "serve --api-keys: two keys on one line",
        serve_with_key_file(f"{KEY} {KEY}x\n".encode()),
        2,
        ("TMP/keys, line 1", "one per line, no spaces"),
    ),
    Case(
        "serve --api-keys: a Latin-1 file",
        serve_with_key_file(f"{KEY}\nschl\xfcssel-{KEY}\n".encode("latin-1")),
        2,
        ("TMP/keys, line 2", "not UTF-8"),
    ),
    Case(
        'serve --rate-limit "sixty a minute"',
        argv_case("serve", "--model", "RUN", "--rate-limit", "sixty a minute"),
        2,
        ("--rate-limit 'sixty a minute' is not a rate", '"60/minute"'),
    ),
    Case(
        "serve --max-pending 0 --max-seconds 0 --max-output-tokens -5",
        argv_case("serve", "--model", "RUN", *LIMITS_NO_SERVER_KEEPS),
        2,
        ("--max-pending 0: give 1 or more", "--max-output-tokens -5", "--max-seconds 0"),
    ),
    Case(  # found by schemathesis: pydantic read true as 1
        'serve: "beam": true',
        serve_request('{"text": "The dog sees.", "beam": true}'),
        422,
        ("beam: Input should be a valid integer",),
    ),
    Case(
        'serve: "src_lang" for lines, not a document',
        serve_request('{"text": "The dog sees.", "src_lang": "en"}'),
        422,
        ('"src_lang" is a document\'s language', '"format": text, markdown or html'),
    ),
    Case(
        'serve: "retranslate" for lines',
        serve_request('{"text": "The dog sees.", "retranslate": true}'),
        422,
        ('"retranslate" is for "format" po or xliff', "drop it"),
    ),
    Case(
        'serve: "retranslate" for an HTML document',
        serve_request('{"text": "<p>The dog sees.</p>", "format": "html", "retranslate": true}'),
        422,
        ('"retranslate" is for "format" po or xliff', "drop it or the format 'html'"),
    ),
    Case(  # found by schemathesis: FastAPI's own 400 "There was an error parsing the body"
        "serve: a JSON body in Latin-1",
        latin1_body,
        422,
        ("the body is not JSON in UTF-8", "send JSON encoded as UTF-8"),
    ),
    Case(
        "serve: a request without a key",
        ask({}),
        401,
        ("needs an API key", "Authorization: Bearer KEY"),
    ),
    Case(
        "serve: a request with a wrong key",
        ask({"Authorization": f"Bearer {KEY}-wrong"}),
        401,
        ("not one of this server's keys",),
    ),
    Case(
        "serve: the second request of a client over --rate-limit 1/minute",
        over_the_rate,
        429,
        ("rate limit exceeded: 1 per 1 minute", "wait and try again", "Retry-After: "),
    ),
    Case(
        "serve: one request more than --max-pending 1 waiting",
        more_waiting_than_the_cap,
        503,
        ("busy (--max-pending 1 reached)", "try again shortly"),
    ),
    Case(
        "serve: 'a' x 1000 over the budget of time",
        degenerate_text_over_budget,
        422,
        ("over budget", "100 s per request", "512 output tokens", "split into sentences"),
    ),
]
