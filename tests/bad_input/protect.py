"""Bad protected-span patterns (issue 55): each named by where it came from, its value, and
what to write instead; and `--too-long` and the API's new fields refused with their choices."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, serve_request, translate_with


def with_pattern_file(text: bytes | None, *flags: str) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn translate --protect-file TMP/patterns.txt` (none written when `text` is None)."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        if text is not None:
            (tmp / "patterns.txt").write_bytes(text)
        return translate_with("--protect-file", str(tmp / "patterns.txt"), *flags)(f, tmp)

    return case


CASES = [
    Case(
        "--protect: not a regular expression",
        translate_with("--protect", "TKT-("),
        2,
        ("--protect 'TKT-('", "not a regular expression", "missing )", "e.g."),
    ),
    Case(
        "--protect: matches the empty string",
        translate_with("--protect", "x*"),
        2,
        ("--protect 'x*'", "matches the empty string", "at least one character"),
    ),
    Case(
        "--protect-file: a bad line among good ones",
        with_pattern_file(b"# tickets\nTKT-\\d+\n\n[unclosed\n"),
        2,
        ("TMP/patterns.txt, line 4", "'[unclosed'", "not a regular expression"),
    ),
    Case(
        "--protect-file: missing",
        with_pattern_file(None),
        2,
        ("--protect-file TMP/patterns.txt", "cannot read it", "one regular expression a line"),
    ),
    Case(
        "--protect-file: not UTF-8",
        with_pattern_file("café\n".encode("latin-1")),
        2,
        ("--protect-file TMP/patterns.txt", "cannot read it", "UTF-8"),
    ),
    Case(
        "--too-long: an unknown policy",
        translate_with("--too-long", "cut"),
        2,
        ("--too-long", "'cut'", "split", "truncate"),
    ),
    Case(
        "API protect: not a regular expression",
        serve_request('{"text": "The dog.", "protect": ["TKT-("]}'),
        422,
        ("protect 'TKT-('", "not a regular expression"),
    ),
    Case(  # `regex`'s time limit: the server is not held by one request's pattern
        "API protect: a pattern that backtracks without end",
        serve_request('{"text": "' + "a" * 60 + 'b", "protect": ["(a|aa)+$"]}'),
        422,
        ("protect pattern '(a|aa)+$'", "took over 1 s", "write a simpler pattern"),
    ),
    Case(
        "API protect: a string, not a list",
        serve_request('{"text": "The dog.", "protect": "TKT-\\\\d+"}'),
        422,
        ("protect", "list"),
    ),
    Case(
        "API no_protect: not a boolean",
        serve_request('{"text": "The dog.", "no_protect": "yes"}'),
        422,
        ("no_protect", "boolean"),
    ),
]
