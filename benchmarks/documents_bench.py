"""Documents translated whole (`aiayn translate --format ...`): what they keep, how fast.

    .venv/bin/python benchmarks/documents_bench.py markdown --model runs/demo
    .venv/bin/python benchmarks/documents_bench.py html --model runs/demo \
        --pages /usr/share/doc/diffutils --n 24
    .venv/bin/python benchmarks/documents_bench.py text --model runs/demo --sentences 5000

markdown: every Markdown file of the project; the element tree markdown-it-py reads (text aside)
and every code block must be the input's. html: pages of a Debian documentation package
(`apt-get install diffutils-doc`); every output must parse to the input's element tree (tags,
attributes, order; text aside) with script/style/pre/code and translate="no" content
byte-identical; pages/s and sentences/s. text: a document of N sentences from the test and
validation splits in paragraphs, against line mode on the same sentences: the same
translations, and the peak memory of each (the kernel's count for the process).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quiet_translate(model: str, documents: list[str], fmt: str) -> tuple[list[str], int, float]:
    """Each document translated in process; the outputs, sentences and seconds."""
    from aiayn import open_translator
    from aiayn.documents import DocumentOptions, translate_document

    translator = open_translator(model)
    options = DocumentOptions(progress=False)
    outputs, sentences, start = [], 0, time.perf_counter()
    for doc in documents:
        out, n = translate_document(translator, doc, fmt, translator.default_search, options)
        outputs.append(out)
        sentences += n
    return outputs, sentences, time.perf_counter() - start


def markdown(args: argparse.Namespace) -> dict:
    from aiayn.documents.skeleton import code_blocks, markdown_skeleton

    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files.append(ROOT / "benchmarks" / "README.md")
    if args.files:
        files = [ROOT / f for f in args.files]
    if args.repeats > 1:
        return against_lines(args, [f.read_text(encoding="utf-8") for f in files])
    sources = [f.read_text(encoding="utf-8") for f in files]
    outputs, sentences, seconds = quiet_translate(args.model, sources, "markdown")
    same = [
        markdown_skeleton(o) == markdown_skeleton(s) for s, o in zip(sources, outputs, strict=True)
    ]
    code = [code_blocks(o) == code_blocks(s) for s, o in zip(sources, outputs, strict=True)]
    for f, a, b in zip(files, same, code, strict=True):
        print(
            f"{f.relative_to(ROOT)}: tree {'same' if a else 'DIFFERENT'}, code "
            f"{'identical' if b else 'CHANGED'}"
        )
    return {
        "files": len(files),
        "same_tree": sum(same),
        "code_identical": sum(code),
        "sentences": sentences,
        "seconds": round(seconds, 1),
        "sentences_per_s": round(sentences / seconds, 1),
    }


def against_lines(args: argparse.Namespace, sources: list[str]) -> dict:
    """Markdown documents against line mode on the same distinct sentences (interleaved
    repeats, the model loaded once): what the tags' alignments cost."""
    from aiayn import open_translator
    from aiayn.documents import DocumentOptions, translate_document
    from aiayn.documents.markdown import parse
    from aiayn.documents.segment import needs_translation, sentences_of

    translator = open_translator(args.model)
    cfg, options = translator.default_search, DocumentOptions(progress=False)
    sentences = [
        s
        for doc in sources
        for u in parse(doc).units
        for s in sentences_of(u)
        if needs_translation(s)
    ]
    texts = list(dict.fromkeys(s.text for s in sentences))
    documents, lines = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for doc in sources:
            translate_document(translator, doc, "markdown", cfg, options)
        documents.append(time.perf_counter() - start)
        start = time.perf_counter()
        translator.translate(texts, cfg)
        lines.append(time.perf_counter() - start)
    return {
        "sentences": len(texts),
        "with_tags": len({s.text for s in sentences if s.spans}),
        "seconds_documents": spread(documents),
        "seconds_line_mode": spread(lines),
    }


def html(args: argparse.Namespace) -> dict:
    from aiayn.documents.skeleton import html_skeleton

    pages = [
        p
        for p in sorted(Path(args.pages).glob("*.html"))
        if "redirects to the location" not in p.read_text(encoding="utf-8")
    ][: args.n]
    sources = [p.read_text(encoding="utf-8") for p in pages]
    outputs, sentences, seconds = quiet_translate(args.model, sources, "html")
    same = [html_skeleton(o) == html_skeleton(s) for s, o in zip(sources, outputs, strict=True)]
    for p, a in zip(pages, same, strict=True):
        print(f"{p.name}: {'same tree' if a else 'DIFFERENT TREE'}")
    return {
        "pages": len(pages),
        "same_tree": sum(same),
        "sentences": sentences,
        "seconds": round(seconds, 1),
        "pages_per_s": round(len(pages) / seconds, 3),
        "sentences_per_s": round(sentences / seconds, 1),
    }


