"""Protected spans (URLs, paths, identifiers, placeholders...) with and without protection, and
stutter, on text of the kinds issue 55 names: a gettext corpus's test split (with references:
BLEU and chrF) and pages (the project's Markdown, a Debian package's HTML: no references).

    .venv/bin/python benchmarks/gettext_corpus.py --out runs/gettext-corpus   # then prepare
    .venv/bin/python benchmarks/protect_bench.py --model runs/gettext \
        --pairs runs/gettext-corpus/test.tsv --markdown docs/*.md README.md \
        --html /usr/share/doc/valgrind/html/*.html --out benchmarks/results-protect.json

A span is what the built-in patterns find in a source (documents/protect.py); it is kept when
its text occurs in the output as often as in the source (Markdown outputs are read with their
backslash escapes undone, which render the same). Stutter: evaluate.scores.stutters, on each
line's or sentence's output (the references' rate beside it where there are references).
Both systems decode the same sentences with the model's stored search, one after the other.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a CommonMark backslash escape


def kept(
    sources: list[str], outputs: list[str], texts: list[list[str]] | None = None
) -> tuple[int, int]:
    """(spans kept verbatim, spans found) over aligned sources and outputs. With `texts` (each
    source's sentences to translate), spans are looked for there only, and their occurrences
    elsewhere in the source (a link's target, a code block) are expected in the output too."""
    from aiayn.documents.protect import Protector

    finder, found, held = Protector(), 0, 0
    for k, (source, output) in enumerate(zip(sources, outputs, strict=True)):
        inside = texts[k] if texts is not None else [source]
        spans = [t[a:b] for t in inside for a, b in finder.spans(t)]
        for text in set(spans):
            n = spans.count(text)
            elsewhere = source.count(text) - n if texts is not None else 0
            found += n
            held += min(n, max(output.count(text) - elsewhere, 0))
    return held, found


def translatable(source: str, fmt: str) -> list[str]:
    """The sentences of a document that a translation searches."""
    from aiayn.documents.segment import needs_translation, sentences_of
    from aiayn.documents.translate import READERS

    units = READERS[fmt](source).units
    return [s.text for u in units for s in sentences_of(u) if needs_translation(s)]


def read_pairs(pairs: Path) -> tuple[list[str], list[str]]:
    """The sources and references of a source<TAB>reference file."""
    rows = [line.rstrip("\n").split("\t") for line in pairs.open(encoding="utf-8")]
    return [r[0] for r in rows], [r[1] for r in rows]


def lines_system(model: str, pairs: Path, protect: bool) -> dict:
    from aiayn import open_translator
    from aiayn.documents.lines import LineTranslator
    from aiayn.documents.protect import Protector
    from aiayn.evaluate.scores import score

    sources, references = read_pairs(pairs)
    translator = LineTranslator(open_translator(model), Protector() if protect else None)
    start = time.perf_counter()
    outputs = translator.translate(sources)
    seconds = time.perf_counter() - start
    held, found = kept(sources, outputs)
    ref_held, _ = kept(sources, references)
    s = score(outputs, [references])
    return {
        "lines": len(sources),
        "bleu": round(s.bleu, 2),
        "chrf": round(s.chrf, 2),
        "length_ratio": round(s.length_ratio, 3),
        "spans": found,
        "kept": round(held / max(found, 1), 4),
        "kept_by_references": round(ref_held / max(found, 1), 4),
        "stutter": round(s.stutter, 4),
        "stutter_references": round(s.reference_stutter, 4),
        "repetition": round(s.repetition, 4),
        "repetition_references": round(s.reference_repetition, 4),
        "seconds": round(seconds, 1),
    }


def document_system(model: str, pairs: Path, protect: bool) -> dict:
    """The pairs' sources as one text document, a paragraph per line (`--format text`), each
    paragraph's translation scored against its reference."""
    from aiayn import open_translator
    from aiayn.documents import DocumentOptions, translate_document
    from aiayn.documents.protect import Protector
    from aiayn.evaluate.scores import score

    sources, references = read_pairs(pairs)
    translator = open_translator(model)
    options = DocumentOptions(progress=False, protect=Protector() if protect else None)
    start = time.perf_counter()
    document = "\n\n".join(sources) + "\n"
    out, _ = translate_document(translator, document, "text", translator.default_search, options)
    seconds = time.perf_counter() - start
    outputs = [p.replace("\n", " ") for p in str(out).rstrip("\n").split("\n\n")]
    held, found = kept(sources, outputs)
    s = score(outputs, [references])
    return {
        "paragraphs": len(sources),
        "bleu": round(s.bleu, 2),
        "chrf": round(s.chrf, 2),
        "spans": found,
        "kept": round(held / max(found, 1), 4),
        "stutter": round(s.stutter, 4),
        "seconds": round(seconds, 1),
    }


def pages_system(model: str, paths: list[Path], fmt: str, protect: bool) -> dict:
    from aiayn import open_translator
    from aiayn.documents import DocumentOptions, translate_document
    from aiayn.documents.protect import Protector
    from aiayn.evaluate.scores import stutters

    translator = open_translator(model)
    protector = Protector() if protect else None
    sources = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    outputs, sentences, start = [], 0, time.perf_counter()
    for path, source in zip(paths, sources, strict=True):
        named = DocumentOptions(progress=False, protect=protector, name=str(path))
        out, n = translate_document(translator, source, fmt, translator.default_search, named)
        outputs.append(str(out))
        sentences += n
    seconds = time.perf_counter() - start
    if fmt == "markdown":
        outputs = [ESCAPE.sub(r"\1", out) for out in outputs]
    held, found = kept(sources, outputs, [translatable(s, fmt) for s in sources])
    out_lines = [line for out in outputs for line in out.splitlines() if line.strip()]
    src_lines = [line for src in sources for line in src.splitlines() if line.strip()]
    return {
        "pages": len(paths),
        "sentences": sentences,
        "spans": found,
        "kept": round(held / max(found, 1), 4),
        "stutter_lines": sum(map(stutters, out_lines)),
        "stutter_lines_in_sources": sum(map(stutters, src_lines)),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--pairs", type=Path, help="source<TAB>reference lines")
    ap.add_argument(
        "--pairs-as-document",
        action="store_true",
        help="also translate the pairs' sources as one text document, a paragraph per line",
    )
    ap.add_argument("--markdown", type=Path, nargs="*", default=[])
    ap.add_argument("--html", type=Path, nargs="*", default=[])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from harness.machine import cpu_model

    result: dict = {
        "cpu": cpu_model(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "model": args.model,
        "command": " ".join(sys.argv),
    }
    for protect in (True, False):
        name = "protect" if protect else "no-protect"
        if args.pairs:
            result[f"lines, {name}"] = lines_system(args.model, args.pairs, protect)
        if args.pairs and args.pairs_as_document:
            result[f"document, {name}"] = document_system(args.model, args.pairs, protect)
        for fmt, paths in (("markdown", args.markdown), ("html", args.html)):
            if paths:
                result[f"{fmt}, {name}"] = pages_system(args.model, paths, fmt, protect)
        print(json.dumps({k: v for k, v in result.items() if name in k}, indent=1), flush=True)
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        tmp.replace(args.out)


if __name__ == "__main__":
    main()
