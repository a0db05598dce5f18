"""Per-direction evaluation of a multilingual model (`aiayn evaluate --directions`).

A multilingual data directory holds each held-out split once per language, line-aligned
(`{split}.{lang}.txt`, aiayn.layout.DataFiles.text), so any direction, zero-shot ones included,
is scored from two of its files. Per direction: chrF; BLEU with sacreBLEU's tokenizer for the
target language (zh, ja-mecab, ko-mecab; 13a for languages written with spaces), named in the
signature; and the off-target rate, the share of outputs the language identifier
(evaluate/langid.py) does not take for the requested language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF

from aiayn.data.data_dir import DataDir
from aiayn.evaluate.langid import Identifier, off_target_rate

DIRECTION = re.compile(r"([a-z]{2,3})-([a-z]{2,3})")
# sacreBLEU's tokenizer for a target language that is not written with spaces between words
TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
Translate = Callable[[list[str], str], list[str]]  # source lines, target language -> outputs


@dataclass(frozen=True)
class DirectionScores:
    direction: str  # "en-de"
    sentences: int
    chrf: float
    chrf_signature: str
    bleu: float | None  # None: no offline tokenizer for the target language (`bleu_signature`)
    bleu_signature: str
    off_target: float  # share of outputs not identified as the target language
    trained: bool | None  # in the data directory's training directions; None: not known

    def line(self) -> str:
        bleu = "  -  " if self.bleu is None else f"{self.bleu:5.2f}"
        kind = {True: "trained", False: "zero-shot", None: ""}[self.trained]
        return (
            f"{self.direction:>7}  {self.sentences:5d}  {self.chrf:5.2f}  {bleu}  "
            f"{100 * self.off_target:5.1f}%  {kind}"
        )


HEADER = "direction  sents   chrF   BLEU  off-target"


def data_languages(data: DataDir, split: str) -> list[str]:
    """The languages whose `{split}.{lang}.txt` the directory holds, sorted."""
    pattern = re.compile(rf"{re.escape(split)}\.([a-z]{{2,3}})\.txt")
    found = (pattern.fullmatch(p.name) for p in data.root.iterdir())
    return sorted(m.group(1) for m in found if m and m.group(1) not in ("src", "tgt"))


def parse_directions(
    spec: str, data: DataDir, split: str, targets: list[str]
) -> list[tuple[str, str]]:
    """The (source, target) pairs `spec` names: "all" (every ordered pair of the directory's
    languages whose target is in `targets`, the model's languages) or "en-de,de-fr"."""
    have = data_languages(data, split)
    where = f"{data.root} (files {split}.LANG.txt: {', '.join(have) or 'none'})"
    if spec == "all":
        pairs = [(s, t) for s in have for t in have if s != t and t in targets]
        if not pairs:
            raise ValueError(
                f"--directions all: no direction to score in {where} into the model's "
                f"languages ({', '.join(targets)}); is it a multilingual data directory "
                "(`aiayn prepare --langs`)?"
            )
        return pairs
    pairs = []
    for name in spec.split(","):
        found = DIRECTION.fullmatch(name.strip())
        if found is None:
            raise ValueError(
                f"--directions {spec}: {name.strip()!r} is not a direction; give 'all' or "
                "source-target pairs of language codes, e.g. en-de,de-fr"
            )
        src, tgt = found.groups()
        for lang in (src, tgt):
            if lang not in have:
                raise ValueError(
                    f"--directions {name.strip()}: the data directory has no "
                    f"{data.text(split, lang)}: its languages are in {where}"
                )
        pairs.append((src, tgt))
    return pairs


@cache
def bleu_tokenizer(lang: str) -> tuple[str | None, str]:
    """sacreBLEU's tokenizer for a target language, and why there is none (None) if so."""
    name = TOKENIZERS.get(lang, "13a")
    try:
        BLEU(tokenize=name).corpus_score(["a"], [["a"]])
    except (ImportError, RuntimeError, OSError) as err:
        return None, f"no BLEU: tokenizer {name} unavailable ({err}); pip install sacrebleu[ja,ko]"
    return name, ""


def score_direction(
    hypotheses: list[str], references: list[str], tgt: str, identify: Identifier
) -> tuple[float, str, float | None, str, float]:
    """chrF and its signature, BLEU (target language's tokenizer) and its signature, and the
    off-target rate of one direction's outputs."""
    chrf = CHRF()
    c = chrf.corpus_score(hypotheses, [references])
    bleu_score, signature = bleu(hypotheses, references, tgt)
    off = off_target_rate(hypotheses, tgt, identify)
    return c.score, str(chrf.get_signature()), bleu_score, signature, off


def bleu(hypotheses: list[str], references: list[str], tgt: str) -> tuple[float | None, str]:
    """Corpus BLEU with the target language's tokenizer and its signature; (None, why) where
    that tokenizer is not installed. (Validation during training scores the same way.)"""
    tokenizer, why = bleu_tokenizer(tgt)
    if tokenizer is None:
        return None, why
    metric = BLEU(tokenize=tokenizer)
    return metric.corpus_score(hypotheses, [references]).score, str(metric.get_signature())


def evaluate_directions(
    data: DataDir,
    split: str,
    pairs: list[tuple[str, str]],
    translate: Translate,
    identify: Identifier,
    n: int | None = None,
    progress: Callable[[DirectionScores], None] | None = None,
) -> list[DirectionScores]:
    """Translate the first n lines (default: all) of each direction's source file into its
    target language and score them against the target file."""
    trained = set(data.meta.directions) if data.meta.directions else None
    texts: dict[str, list[str]] = {}
    for lang in sorted({x for pair in pairs for x in pair}):
        texts[lang] = data.lines(split, lang, n)
    lengths = {lang: len(lines) for lang, lines in texts.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"{data.root}: the {split}.LANG.txt files are not line-aligned ({lengths} lines); "
            f"re-run `aiayn prepare --langs ... --out {data.root}`"
        )
    results = []
    for src, tgt in pairs:
        outputs = translate(texts[src], tgt)
        chrf, chrf_sig, bleu, bleu_sig, off = score_direction(outputs, texts[tgt], tgt, identify)
        name = f"{src}-{tgt}"
        known = None if trained is None else name in trained
        found = DirectionScores(name, len(outputs), chrf, chrf_sig, bleu, bleu_sig, off, known)
        results.append(found)
        if progress is not None:
            progress(found)
    return results


def as_json(results: list[DirectionScores], **about: object) -> dict:
    """The results as JSON for benchmarks: `about` (model, split, search...) and per direction."""
    return {**about, "directions": [asdict(r) for r in results]}


def matrix(results: list[dict], key: str = "chrf") -> tuple[list[str], list[list[float | None]]]:
    """(languages, rows[source][target]) of one score from `as_json`'s directions."""
    langs = sorted({x for r in results for x in r["direction"].split("-")})
    cells: list[list[float | None]] = [[None] * len(langs) for _ in langs]
    for r in results:
        src, tgt = r["direction"].split("-")
        cells[langs.index(src)][langs.index(tgt)] = r[key]
    return langs, cells


def read_results(path: Path) -> list[dict]:
    """The directions of a JSON file written by `aiayn evaluate --directions ... --json`."""
    from aiayn.files import read_json

    fix = "write it with `aiayn evaluate --directions all --json FILE`"
    values = read_json(path, fix)
    found = values.get("directions") if isinstance(values, dict) else None
    if not isinstance(found, list) or not all(
        isinstance(r, dict) and DIRECTION.fullmatch(str(r.get("direction"))) for r in found
    ):
        raise ValueError(f"{path}: no list of directions ('directions': [...]); {fix}")
    return found
