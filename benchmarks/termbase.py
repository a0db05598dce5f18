"""A termbase mined from software messages, and what its terms do for a term-aware model: term
use and BLEU with and without the glossary. Issue 55's term table.

    .venv/bin/python benchmarks/gettext_corpus.py --out runs/gettext-corpus
    .venv/bin/python benchmarks/termbase.py build --corpus runs/gettext-corpus --out terms.tsv
    .venv/bin/python benchmarks/termbase.py run --corpus runs/gettext-corpus --terms terms.tsv \
        --work WORK --minutes 30 [--seeds 1 2 3] [--precision fp32] [--json FILE]

build: a localisation team's termbase, from the training catalogues only (never valid or
test): the short messages (one to three words: menu items, buttons, labels; accelerators and
a closing colon or ellipsis taken off) give each source term its translations; a term is kept
where one translation dominates (>= 60% of at least 2) and the longer training messages bear
it out: of at least 5 that hold the source term, half or more use the target term in some form
(data/lemmas.py). That keeps "file" -> "Datei" and drops "no" -> "Nein", which in a sentence is
"kein". Written `source TAB target TAB inflect`: a term-aware model is given each term inline
and chooses its form. Not from a dictionary: the Debian ones for English-German (trans-de-en,
FreeDict) come from Ding, whose data this project holds out.

run: the corpus prepared with the termbase (`prepare --terms`: term-aware), one `small` model
per seed trained `--minutes` (`--recipe short`, no search tuned at the close), each model's test
split translated without the glossary, with its terms inline only (the model's own placing: the
first search of a translation with the glossary), and with the glossary (the lines whose output
left an `inflect` term out searched again with it held as written: decode/translate.py); one
search for all (harness/cells.py). On the test lines whose source holds a term: term use (the
share of those terms whose target the output uses in some form, by simplemma's lemmas), and
BLEU and chrF on the lines whose reference uses all their terms; BLEU on the whole split beside;
how many lines were searched again; and how often the search's rule for a term in some form
agrees with the lemmas on the test references. Cells and scores are kept under
WORK (the table fills across sessions); a run cut off is trained again from nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: harness/

from harness.cells import SEARCH, aiayn, cpu_of, memoized, spread, trained_for

SHORT = re.compile(r"^[^\W\d_]+(?:[ -][^\W\d_]+){0,2}$")  # one to three words of letters
ACCELERATOR = re.compile(r"[_&](?=\w)")
CLOSING = re.compile(r"\s*(?::|\.\.\.|…)\s*$")
MIN_SEEN, DOMINANT = 2, 0.6  # a short message's translations
MIN_CONTEXT, BORNE_OUT = 5, 0.5  # the longer messages that hold the term


def plain(text: str) -> str:
    """A UI string without its accelerator marks and closing colon or ellipsis."""
    return CLOSING.sub("", ACCELERATOR.sub("", text)).strip()


def pairs_of(tsv: Path) -> list[tuple[str, str]]:
    rows = (line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines())
    return [(r[0], r[1]) for r in rows if len(r) >= 2]


def candidates(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Source term (lower case) -> its dominant translation, from the short messages."""
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for src, tgt in pairs:
        s, t = plain(src), plain(tgt)
        if SHORT.match(s) and SHORT.match(t):
            seen[s.casefold()][t] += 1
    found = {}
    for term, translations in seen.items():
        target, n = translations.most_common(1)[0]
        total = sum(translations.values())
        if total >= MIN_SEEN and n / total >= DOMINANT:
            found[term] = target
    return found


def borne_out(pairs: list[tuple[str, str]], found: dict[str, str]) -> list[tuple[str, str, int]]:
    """The candidates that the longer messages use as the termbase says, with how many hold
    them: (source, target, messages)."""
    from aiayn.data.glossary import Glossary, Term
    from aiayn.data.lemmas import Lemmas

    glossary = Glossary(tuple(Term(s, t, "mined") for s, t in found.items()))
    lemmas = Lemmas("de")
    held: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for src, tgt in pairs:
        if len(src.split()) < 4:
            continue  # a short message is where the term came from, not a test of it
        terms = {term.source: term.target for term in glossary.terms_for(plain(src))}
        if terms:
            have = lemmas.of(tgt)
            held.update(terms.keys())
            used.update(s for s, t in terms.items() if lemmas.uses(t, have))
    kept = [
        (s, t, held[s])
        for s, t in found.items()
        if held[s] >= MIN_CONTEXT and used[s] / held[s] >= BORNE_OUT
    ]
    return sorted(kept, key=lambda k: (-k[2], k[0]))


def build(a: argparse.Namespace) -> None:
    pairs = pairs_of(a.corpus / "train.tsv")
    found = candidates(pairs)
    kept = borne_out(pairs, found)
    a.out.write_text("".join(f"{s}\t{t}\tinflect\n" for s, t, _ in kept), encoding="utf-8")
    print(f"{len(pairs):,} training pairs; {len(found):,} candidate terms; {len(kept):,} kept")
    print("most used:", ", ".join(f"{s} -> {t} ({n})" for s, t, n in kept[:12]))


def held_out_test(data: Path) -> tuple[list[str], list[str]]:
    """The prepared test split's sources and references."""
    read = [(data / f"test.{side}.txt").read_text(encoding="utf-8") for side in ("src", "tgt")]
    return read[0].splitlines(), read[1].splitlines()


