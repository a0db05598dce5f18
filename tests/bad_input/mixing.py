"""Bad `aiayn prepare` mixes of corpora (`--corpus`, `--synthetic`, `--weights`): a clear error
naming the value and what to do, and a data directory already there left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import SMALL_PREPARE, Case, Fixtures, Outcome, aiayn, copy, digest
from tests.data.conftest import synthetic_pairs, write_tsv


def mix_over_data(*argv: str) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn prepare --out DATA ...` over a copy of good data, which must stay as it was;
    TSV: the good corpus, MORE: another good one, SMALL: 10 pairs, BINARY: bytes, not text."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        before = digest(data)
        binary = tmp / "binary.tsv"
        binary.write_bytes(
            b"".join(bytes([128 + i % 100] * 9) + b"\t\xff\xfe\n" for i in range(50))
        )
        names = {
            "TSV": str(f.corpus),
            "MORE": str(write_tsv(tmp / "more.tsv", synthetic_pairs(200, seed=5))),
            "SMALL": str(write_tsv(tmp / "small.tsv", synthetic_pairs(10, seed=6))),
            "BINARY": str(binary),
        }
        argv_ = [names.get(a, a) for a in argv]
        out = aiayn(["prepare", "--out", str(data), *argv_, *SMALL_PREPARE])
        return Outcome(out.code, out.message, digest(data) == before, out.traceback)

    return case


CASES = [
    Case(
        "prepare --weights with fewer weights than corpora",
        mix_over_data("--corpus", "TSV", "--corpus", "MORE", "--weights", "1"),
        2,
        ("--weights 1: 1 weight(s) for 2 corpora", "one per --corpus or --synthetic"),
    ),
    Case(
        "prepare --weights with a weight that is not a number",
        mix_over_data("--corpus", "TSV", "--corpus", "MORE", "--weights", "1,three"),
        2,
        ("--weights 1,three: 'three' is not a number", "1,3"),
    ),
    Case(
        "prepare --weights with a weight of 0",
        mix_over_data("--corpus", "TSV", "--corpus", "MORE", "--weights", "1,0"),
        2,
        ("more.tsv: weight 0", "above 0"),
    ),
    Case(
        "prepare --weights with a negative weight",
        mix_over_data("--corpus", "TSV", "--corpus", "MORE", "--weights", "1,-2"),
        2,
        ("more.tsv: weight -2", "above 0"),
    ),
    Case(
        "prepare --weights with an infinite weight",
        mix_over_data("--corpus", "TSV", "--corpus", "MORE", "--weights", "inf,1"),
        2,
        ("corpus.tsv: weight inf", "above 0"),
    ),
    Case(
        "prepare with a synthetic corpus given twice",
        mix_over_data("--corpus", "TSV", "--synthetic", "MORE", "--synthetic", "MORE"),
        2,
        ("more.tsv: given twice", "--weights"),
    ),
    Case(
        "prepare with one file as --corpus and as --synthetic",
        mix_over_data("--corpus", "MORE", "--synthetic", "MORE"),
        2,
        ("more.tsv: given twice",),
    ),
    Case(
        "prepare with synthetic corpora only",
        mix_over_data("--synthetic", "MORE"),
        2,
        ("every corpus is --synthetic", "--corpus"),
    ),
    Case(
        "prepare with a binary (not UTF-8) synthetic corpus",
        mix_over_data("--corpus", "TSV", "--synthetic", "BINARY"),
        2,
        ("binary.tsv", "not UTF-8 text", "iconv"),
    ),
    Case(
        "prepare with a second corpus too small for its held-out sets",
        mix_over_data("--corpus", "TSV", "--corpus", "SMALL"),
        2,
        ("small.tsv (TSV): the corpus has about 10 pairs", "--valid-size 20"),
    ),
    Case(
        "prepare with --src-file and a second corpus",
        mix_over_data("--src-file", "TSV", "--tgt-file", "TSV", "--corpus", "MORE"),
        2,
        ("--src-file/--tgt-file name one corpus", "--corpus"),
    ),
    Case(
        "prepare --langs with --weights and --synthetic",
        mix_over_data("--langs", "en,de", "--synthetic", "MORE", "--weights", "1"),
        2,
        ("cannot take --corpus/--synthetic, --weights",),
    ),
]
