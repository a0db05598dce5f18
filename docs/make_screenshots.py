"""Make the README's pictures from a trained run: the served page and an attention plot.

.venv/bin/python docs/make_screenshots.py --model runs/demo
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.live import CHROMIUM_FLAGS, live_server

HERE = Path(__file__).parent / "images"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentence", default="The king said to his servants: Go and bring water.")
    args = parser.parse_args()
    HERE.mkdir(parents=True, exist_ok=True)
    plot = ["plot", "attention", args.sentence, "--model", str(args.model)]
    out = ["--out", str(HERE / "attention.png")]
    subprocess.run([sys.executable, "-m", "aiayn", *plot, *out], check=True)
    with live_server(args.model) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.goto(url)
        page.fill("#source", args.sentence)
        page.click("#go")
        page.wait_for_function("document.getElementById('heatmap').dataset.rows !== undefined")
        page.screenshot(path=str(HERE / "page.png"), full_page=True)
        browser.close()
    print(f"wrote {HERE / 'page.png'} and {HERE}/attention-*.png")


if __name__ == "__main__":
    main()
