"""Glossary terms, target prefixes and what the controls cost, on a trained model (issue 30).

    .venv/bin/pip install -e ".[bench]"      # eflomal, the word aligner
    flock /work/heavy.lock .venv/bin/python benchmarks/glossary_bench.py quality \\
        --model runs/race --data data/en-de
    flock /work/heavy.lock .venv/bin/python benchmarks/glossary_bench.py speed --model runs/race
    flock /work/heavy.lock .venv/bin/python benchmarks/glossary_bench.py prefix --model runs/race
    flock /work/heavy.lock .venv/bin/python benchmarks/glossary_bench.py ab --main ../main/src

quality: the test split translated without terms, then with one term per sentence drawn from
its reference: a word pair that eflomal (Östling & Tiedemann 2016, from PyPI) aligns one to one
in both directions (the intersection of its forward and reverse links, train and test aligned
together, words lowercased) whose target word is in the reference but not in the unconstrained
output; of several, the longest target word (`--pick longest`) or one drawn at random
(`--pick random`, seeded by --seed; the neutral choice); `--pick longest random` measures both
on one unconstrained translation. Each sentence gets its own term (a glossary of all would apply
a term wherever its source word occurs). Reported per pick: % terms kept (the target word as a
whole word of the output), BLEU and chrF without and with the terms (all sentences, and the
sentences that got a term), % outputs with a term more often than their reference has it.
Writes terms.tsv (sentence, source, target) of the first pick to --out.

speed: beam 4, batch 32, the sentences with a term: sentences/s without terms and with them,
taking turns, --repeats times (median, min-max).

prefix: batch 1, beam 4, sentences whose output has at least 30 + 10 pieces: the time to finish
after its first 30 output pieces given as a prefix (one teacher-forced pass, then the search)
against the time to produce the same number of pieces without a prefix; and, for contrast, the
prefix forced piece by piece (30 more search steps). Lengths are fixed (min_len and the limit)
so that every run searches the same number of steps.

ab: decode_bench.py's "aiayn fp32" timing (random `small` weights, fixed lengths) run in fresh
processes with this tree's sources and with --main's, taking turns, --repeats rounds: a search
without controls must not have become slower.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORD = re.compile(r"\w+|[^\w\s]")


def words(line: str) -> list[str]:
    return WORD.findall(line)


def has_word(text: str, word: str) -> int:
    """How often `word` occurs in `text` as a whole word."""
    return len(re.findall(r"(?<!\w)" + re.escape(word) + r"(?!\w)", text))


def align(src: list[str], tgt: list[str]) -> list[set[tuple[int, int]]]:
    """Intersected forward and reverse eflomal links per sentence pair (lowercased words)."""
    from eflomal import Aligner

    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, lines in (("src", src), ("tgt", tgt)):
            paths[name] = Path(tmp) / name
            paths[name].write_text(
                "".join(" ".join(words(x.lower())) + "\n" for x in lines), encoding="utf-8"
            )
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        with open(paths["src"], encoding="utf-8") as s, open(paths["tgt"], encoding="utf-8") as t:
            Aligner().align(s, t, links_filename_fwd=str(fwd), links_filename_rev=str(rev))
        links = []
        for f, r in zip(fwd.read_text().splitlines(), rev.read_text().splitlines(), strict=True):
            pairs = [{tuple(map(int, x.split("-"))) for x in line.split()} for line in (f, r)]
            links.append(pairs[0] & pairs[1])
        return links


def choose_term(
    src: str, ref: str, hyp: str, links: set[tuple[int, int]], pick: random.Random | None = None
) -> tuple[str, str] | None:
    """A word pair aligned one to one whose target the output misses: the longest target, or
    with `pick`, one drawn from them all."""
    s, t = words(src), words(ref)
    src_count = {}
    for w in s:
        src_count[w.lower()] = src_count.get(w.lower(), 0) + 1
    candidates = []
    for i, j in links:
        if sum(1 for a, _ in links if a == i) != 1 or sum(1 for _, b in links if b == j) != 1:
            continue
        if i >= len(s) or j >= len(t):
            continue
        source, target = s[i], t[j]
        if not (source.isalpha() and target.isalpha() and len(source) > 2 and len(target) > 2):
            continue
        if src_count[source.lower()] != 1 or has_word(hyp, target):
            continue
        candidates.append((len(target), -j, source, target))
    if not candidates:
        return None
    _, _, source, target = max(candidates) if pick is None else pick.choice(sorted(candidates))
    return source, target


def read_terms(path: Path) -> list[tuple[int, str, str]]:
    """terms.tsv as `quality` writes it: line number (from 1), source term, target term."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(int(n), source, target) for n, source, target in rows]


