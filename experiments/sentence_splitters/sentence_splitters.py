"""sentencex against pysbd on tests/documents/hard_sentences.py, and their speed.

.venv/bin/pip install pysbd sentencex
.venv/bin/python experiments/sentence_splitters/sentence_splitters.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tests/

from tests.documents.hard_sentences import CASES


def pysbd_splitter():
    import pysbd

    segmenters = {}

    def split(language: str, text: str) -> list[str]:
        if language not in segmenters:
            segmenters[language] = pysbd.Segmenter(language=language, clean=False)
        return segmenters[language].segment(text)

    return split


def sentencex_splitter():
    from sentencex import segment

    return lambda language, text: list(segment(language, text))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    text = " ".join(t for _, t, _ in CASES) * 100
    for name, split in (("sentencex", sentencex_splitter()), ("pysbd", pysbd_splitter())):
        right = 0
        for language, case, expected in CASES:
            got = [s.strip() for s in split(language, case) if s.strip()]
            right += got == expected
            if got != expected:
                print(f"{name} wrong: {got}")
        start = time.perf_counter()
        split("en", text)
        seconds = time.perf_counter() - start
        print(f"{name}: {right}/{len(CASES)} right; {len(text) / seconds / 1e3:,.0f} k chars/s")


if __name__ == "__main__":
    main()
