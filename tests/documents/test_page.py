"""The page's document mode in headless Chromium: a dropped Markdown file comes back translated,
beside its source, with a download link holding what the API gives."""

import shutil

import httpx
import pytest

from aiayn.documents.skeleton import markdown_skeleton
from harness.live import CHROMIUM_FLAGS, live_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DOC = "# The dog\n\nThe dog sees a **big** cat.\n\n- A red tree.\n- `code` stays.\n"

pytestmark = pytest.mark.slow


def test_the_page_translates_a_document(talking_model, tmp_path):
    from playwright.sync_api import sync_playwright

    (tmp_path / "notes.md").write_text(DOC)
    with live_server(talking_model) as url, sync_playwright() as p:
        body = {"text": DOC, "format": "markdown", "beam": 4}
        api = httpx.post(f"{url}/translate", json=body, timeout=60).json()["document"]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.set_input_files("#docfile", str(tmp_path / "notes.md"))
            page.wait_for_function("document.getElementById('doc').value.length > 0")
            assert page.input_value("#docformat") == "markdown"  # from the file's name
            page.click("#docgo")
            page.wait_for_function("!document.getElementById('download').hidden", timeout=60000)
            shown = page.inner_text("#docout")
            with page.expect_download() as download:
                page.click("#download")
            saved = download.value
            saved.save_as(tmp_path / "got.md")
            name = saved.suggested_filename
        finally:
            browser.close()
    assert shown.strip() == api.strip()
    assert (tmp_path / "got.md").read_text() == api
    assert name == "notes.translated.md"
    assert markdown_skeleton(api) == markdown_skeleton(DOC) and "`code`" in api


def test_the_page_translates_a_word_file(talking_model, tmp_path):
    """A .docx goes to the API in base64; the download is the file the API answers."""
    import base64

    from playwright.sync_api import sync_playwright

    from tests.documents.office_files import word_file

    (tmp_path / "report.docx").write_bytes(word_file())
    with live_server(talking_model) as url, sync_playwright() as p:
        body = {"text": base64.b64encode(word_file()).decode(), "format": "docx", "beam": 4}
        api = httpx.post(f"{url}/translate", json=body, timeout=60).json()["document"]
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(url)
            page.set_input_files("#docfile", str(tmp_path / "report.docx"))
            page.wait_for_function("document.getElementById('doc').value.length > 0")
            assert page.input_value("#docformat") == "docx"
            page.click("#docgo")
            page.wait_for_function("!document.getElementById('download').hidden", timeout=60000)
            with page.expect_download() as download:
                page.click("#download")
            download.value.save_as(tmp_path / "got.docx")
            name = download.value.suggested_filename
        finally:
            browser.close()
    assert (tmp_path / "got.docx").read_bytes() == base64.b64decode(api)
    assert name == "report.translated.docx"