def open_model(run: str):
    from aiayn import open_translator

    translator = open_translator(run)
    return translator.model, translator.tokenizer, translator.default_search


def term_controls(tokenizer, terms: list[tuple[str, str] | None]):
    """Each sentence's term as `aiayn translate --glossary` gives it to the search."""
    from aiayn.evaluate.tune import term_controls as controls_of

    return controls_of(tokenizer, [None if t is None else t[1] for t in terms])


def translate(model, tokenizer, lines, cfg, controls=None) -> list[str]:
    from aiayn.decode.translate import decode_lines, decoder

    return tokenizer.decode(decode_lines(model, tokenizer, lines, decoder(cfg, controls), [], cfg))


def describe(cfg) -> str:
    return f"beam {cfg.beam}, {cfg.length_penalty} alpha {cfg.alpha}, stop {cfg.stop}"


def quality(args: argparse.Namespace) -> dict:
    data = Path(args.data)
    src = (data / "test.src.txt").read_text(encoding="utf-8").splitlines()[: args.n]
    ref = (data / "test.tgt.txt").read_text(encoding="utf-8").splitlines()[: args.n]
    model, tokenizer, cfg = open_model(args.model)
    cfg = cfg.replace(beam=args.beam) if args.beam else cfg
    if args.one_setting:  # terms under the model's setting for free search, as before tuning
        cfg = cfg.replace(terms_alpha=None, terms_length_penalty=None, terms_stop=None)
    start = time.perf_counter()
    plain = translate(model, tokenizer, src, cfg)
    plain_s = time.perf_counter() - start
    found = {
        "sentences": len(src),
        "search": describe(cfg),
        "search with terms": describe(cfg.for_terms()),
        "seconds without terms": round(plain_s, 1),
    }
    if args.terms:  # the pairs of an earlier run: eflomal takes no seed, so a rerun's differ
        terms: list[tuple[str, str] | None] = [None] * len(src)
        for n, source, target in read_terms(args.terms):
            if n <= len(src):
                terms[n - 1] = (source, target)
        found[f"terms of {args.terms}"] = with_terms(
            model, tokenizer, cfg, (src, ref, plain), terms, None
        )
        return found
    train_src = (data / "train.src.txt").read_text(encoding="utf-8").splitlines()
    train_tgt = (data / "train.tgt.txt").read_text(encoding="utf-8").splitlines()
    links = align(train_src + src, train_tgt + ref)[len(train_src) :]
    for k, pick in enumerate(args.pick):
        rng = random.Random(args.seed) if pick == "random" else None
        terms = [choose_term(*x, pick=rng) for x in zip(src, ref, plain, links, strict=True)]
        found[f"pick {pick}"] = with_terms(
            model, tokenizer, cfg, (src, ref, plain), terms, args.out if k == 0 else None
        )
    return found


def with_terms(model, tokenizer, cfg, texts, terms, out: Path | None) -> dict:
    """The split translated with each sentence's term, scored against the unconstrained one."""
    from aiayn.evaluate.scores import score

    src, ref, plain = texts
    start = time.perf_counter()
    kept_out = translate(model, tokenizer, src, cfg, term_controls(tokenizer, terms))
    terms_s = time.perf_counter() - start
    with_term = [i for i, t in enumerate(terms) if t is not None]
    kept = sum(has_word(kept_out[i], terms[i][1]) > 0 for i in with_term)  # type: ignore[index]
    repeated = sum(
        has_word(kept_out[i], terms[i][1]) > has_word(ref[i], terms[i][1])  # type: ignore[index]
        for i in with_term
    )
    before, after = score(plain, [ref]), score(kept_out, [ref])
    sub_ref = [ref[i] for i in with_term]
    sub_before = score([plain[i] for i in with_term], [sub_ref])
    sub_after = score([kept_out[i] for i in with_term], [sub_ref])
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "terms.tsv").write_text(
            "".join(f"{i + 1}\t{terms[i][0]}\t{terms[i][1]}\n" for i in with_term),  # type: ignore[index]
            encoding="utf-8",
        )
        (out / "constrained.txt").write_text("".join(x + "\n" for x in kept_out))
        (out / "plain.txt").write_text("".join(x + "\n" for x in plain))
    return {
        "with a term": len(with_term),
        "terms kept %": round(100 * kept / len(with_term), 2),
        "outputs repeating a term %": round(100 * repeated / len(with_term), 2),
        "BLEU without / with terms": [round(before.bleu, 2), round(after.bleu, 2)],
        "chrF without / with terms": [round(before.chrf, 2), round(after.chrf, 2)],
        "BLEU without / with, sentences with a term": [
            round(sub_before.bleu, 2),
            round(sub_after.bleu, 2),
        ],
        "output / reference length (words and marks), without / with terms": [
            round(sum(map(len, map(words, x))) / sum(map(len, map(words, ref))), 3)
            for x in (plain, kept_out)
        ],
        "seconds with terms": round(terms_s, 1),
    }