def measure(model: Path, data: Path, terms: Path) -> dict:
    """Term use and scores of one model's test translations, without and with the glossary."""
    from aiayn.config import DecodeConfig
    from aiayn.data.glossary import Glossary
    from aiayn.data.lemmas import Lemmas
    from aiayn.decode.controls.words import Controls
    from aiayn.decode.translate import term_annotated, terms_missed
    from aiayn.engines import open_translator
    from aiayn.evaluate.scores import score

    sources, references = held_out_test(data)
    glossary, lemmas = Glossary.load(terms), Lemmas("de")
    translator, cfg = open_translator(model), DecodeConfig(**SEARCH)
    controls = Controls(glossary=glossary)
    inline = term_annotated(controls, translator.tokenizer, sources)  # every term is `inflect`
    outputs = {
        "without": translator.translate(sources, cfg),
        "inline only": translator.translate(inline, cfg),
        "with": translator.translate(sources, cfg, controls),
    }
    again = terms_missed(controls, translator.tokenizer, sources, outputs["inline only"], cfg)
    wanted = [[t.target for t in glossary.terms_for(s)] for s in sources]
    lines = [  # the lines whose reference uses every term of their source
        i
        for i, (w, r) in enumerate(zip(wanted, references, strict=True))
        if w and all(lemmas.uses(t, lemmas.of(r)) for t in w)
    ]
    row: dict = {"term lines": sum(map(bool, wanted)), "reference uses them": len(lines)}
    row["searched again"] = len(again)
    for name, out in outputs.items():
        uses = [lemmas.uses(t, lemmas.of(o)) for w, o in zip(wanted, out, strict=True) for t in w]
        on_lines = score([out[i] for i in lines], [[references[i] for i in lines]])
        everything = score(out, [references])
        row[name] = {
            "term use %": round(100 * sum(uses) / max(1, len(uses)), 2),
            "bleu": round(on_lines.bleu, 2),
            "chrf": round(on_lines.chrf, 2),
            "bleu, all lines": round(everything.bleu, 2),
        }
    return row


def form_rule_agreement(data: Path, terms: Path) -> dict:
    """How often the search's rule for "the output holds a term in some form" (data/glossary.py
    `in_some_form`, the shape of words) says what simplemma's lemmas say (data/lemmas.py, the
    table's measure), over the test references' term occurrences."""
    from aiayn.data.glossary import Glossary, in_some_form, word_forms
    from aiayn.data.lemmas import Lemmas

    sources, references = held_out_test(data)
    glossary, lemmas = Glossary.load(terms), Lemmas("de")
    said = [
        (lemmas.uses(t.target, lemmas.of(r)), in_some_form(t.target, word_forms(r)))
        for s, r in zip(sources, references, strict=True)
        for t in glossary.terms_for(s)
    ]
    return {
        "occurrences": len(said),
        "agree": sum(a == b for a, b in said),
        "rule only": sum(b and not a for a, b in said),
        "lemmas only": sum(a and not b for a, b in said),
    }


def run(a: argparse.Namespace) -> None:
    data = a.work / "data-terms"
    if not (data / "meta.json").is_file():
        held = ["--valid", str(a.corpus / "valid.tsv"), "--test", str(a.corpus / "test.tsv")]
        args = ["--corpus", str(a.corpus / "train.tsv"), *held, "--terms", str(a.terms)]
        args += ["--src-lang", "en", "--tgt-lang", "de", "--out", str(data), "--no-progress"]
        aiayn("prepare", *args, log=a.work / "prepare.log")
    rows = []
    for seed in a.seeds:
        args = ["--data", str(data), "--preset", "small", "--recipe", "short"]
        run_dir = trained_for(
            a.work / f"run-seed{seed}", a.minutes, a.precision, args, (f"seed={seed}",)
        )
        about = {"model": run_dir, "data": data, "terms": a.terms}
        memo = a.work / "scores" / f"seed{seed}.json"
        row = memoized(memo, about, lambda model=run_dir: measure(model, data, a.terms))
        rows.append({"seed": seed, "cpu": cpu_of(run_dir), **row})
        print(json.dumps(rows[-1]), flush=True)
    print(f"{datetime.date.today().isoformat()}; {a.minutes:g} min a seed; {SEARCH}")
    for part in ("without", "inline only", "with"):
        cols = [spread([r[part][m] for r in rows]) for m in rows[0][part]]
        print(f"| {part} | " + " | ".join(cols) + " |")
    print("searched again:", spread([r["searched again"] for r in rows]))
    agreement = form_rule_agreement(data, a.terms)
    print("the form rule against the lemmas, test references:", agreement)
    if a.json is not None:
        found = {"search": SEARCH, "rows": rows, "form rule": agreement}
        a.json.write_text(json.dumps(found, indent=1) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("build", "run"))
    p.add_argument("--corpus", type=Path, required=True, help="gettext_corpus.py's --out")
    p.add_argument("--out", type=Path, help="build: the termbase to write")
    p.add_argument("--terms", type=Path, help="run: the termbase")
    p.add_argument("--work", type=Path, help="run: data, runs and scores (kept between calls)")
    p.add_argument("--minutes", type=float, default=30.0, help="run: each model's training")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--precision", help="run: passed to train (fp32 where the CPU has no bf16)")
    p.add_argument("--json", type=Path, help="run: also write the rows here")
    a = p.parse_args()
    if a.what == "build":
        if a.out is None:
            p.error("build writes --out")
        build(a)
    else:
        if a.terms is None or a.work is None:
            p.error("run needs --terms and --work")
        a.work.mkdir(parents=True, exist_ok=True)
        run(a)


if __name__ == "__main__":
    main()
