"""Word alignments read from cross-attention, and inline tags placed by them, on the Bible.

    .venv/bin/python benchmarks/alignment_bench.py --model runs/demo --data data/en-de \
        [--store DIR]

1. Reference alignments: eflomal (Östling & Tiedemann 2016) over the training, validation and
   test pairs (source and prepared target, whitespace words), both directions; sure links =
   their intersection, possible = their union.
2. Choose: the layer and head (or the heads' mean) whose attention, teacher-forced over the
   reference, has the lowest AER on --choose validation pairs; --store DIR writes it to
   DIR/alignment.json, where `aiayn translate` reads it (else the last layer's mean).
3. AER on --n test pairs: the chosen layer/head, the default, each layer's mean, and each
   `--also LAYER:HEAD` (e.g. `--also=-2:0`, the head a guided alignment run trained).
4. Inline tags: in each of the --n test sources, <b> around a random span of 1-3 words that
   eflomal aligns to the reference; translated as HTML (tags placed by the chosen alignments)
   and without tags. Reported: tags kept and well nested, BLEU of the tag-stripped output
   against the untagged translation's, and placement: the share of output tags that wrap at
   least one of the words of the reference aligned to the tagged source words.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from html import escape
from pathlib import Path

from aiayn.documents.alignment import Choice, aer, parse_moses, word_pairs


def eflomal_links(sources: list[str], targets: list[str]) -> tuple[list[set], list[set]]:
    """(sure, possible) links per pair: the intersection and union of both directions."""
    import eflomal

    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        eflomal.Aligner().align(
            [s.lower() for s in sources],
            [t.lower() for t in targets],
            links_filename_fwd=str(fwd),
            links_filename_rev=str(rev),
        )
        forward = [parse_moses(x) for x in fwd.read_text().split("\n")[: len(sources)]]
        backward = [parse_moses(x) for x in rev.read_text().split("\n")[: len(sources)]]
    return [f & b for f, b in zip(forward, backward, strict=True)], [
        f | b for f, b in zip(forward, backward, strict=True)
    ]


def forced_pairs(translator, sources, references, head) -> list[list[set]]:
    """Per pair, per decoder layer: the attention alignment over the reference."""
    from aiayn.engines import Translation

    out = []
    for src, ref in zip(sources, references, strict=True):
        ids = translator.tokenizer.encode([ref])[0]
        maps = translator.attention(src, Translation(ref, 0.0, ids), head)
        n_src, n_ref = len(src.split()), len(ref.split())
        out.append(
            [
                word_pairs(maps, n_src, n_ref, Choice(layer, head))
                for layer in range(len(maps.cross))
            ]
        )
    return out


def choose(translator, sources, references, sure, possible, n_heads) -> tuple[Choice, dict]:
    """The layer and head of lowest AER on these pairs; every AER measured."""
    table = {}
    for head in [None, *range(n_heads)]:
        found = forced_pairs(translator, sources, references, head)
        for layer in range(len(found[0])):
            table[(layer, head)] = aer([f[layer] for f in found], sure, possible)
    (layer, head), best = min(table.items(), key=lambda kv: kv[1])
    n_layers = 1 + max(k[0] for k in table)
    return Choice(layer - n_layers, head, f"chosen on validation (AER {best:.3f})"), table


def words_of(text: str) -> set[str]:
    return {w for w in (re.sub(r"\W+", "", x.lower()) for x in text.split()) if w}


def tagged_sources(sources, references, sure, rng) -> tuple[list[str], list[set[str]]]:
    """Each source as an HTML paragraph with <b> around a span aligned to the reference (none
    where no span is), and the reference's words aligned to that span."""
    html, wanted = [], []
    for src, ref, links in zip(sources, references, sure, strict=True):
        words, ref_words = src.split(), ref.split()
        para, aimed = f"<p>{escape(src)}</p>", set()
        for _ in range(10):
            n = rng.randint(1, 3)
            if len(words) <= n:
                break
            a = rng.randrange(0, len(words) - n + 1)
            aligned = {ref_words[j] for i, j in links if a <= i < a + n}
            if aligned and words_of(" ".join(words[a : a + n])):
                para = (
                    f"<p>{escape(' '.join(words[:a]))} <b>{escape(' '.join(words[a : a + n]))}"
                    f"</b> {escape(' '.join(words[a + n :]))}</p>"
                ).replace("<p> ", "<p>")
                aimed = words_of(" ".join(aligned))
                break
        html.append(para)
        wanted.append(aimed)
    return html, wanted


