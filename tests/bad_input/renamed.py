"""Old spellings of renamed flags (STYLE rule 18, one name per idea): each still works for a
release, doing what its new spelling does, with a warning on stderr that names the new one.
"Kept" means: the output is the new spelling's, byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn

LINES = "The dog sees a cat.\nA cat is big.\n"


def old_and_new(
    old: tuple[str, ...], new: tuple[str, ...], *flags: str
) -> Callable[[Fixtures, Path], Outcome]:
    """`aiayn translate` with the old spelling, then with the new: the same output."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        (tmp / "in.txt").write_text(LINES, encoding="utf-8")
        (tmp / "prefix.txt").write_text("Der\n\n", encoding="utf-8")
        outcomes, outputs = [], []
        for i, spelling in enumerate((old, new)):
            out = tmp / f"out{i}.txt"
            given = [a.replace("TMP", str(tmp)) for a in (*spelling, *flags)]
            argv = ["translate", "--model", str(f.run), "--input", str(tmp / "in.txt")]
            outcomes.append(aiayn([*argv, "--output", str(out), *given]))
            outputs.append(out.read_bytes() if out.exists() else None)
        first, second = outcomes
        same = outputs[0] is not None and outputs[0] == outputs[1] and second.code == first.code
        warned_again = "is now" in second.message  # the new spelling warns of nothing
        return Outcome(first.code, first.message, same and not warned_again)

    return case


def evaluate_old(f: Fixtures, tmp: Path) -> Outcome:
    """`aiayn evaluate --src FILE --ref FILE`: scored as with --src-file/--ref-file."""
    src, ref = f.data / "test.src.txt", f.data / "test.tgt.txt"
    return aiayn(["evaluate", "--model", str(f.run), "--src", str(src), "--ref", str(ref)])


CASES = [
    Case(
        "translate --source-lang de (now --src-lang)",
        old_and_new(
            ("--source-lang", "de"), ("--src-lang", "de"), "--format", "text", "--no-progress"
        ),
        0,
        ("warning: --source-lang is now --src-lang", "removed in the next release"),
    ),
    Case(
        "translate --prefix FILE (now --target-prefix)",
        old_and_new(("--prefix", "TMP/prefix.txt"), ("--target-prefix", "TMP/prefix.txt")),
        0,
        ("warning: --prefix is now --target-prefix",),
    ),
    Case(
        "evaluate --src FILE --ref FILE (now --src-file, --ref-file)",
        evaluate_old,
        0,
        ("--src is now --src-file", "--ref is now --ref-file"),
    ),
]