def text(args: argparse.Namespace) -> dict:
    from aiayn.documents import text as text_format
    from aiayn.documents.segment import LETTER, sentences_of, split_sentences

    rng = random.Random(0)
    data = Path(args.data)
    verses = [
        v
        for split in ("test", "valid", "train")
        for v in (data / f"{split}.src.txt").read_text(encoding="utf-8").splitlines()
    ]
    paragraphs, blanks, n = [], [], 0  # paragraphs of 1-4 verses, as the splitter cuts them
    while n < args.sentences:
        k = rng.randint(1, 4)
        paragraphs.append(split_sentences(" ".join(verses[:k])))
        blanks.append(rng.choice([1, 1, 2]))  # blank lines after it
        verses, n = verses[k:], n + len(paragraphs[-1])
    sentences = [s for p in paragraphs for s in p]
    doc = "".join(
        wrap(" ".join(p)) + "\n" * (1 + b) for p, b in zip(paragraphs, blanks, strict=True)
    )
    # line mode gets the sentences the document translates, as the document cuts them (the
    # text of a wrapped paragraph may cut where the verses' own splitting did not); not one
    # without letters ("'", "1."), which a document keeps as it is
    paragraphs = [[s.text for s in sentences_of(u)] for u in text_format.parse(doc).units]
    said = [s for p in paragraphs for s in p if LETTER.search(s)]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "doc.txt").write_text(doc, encoding="utf-8")
        (Path(tmp) / "lines.txt").write_text("\n".join(said) + "\n", encoding="utf-8")
        line_times, text_times = [], []
        for _ in range(args.repeats):  # interleaved, so that a busy moment hits both
            lines, line_peak, line_s = run(args, Path(tmp) / "lines.txt", "lines", Path(tmp))
            out, text_peak, text_s = run(args, Path(tmp) / "doc.txt", "text", Path(tmp))
            line_times.append(line_s)
            text_times.append(text_s)
    got, want = iter(lines.split("\n")), []
    for p, b in zip(paragraphs, blanks, strict=True):
        line_mode = [next(got) if LETTER.search(s) else s for s in p]
        want.append(" ".join(line_mode) + "\n" * (1 + b))
    expected = "".join(want)
    first = next((i for i, (a, b) in enumerate(zip(expected, out, strict=False)) if a != b), None)
    if first is not None or len(expected) != len(out):
        at = first if first is not None else min(len(expected), len(out))
        print(f"differ at {at}: {expected[at - 80 : at + 80]!r} / {out[at - 80 : at + 80]!r}")
    return {
        "sentences": len(sentences),
        "paragraphs": len(paragraphs),
        "same_as_line_mode": out == expected,
        "paragraphs_kept": out.count("\n")
        == doc.count("\n") - sum(p.count("\n") for p in (wrap(" ".join(q)) for q in paragraphs)),
        "peak_mib_lines": round(line_peak),
        "peak_mib_text": round(text_peak),
        "peak_ratio": round(text_peak / line_peak, 3),
        "seconds_lines": spread(line_times),
        "seconds_text": spread(text_times),
    }


def spread(times: list[float]) -> str:
    """median (min-max) of the repeats, in seconds."""
    import statistics

    return f"{statistics.median(times):.1f} ({min(times):.1f}-{max(times):.1f})"


def wrap(paragraph: str, width: int = 78) -> str:
    """Soft-wrapped at `width` columns, as a text editor would."""
    lines, line = [], ""
    for word in paragraph.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def run(args: argparse.Namespace, path: Path, fmt: str, tmp: Path) -> tuple[str, float, float]:
    """`aiayn translate` in a process of its own: its output, peak memory (MiB), seconds."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out, err = tmp / f"{fmt}.out", tmp / f"{fmt}.err"
    cmd = [
        sys.executable,
        "-m",
        "aiayn",
        "translate",
        "--model",
        args.model,
        "--input",
        str(path),
        "--output",
        str(out),
        "--format",
        fmt,
        *args.flags.split(),
    ]
    start = time.perf_counter()
    with open(err, "wb") as stderr:
        proc = subprocess.Popen(cmd, env=env, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak, not the largest one's
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    message = err.read_text()
    if proc.returncode:
        raise SystemExit(message)
    print(f"{fmt}: {message.strip().splitlines()[-1][-120:]}", file=sys.stderr)
    return out.read_text(encoding="utf-8"), usage.ru_maxrss / 1024, seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["markdown", "html", "text"])
    p.add_argument("--model", default="runs/demo")
    p.add_argument("--pages", default="/usr/share/doc/diffutils")
    p.add_argument("--n", type=int, default=24)
    p.add_argument("--files", nargs="+", help="markdown: these files (from the repository root)")
    p.add_argument("--data", default="data/en-de")
    p.add_argument("--sentences", type=int, default=5000)
    p.add_argument(
        "--repeats", type=int, default=1, help="text, markdown: runs of each, interleaved"
    )
    p.add_argument("--flags", default="", help="more `aiayn translate` options (text)")
    args = p.parse_args()
    result = {"markdown": markdown, "html": html, "text": text}[args.what](args)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