def speed(args: argparse.Namespace) -> dict:
    import torch

    from aiayn.decode.beam import beam_search
    from aiayn.decode.translate import source_batch

    terms = read_terms(args.terms)
    src_all = (Path(args.data) / "test.src.txt").read_text(encoding="utf-8").splitlines()
    model, tokenizer, cfg = open_model(args.model)
    cfg = cfg.replace(beam=4)
    picked = terms[: args.sentences]
    lines = [src_all[n - 1] for n, _, _ in picked]
    ids = tokenizer.encode(lines)
    order = sorted(range(len(lines)), key=lambda i: len(ids[i]))  # batches of like length
    batches = [order[i : i + 32] for i in range(0, len(order), 32)]
    controls = term_controls(tokenizer, [(s, t) for _, s, t in picked])
    m = model.cfg

    def run(with_terms: bool) -> float:
        start = time.perf_counter()
        with torch.inference_mode():
            for batch in batches:
                src = source_batch([ids[i] for i in batch], m.eos_id, m.pad_id, "cpu")
                beam_search(model, src, cfg, [controls[i] for i in batch] if with_terms else None)
        return len(lines) / (time.perf_counter() - start)

    run(False), run(True)  # warm-up
    found: dict[str, list[float]] = {"without terms": [], "one term each": []}
    for r in range(args.repeats):
        for name in list(found) if r % 2 == 0 else list(found)[::-1]:
            found[name].append(run(name != "without terms"))
    ratio = [b / a for a, b in zip(found["without terms"], found["one term each"], strict=True)]
    return summary(found, "sentences/s") | {
        "ratio (with / without), per round": summary_one(ratio),
        "sentences": len(lines),
        "batch": 32,
        "beam": 4,
    }


def prefix(args: argparse.Namespace) -> dict:
    import torch

    from aiayn.decode.beam import beam_search
    from aiayn.decode.controls.steering import SentenceControls
    from aiayn.decode.translate import source_batch

    sys.path.insert(0, str(HERE.parent))  # the tests' stand-in that decodes one step per call
    from tests.decode.test_controls import OneStepAtATime

    src_all = (Path(args.data) / "test.src.txt").read_text(encoding="utf-8").splitlines()
    model, tokenizer, cfg = open_model(args.model)
    m = model.cfg
    outputs = tokenizer.encode(
        (args.out / "plain.txt").read_text(encoding="utf-8").splitlines()
        if args.out and (args.out / "plain.txt").exists()
        else translate(model, tokenizer, src_all[:200], cfg)
    )
    long = [i for i, y in enumerate(outputs) if len(y) >= 30 + 10][: args.sentences]
    stepwise = OneStepAtATime(model)
    found: dict[str, list[float]] = {
        "prefix, one pass": [],
        "no prefix": [],
        "prefix, stepwise": [],
    }
    for r in range(args.repeats):
        for i in long:
            y = outputs[i]
            n = len(y) - 30  # the continuation's pieces
            src = source_batch(tokenizer.encode([src_all[i]]), m.eos_id, m.pad_id, "cpu")
            fixed = cfg.replace(beam=4, max_len_a=0.0)
            runs = {
                "prefix, one pass": (model, fixed.replace(min_len=len(y), max_len_b=len(y) + 1)),
                "no prefix": (model, fixed.replace(min_len=n, max_len_b=n + 1)),
                "prefix, stepwise": (stepwise, fixed.replace(min_len=len(y), max_len_b=len(y) + 1)),
            }
            names = list(runs) if r % 2 == 0 else list(runs)[::-1]
            for name in names:
                model_, c = runs[name]
                ctl = None if name == "no prefix" else [SentenceControls(prefix=tuple(y[:30]))]
                with torch.inference_mode():
                    beam_search(model_, src, c, ctl)  # warm
                    start = time.perf_counter()
                    beam_search(model_, src, c, ctl)
                found[name].append(time.perf_counter() - start)
    per = len(long)
    ratio = [
        statistics.fmean(found["prefix, one pass"][k : k + per])
        / statistics.fmean(found["no prefix"][k : k + per])
        for k in range(0, len(found["no prefix"]), per)
    ]
    step = [
        statistics.fmean(found["prefix, stepwise"][k : k + per])
        / statistics.fmean(found["no prefix"][k : k + per])
        for k in range(0, len(found["no prefix"]), per)
    ]
    return {
        "sentences": per,
        "ratio one pass / no prefix, per round": summary_one(ratio),
        "ratio stepwise / no prefix, per round": summary_one(step),
    }


