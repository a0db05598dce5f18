"""Bad `aiayn prepare --langs` requests: a clear error naming the value and what to do, before
any work, and a data directory already there left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, copy, digest
from tests.data.conftest import make_bible_db


def prepare_over_data(*argv: str) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn prepare --out DATA ...` over a copy of good data, which must stay as it was."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        before = digest(data)
        names = {"DB": str(make_bible_db(tmp / "bible.db", 1, 2, 3)), "TSV": str(f.corpus)}
        out = aiayn(["prepare", "--out", str(data), *(names.get(a, a) for a in argv)])
        return Outcome(out.code, out.message, digest(data) == before, out.traceback)

    return case


KNOWN = "ar, bn, de, en, es, fa, fr, hi, id, it, ja, ko, pl, pt, ro, ru, sw, tl, tr, uk, vi, zh"
CASES = [
    Case(
        "prepare --langs with an unknown language code",
        prepare_over_data("--langs", "en,de,xx"),
        2,
        ("--langs en,de,xx: unknown language 'xx'", KNOWN, "--langs all"),
    ),
    Case(
        "prepare --langs with one language",
        prepare_over_data("--langs", "de"),
        2,
        ("--langs de", "at least two languages", "--src-lang/--tgt-lang"),
    ),
    Case(
        "prepare --langs with a database lacking a language's version",
        prepare_over_data("--langs", "en,de,fr", "--bible-db", "DB"),
        2,
        ("bible.db: no Bible version for fr (version 'l')", "it has versions", "--langs"),
    ),
    Case(
        "prepare --langs with --corpus and --src-lang",
        prepare_over_data("--langs", "en,de", "--corpus", "TSV", "--src-lang", "fr"),
        2,
        ("cannot take --corpus/--synthetic, --src-lang", "drop --langs for one language pair"),
    ),
    Case(
        "prepare --langs with --valid files",
        prepare_over_data("--langs", "en,de", "--valid", "TSV"),
        2,
        ("cannot take --valid",),
    ),
    Case(
        "prepare --langs with an unknown --pivot",
        prepare_over_data("--langs", "en,de", "--pivot", "xx"),
        2,
        ("--pivot xx: not a language code", "--pivot none"),
    ),
    Case(
        "prepare --langs with a --pivot not among them",
        prepare_over_data("--langs", "en,de", "--pivot", "fr"),
        2,
        ("--pivot fr: not among --langs en,de", "--pivot none"),
    ),
    Case(
        "prepare --pivot without --langs",
        prepare_over_data("--pivot", "none"),
        2,
        ("--pivot goes with --langs",),
    ),
]
