"""The page's controls in headless Chromium: click a word, see alternatives, choose one (slow)."""

import os

import httpx
import pytest

from harness.live import CHROMIUM_FLAGS, live_server
from tests.engines.test_one_interface import models  # noqa: F401  (a fixture)
from tests.serve.test_live import CHROMIUM

pytestmark = pytest.mark.slow
SENTENCE = "The house is small."


def test_choosing_an_alternative_keeps_the_words_before_it(models, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "headless Chromium is needed: apt-get install chromium"
    with live_server(models["aiayn"]) as url, sync_playwright() as p:

        def api(**fields):
            body = {"text": SENTENCE, **fields}
            return httpx.post(f"{url}/translate", json=body, timeout=60).json()["translations"][0]

        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.fill("#source", SENTENCE)
            page.click("#go")
            page.wait_for_selector("#translation .word", timeout=60000)
            first = page.inner_text("#translation").strip()
            page.click("#translation .word >> nth=0")  # alternatives at the first word
            page.wait_for_selector("#alternatives button", timeout=60000)
            offered = page.locator("#alternatives button").all_inner_texts()
            page.click("#alternatives button >> nth=1")  # the second choice
            page.wait_for_function(
                f"document.getElementById('translation').dataset.text?.startsWith({offered[1]!r})",
                timeout=60000,
            )
            chosen = page.inner_text("#translation").strip()
            page.fill("#glossary", "house = Katze")
            page.click("#go")
            page.wait_for_function(
                "document.getElementById('translation').dataset.text?.includes('Katze')",
                timeout=60000,
            )
        finally:
            browser.close()
        expected = api(alternatives=5)
        assert first == expected["text"].strip()
        assert offered == [a["word"] for a in expected["alternatives"]] and len(offered) >= 2
        assert chosen == api(target_prefix=offered[1])["text"].strip()