def ab(args: argparse.Namespace) -> dict:
    """decode_bench's "aiayn fp32" child, with --main's sources and with ours, in turns."""
    ours = str(HERE.parent / "src")
    sides = {"main": str(Path(args.main).resolve()), "this branch": ours}
    with tempfile.TemporaryDirectory() as tmp:
        make_bench_dir(Path(tmp), Path(args.data))
        found: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
        for r in range(args.repeats):
            for side in list(sides) if r % 2 == 0 else list(sides)[::-1]:
                env = {**os.environ, "PYTHONPATH": sides[side], "OMP_NUM_THREADS": "1"}
                done = subprocess.run(
                    [
                        sys.executable,
                        str(HERE / "decode_bench.py"),
                        "--child",
                        "aiayn fp32",
                        "--dir",
                        tmp,
                        "--out-len",
                        "50",
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                for config, s in json.loads(done.stdout.strip().splitlines()[-1]).items():
                    batch = int(config.split(",")[0])
                    found[side].setdefault(config, []).append(batch * 50 / s)
                print(f"round {r + 1}: {side} done", file=sys.stderr, flush=True)
    out = {}
    for config in found["main"]:
        a, b = found["main"][config], found["this branch"][config]
        out[config] = {
            "main tokens/s": summary_one(a),
            "this branch tokens/s": summary_one(b),
            "ratio per round": summary_one([y / x for x, y in zip(a, b, strict=True)]),
        }
    return out


def make_bench_dir(out: Path, data: Path) -> None:
    """decode_bench's set-up, its aiayn part only: random `small` weights and the sources."""
    import torch

    from aiayn import Transformer, preset
    from aiayn.data.tokenizer import Tokenizer

    torch.manual_seed(0)
    tok = Tokenizer(data)
    cfg = preset("small", vocab_size=tok.vocab_size, positional="concatenated")
    Transformer(cfg).eval().save(out / "aiayn")
    g = torch.Generator().manual_seed(0)
    sources = {}
    for batch in (1, 32):
        src = torch.randint(4, cfg.vocab_size, (batch, 31), generator=g)
        src[:, -1] = cfg.eos_id
        sources[batch] = {"ids": src.tolist(), "pieces": [tok.pieces(r[:-1].tolist()) for r in src]}
    (out / "sources.json").write_text(json.dumps(sources))


def summary_one(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def summary(found: dict[str, list[float]], unit: str) -> dict:
    return {f"{k} {unit}": summary_one(v) for k, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["quality", "speed", "prefix", "ab"])
    parser.add_argument("--model", default="runs/race")
    parser.add_argument("--data", default="data/en-de")
    parser.add_argument("--n", type=int, default=None, help="test lines (default: all)")
    parser.add_argument("--out", type=Path, default=Path("runs/glossary-bench"))
    parser.add_argument(
        "--terms", type=Path, help="terms.tsv from `quality` (quality: measure these pairs again)"
    )
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--beam", type=int, help="quality: beam size (default: the model's)")
    parser.add_argument(
        "--one-setting",
        action="store_true",
        help="quality: sentences with terms under the model's length setting for free search, "
        "not the one chosen for terms",
    )
    parser.add_argument(
        "--pick",
        nargs="+",
        choices=["longest", "random"],
        default=["longest", "random"],
        help="quality: which eligible term per sentence (each one measured)",
    )
    parser.add_argument("--seed", type=int, default=0, help="quality: --pick random's seed")
    parser.add_argument("--main", default="../main/src", help="ab: main's src directory")
    args = parser.parse_args()
    if args.what == "speed" and args.terms is None:
        args.terms = args.out / "terms.tsv"
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next((x.split(":", 1)[1].strip() for x in cpu.splitlines() if "Model name" in x), "?")
    import torch

    result = {"what": args.what, "cpu": name, "threads": torch.get_num_threads()}
    result |= {"quality": quality, "speed": speed, "prefix": prefix, "ab": ab}[args.what](args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
