"""Bad glossaries, prefixes and suppressed words (issue 30): each named by file, line and value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, serve_request

LINES = "The dog sees a cat.\nA cat is big.\n"


def translate_controlled(
    *flags: str, glossary: str | None = None, prefix: str | None = None, lines: str = LINES
) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn translate` on two lines with a glossary file and/or a prefix file of this text."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / "in.txt").write_text(lines, encoding="utf-8")
        extra = []
        if glossary is not None:
            (tmp / "terms.tsv").write_text(glossary, encoding="utf-8")
            extra += ["--glossary", str(tmp / "terms.tsv")]
        if prefix is not None:
            (tmp / "prefix.txt").write_text(prefix, encoding="utf-8")
            extra += ["--target-prefix", str(tmp / "prefix.txt")]
        model = ["--model", str(f.run), "--input", str(tmp / "in.txt"), *extra, *flags]
        return aiayn(["translate", *model])

    return case


CASES = [
    Case(
        "glossary line without a tab",
        translate_controlled(glossary="dog\tHund\ncat Katze\n"),
        2,
        ("TMP/terms.tsv, line 2", "'cat Katze'", "no tab", "source term<TAB>target term"),
    ),
    Case(
        "glossary line with an empty target",
        translate_controlled(glossary="dog\t \n"),
        2,
        ("TMP/terms.tsv, line 1", "target term is empty", "'dog'"),
    ),
    Case(
        "glossary source term with two targets",
        translate_controlled(glossary="dog\tHund\ncat\tKatze\nDog\tRüde\n"),
        2,
        ("TMP/terms.tsv, line 3", "'Dog'", "'Hund'", "line 1", "keep one"),
    ),
    Case(
        "glossary term longer than the output limit",
        translate_controlled(
            "--max-len-b", "2", "--max-len-a", "0", glossary="dog\tHund Katze Haus\n"
        ),
        2,
        ("TMP/terms.tsv, line 1", "'Hund Katze Haus'", "input line 1", "--max-len-b"),
    ),
    Case(
        "glossary terms that cannot all fit (best effort)",
        translate_controlled(
            "--max-len-b", "8", "--max-len-a", "0", glossary="dog\tHund\ncat\tKatze\nsees\tsieht\n"
        ),
        0,
        ("warning: input line 1", "'dog' -> 'Hund'", "'sees' -> 'sieht'", "best effort"),
    ),
    Case(
        "glossary term also suppressed",
        translate_controlled("--suppress", "Katze", glossary="dog\tHund\ncat\tKatze\n"),
        2,
        ("TMP/terms.tsv, line 2", "'Katze'", "also suppressed", "drop one"),
    ),
    Case(
        "prefix file with fewer lines than the input",
        translate_controlled(prefix="Der Hund\n"),
        2,
        ("TMP/prefix.txt", "1 prefix line(s) for 2 input line(s)", "input line 2 has none"),
    ),
    Case(
        "--glossary-case without --glossary",
        translate_controlled("--glossary-case"),
        2,
        ("--glossary-case needs --glossary",),
    ),
    Case(
        "API glossary pair without a target",
        serve_request('{"text": "The dog.", "glossary": [["dog"]]}'),
        422,
        ("glossary entry 0", "['dog']", "not a pair"),
    ),
    Case(
        "API term also suppressed",
        serve_request('{"text": "The dog.", "glossary": [["dog", "Hund"]], "suppress": ["Hund"]}'),
        422,
        ("glossary entry 0", "'Hund'", "also suppressed"),
    ),
    Case(
        "API prefixes fewer than texts",
        serve_request('{"text": ["The dog.", "A cat."], "target_prefix": ["Der"]}'),
        422,
        ("target_prefix", "1 prefix line(s) for 2 input line(s)", "input line 2 has none"),
    ),
]
