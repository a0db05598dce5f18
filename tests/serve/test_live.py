"""The server for real, on loopback: a bounded load test and the page in headless Chromium.

Slow (a 30 s load; a browser): marked `slow`, so `pytest -q` leaves them out and `make test`
runs them (pytest -m slow runs only these)."""

import asyncio
import os
import shutil

import httpx
import pytest

from harness.live import CHROMIUM_FLAGS, hammer, live_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SENTENCES = [
    "The dog sees a cat.",
    "The old man reads a book.",
    "A red tree is green.",
    "The woman sees the big house.",
    "A small cat reads.",
]


pytestmark = pytest.mark.slow


@pytest.fixture
def run(tiny_run):
    return tiny_run


def test_64_concurrent_clients_get_correct_answers_without_errors(run, tmp_path):
    seconds = float(os.environ.get("AIAYN_LOAD_SECONDS", "30"))
    log = tmp_path / "server.log"
    with live_server(run, log=log) as url:
        expected = {
            s: httpx.post(f"{url}/translate", json={"text": s}, timeout=60).json()["translations"][
                0
            ]["text"]
            for s in SENTENCES
        }
        result = asyncio.run(hammer(url, expected, clients=64, seconds=seconds))
        batches = httpx.get(f"{url}/health").json()["batches"]
    print(result)
    # on a failure, what each error was and the end of the server's log (a traceback behind a 500)
    assert result["errors"] == 0 and result["wrong"] == 0, (result, log.read_text()[-4000:])
    assert result["requests"] >= 64
    assert batches < result["requests"] + len(SENTENCES)  # requests shared model calls


def test_the_page_translates_and_draws_the_heatmap_in_chromium(run, tmp_path):
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "headless Chromium is needed: apt-get install chromium"
    sentence = SENTENCES[0]
    with live_server(run) as url, sync_playwright() as p:
        api = httpx.post(
            f"{url}/translate", json={"text": sentence, "attention": True}, timeout=60
        ).json()["translations"][0]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.fill("#source", sentence)
            page.click("#go")
            page.wait_for_function(
                "document.getElementById('heatmap').dataset.rows !== undefined", timeout=60000
            )
            shown = page.inner_text("#translation")
            rows = int(page.get_attribute("#heatmap", "data-rows"))
            cols = int(page.get_attribute("#heatmap", "data-cols"))
            page.screenshot(path=str(tmp_path / "page.png"))
        finally:
            browser.close()
    # what the page shows is the API's translation (HTML shows a run of spaces as one)
    assert shown.split() == api["text"].split()
    assert (rows, cols) == (len(api["attention"]["target"]), len(api["attention"]["source"]))
    assert (tmp_path / "page.png").stat().st_size > 5000
