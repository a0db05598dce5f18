"""The page's language picker in headless Chromium: shown for a multilingual model, its choice
sent as tgt_lang; hidden for a bilingual one (slow)."""

import os

import httpx
import pytest

from harness.live import CHROMIUM_FLAGS, live_server
from tests.serve.test_live import CHROMIUM

pytestmark = pytest.mark.slow
SENTENCE = "The dog sees the cat."


def test_the_picker_sends_the_chosen_language(multilingual_model):
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "headless Chromium is needed: apt-get install chromium"
    with live_server(multilingual_model) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("#tgtlangbox:not([hidden])", timeout=60000)
            offered = page.locator("#tgtlang option").all_inner_texts()
            page.select_option("#tgtlang", "fr")
            page.fill("#source", SENTENCE)
            with page.expect_request("**/translate") as sent:
                page.click("#go")
            request = sent.value.post_data_json
            page.wait_for_selector("#translation .word", timeout=60000)
            shown = page.inner_text("#translation").strip()
        finally:
            browser.close()
        body = {"text": SENTENCE, "tgt_lang": "fr"}
        expected = httpx.post(f"{url}/translate", json=body, timeout=60).json()
    assert offered == ["de", "en", "fr"]
    assert request["tgt_lang"] == "fr"
    assert shown == expected["translations"][0]["text"].strip()


def test_no_picker_for_a_bilingual_model(talking_model):
    from playwright.sync_api import sync_playwright

    with live_server(talking_model) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.wait_for_load_state("networkidle")
            assert page.locator("#tgtlangbox").is_hidden()
        finally:
            browser.close()