def inline_tags(translator, sources, references, sure, choice, rng, bleu_refs) -> dict:
    from lxml import html as lxml_html
    from sacrebleu import corpus_bleu

    from aiayn.documents import DocumentOptions, translate_document

    tagged, wanted = tagged_sources(sources, references, sure, rng)
    plain = [f"<p>{escape(s)}</p>" for s in sources]
    options = DocumentOptions(progress=False, choice=choice)
    cfg = translator.default_search
    start = time.perf_counter()
    out_tagged, _ = translate_document(translator, "\n".join(tagged), "html", cfg, options)
    seconds = time.perf_counter() - start
    out_plain, _ = translate_document(translator, "\n".join(plain), "html", cfg, options)

    def paragraphs(doc: str):
        return lxml_html.fragment_fromstring(doc, create_parent="div").findall("p")

    p_tagged, p_plain = paragraphs(out_tagged), paragraphs(out_plain)
    assert len(p_tagged) == len(p_plain) == len(sources), "a paragraph was lost"
    hyp_tagged = [" ".join(p.text_content().split()) for p in p_tagged]
    hyp_plain = [" ".join(p.text_content().split()) for p in p_plain]
    n_tags = sum("<b>" in t for t in tagged)
    kept = sum(
        len(p.findall(".//b")) == ("<b>" in t) for p, t in zip(p_tagged, tagged, strict=True)
    )
    nested = sum(
        s.count("<b>") == s.count("</b>") and s.find("<b>") <= s.find("</b>")
        for s in re.findall(r"<p>.*?</p>", out_tagged, re.S)
    )
    hits, precision = [], []
    for p, aimed in zip(p_tagged, wanted, strict=True):
        for b in p.findall(".//b"):
            got = words_of(b.text_content())
            hits.append(bool(got & aimed))
            precision.append(len(got & aimed) / len(got) if got else 0.0)
    refs = [bleu_refs]  # the split's references as `aiayn evaluate` scores against them
    return {
        "sentences": len(sources),
        "tags": n_tags,
        "paragraphs_with_their_tags_exactly": kept,
        "paragraphs_well_nested": nested,
        "bleu_untagged": round(corpus_bleu(hyp_plain, refs).score, 2),
        "bleu_tag_stripped": round(corpus_bleu(hyp_tagged, refs).score, 2),
        "placement_hit": round(sum(hits) / max(len(hits), 1), 3),
        "placement_word_precision": round(sum(precision) / max(len(precision), 1), 3),
        "seconds_tagged": round(seconds, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="runs/demo")
    p.add_argument("--data", default="data/en-de")
    p.add_argument("--n", type=int, default=400, help="test pairs")
    p.add_argument("--choose", type=int, default=150, help="validation pairs to choose on")
    p.add_argument("--store", type=Path, help="write alignment.json into this directory")
    p.add_argument(
        "--also", action="append", default=[], metavar="LAYER:HEAD", help="another head's AER"
    )
    args = p.parse_args()

    from aiayn import open_translator

    data = Path(args.data)

    def read(split: str, side: str) -> list[str]:
        return (data / f"{split}.{side}.txt").read_text(encoding="utf-8").splitlines()

    splits = {s: (read(s, "src"), read(s, "tgt")) for s in ("train", "valid", "test")}
    start = time.perf_counter()
    sure, possible = eflomal_links(
        [x for s in splits.values() for x in s[0]], [x for s in splits.values() for x in s[1]]
    )
    print(f"eflomal: {len(sure)} pairs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    offset = {"train": 0, "valid": len(splits["train"][0])}
    offset["test"] = offset["valid"] + len(splits["valid"][0])

    def part(split: str, n: int):
        src, ref = splits[split]
        k = offset[split]
        return src[:n], ref[:n], sure[k : k + n], possible[k : k + n]

    translator = open_translator(args.model)
    n_heads = translator.model.cfg.n_heads  # type: ignore[attr-defined]
    v_src, v_ref, v_sure, v_possible = part("valid", args.choose)
    chosen, table = choose(translator, v_src, v_ref, v_sure, v_possible, n_heads)
    print(f"chosen: layer {chosen.layer}, head {chosen.head} ({chosen.origin})", file=sys.stderr)
    if args.store:
        stored = {"layer": chosen.layer, "head": chosen.head, "origin": chosen.origin}
        (args.store / "alignment.json").write_text(json.dumps(stored) + "\n")
    t_src, t_ref, t_sure, t_possible = part("test", args.n)
    test_aer = {}
    also = [
        (f"layer {x} head {h}", Choice(int(x), int(h)))
        for x, h in (a.split(":") for a in args.also)
    ]
    for name, c in (("chosen", chosen), ("penultimate mean", Choice(-2)), *also):
        found = forced_pairs(translator, t_src, t_ref, c.head)
        test_aer[name] = round(aer([f[c.layer] for f in found], t_sure, t_possible), 3)
    means = forced_pairs(translator, t_src, t_ref, None)
    for layer in range(len(means[0])):
        test_aer[f"layer {layer} mean"] = round(
            aer([f[layer] for f in means], t_sure, t_possible), 3
        )
    bleu_refs = read("test", "ref1")[: args.n]
    tags = inline_tags(translator, t_src, t_ref, t_sure, chosen, random.Random(0), bleu_refs)
    print(
        json.dumps(
            {
                "chosen": {"layer": chosen.layer, "head": chosen.head},
                "valid_aer": {
                    f"{k[0]}/{'mean' if k[1] is None else k[1]}": round(v, 3)
                    for k, v in sorted(table.items(), key=lambda kv: kv[1])[:8]
                },
                "test_aer": test_aer,
                "inline_tags": tags,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
