"""Bad termbases for term-aware training (`aiayn prepare --terms`) and bad glossary forms: a
clear error naming the file, the line and the value, before any work, and a data directory
already there left as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.controls import translate_controlled
from tests.bad_input.kit import SMALL_PREPARE, Case, Fixtures, Outcome, aiayn, copy, digest


def prepare_terms(termbase: str | None, *argv: str) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn prepare --out DATA --corpus TSV --terms TERMS ...` over a copy of good data, which
    must stay as it was; TERMS holds `termbase` (None: no such file); RUN is the tiny run."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        data = copy(f.data, tmp / "data")
        before = digest(data)
        terms = tmp / "terms.tsv"
        if termbase is not None:
            terms.write_text(termbase, encoding="utf-8")
        names = {"RUN": str(f.run)}
        argv_ = ["prepare", "--out", str(data), "--corpus", str(f.corpus), "--terms", str(terms)]
        sizes = SMALL_PREPARE if "--vocab" not in argv else HELD_OUT  # --vocab takes no size
        out = aiayn([*argv_, *(names.get(a, a) for a in argv), *sizes])
        return Outcome(out.code, out.message, digest(data) == before, out.traceback)

    return case


HELD_OUT = ["--valid-size", "20", "--test-size", "20", "--no-progress"]

CASES = [
    Case(
        "prepare --terms FILE that does not exist",
        prepare_terms(None),
        2,
        ("--terms TMP/terms.tsv: no such file", "source<TAB>target"),
    ),
    Case(
        "prepare --terms with a line without a tab",
        prepare_terms("dog\tHund\ncat Katze\n"),
        2,
        ("--terms", "TMP/terms.tsv, line 2", "'cat Katze'", "no tab"),
    ),
    Case(
        "prepare --terms with a third column that is neither exact nor inflect",
        prepare_terms("dog\tHund\tmaybe\n"),
        2,
        ("TMP/terms.tsv, line 1", "third column 'maybe'", "exact", "inflect"),
    ),
    Case(
        "prepare --terms --vocab RUN (a model that never learned the term tags)",
        prepare_terms("dog\tHund\n", "--vocab", "RUN"),
        2,
        ("has no piece <t>, <t=>, </t>", "--terms writes around each term", "without --vocab"),
    ),
    Case(
        "glossary line with a third column that is neither exact nor inflect",
        translate_controlled(glossary="dog\tHund\tinflected\n"),
        2,
        ("TMP/terms.tsv, line 1", "third column 'inflected'", "exact", "inflect"),
    ),
]
