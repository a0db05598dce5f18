"""Bad input to `aiayn backtranslate` and `aiayn distill`: a clear error naming the file, the
line or the option, and what to do; the input, the model and any partial work untouched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from unittest import mock

import aiayn.commands.options.corpus as corpus
from tests.bad_input.kit import Case, Fixtures, Outcome, aiayn, digest

FAST = ["--beam", "1", "--max-len-a", "0", "--max-len-b", "3", "--no-progress"]


class Killed(BaseException):
    """A kill, as the chunk loop sees it."""


def backtranslate(
    text: bytes | None = b"Der Hund sieht eine Katze.\n",
    *flags: str,
    out: str = "bt.tsv",
    model: str = "run",
) -> Callable[[Fixtures, Path], Outcome]:
    """`backtranslate` of `text` (None: no input file) into TMP/out with the tiny run (or the
    data directory as --model), `flags` added; the run and the input may not change."""

    def case(f: Fixtures, tmp: Path) -> Outcome:
        mono = tmp / "mono.de"
        if text is not None:
            mono.write_bytes(text)
        source = f.run if model == "run" else f.data
        before = digest(f.run), text is None or mono.read_bytes() == text
        argv = ["backtranslate", "--model", str(source), "--input", str(mono)]
        outcome = aiayn([*argv, "--out", str(tmp / out), *FAST, *flags])
        kept = (digest(f.run), text is None or mono.read_bytes() == text) == before
        return Outcome(outcome.code, outcome.message, kept, outcome.traceback)

    return case


def distill_without_sources(f: Fixtures, tmp: Path) -> Outcome:
    (tmp / "data").mkdir()
    argv = ["distill", "--teacher", str(f.run), "--data", str(tmp / "data")]
    return aiayn([*argv, "--out", str(tmp / "distilled.tsv"), *FAST])


BUILD = corpus.chunk_translator  # the real one, whatever a case patches


def killed_at_chunk_1(*args):
    translate = BUILD(*args)

    def once(part: list[str], k: int) -> list[str]:
        if k == 1:
            raise Killed
        return translate(part, k)

    return once


def resumed_with_another_beam(f: Fixtures, tmp: Path) -> Outcome:
    """Partial work left by a run killed after its first chunk (--beam 1), resumed with
    --beam 2: refused, the finished chunk kept."""
    mono = tmp / "mono.de"
    mono.write_text("Der Hund sieht eine Katze.\nRot.\nDas Haus.\n", encoding="utf-8")
    argv = ["backtranslate", "--model", str(f.run), "--input", str(mono), "--out", str(tmp / "o")]
    argv += ["--chunk-lines", "1", "--max-len-a", "0", "--max-len-b", "3", "--no-progress"]
    with mock.patch.object(corpus, "chunk_translator", killed_at_chunk_1):
        try:
            aiayn([*argv, "--beam", "1"])
        except Killed:
            pass
        else:
            raise AssertionError("the first run was to be killed at its second chunk")
    before = digest(tmp / "o.partial")
    outcome = aiayn([*argv, "--beam", "2"])
    kept = digest(tmp / "o.partial") == before and not (tmp / "o").exists()
    return Outcome(outcome.code, outcome.message, kept, outcome.traceback)


def finished_output(f: Fixtures, tmp: Path) -> Outcome:
    (tmp / "bt.tsv").write_text("hours of work\tStunden Arbeit\n", encoding="utf-8")
    outcome = backtranslate()(f, tmp)
    kept = (tmp / "bt.tsv").read_text(encoding="utf-8") == "hours of work\tStunden Arbeit\n"
    return Outcome(outcome.code, outcome.message, kept and outcome.kept, outcome.traceback)


CASES = [
    Case(
        "backtranslate --input BINARY (not UTF-8)",
        backtranslate(b"Der Hund\n\x89PNG\r\n\x1a\n\xff\xd8\n"),
        2,
        ("mono.de, line 2", "not valid UTF-8", "convert the input to UTF-8"),
    ),
    Case(
        "backtranslate --input with a NUL byte",
        backtranslate(b"Der Hund\nein\x00Bild\n"),
        2,
        ("mono.de, line 2", "NUL byte", "give UTF-8 text"),
    ),
    Case(
        "backtranslate --input MISSING",
        backtranslate(None),
        2,
        ("mono.de", "no such file", "--input names the monolingual text"),
    ),
    Case(
        "backtranslate --model DATA (not a model)",
        backtranslate(model="data"),
        2,
        ("no model here", "give a run directory"),
    ),
    Case(
        "distill --data DIR without train.src.txt",
        distill_without_sources,
        2,
        ("train.src.txt: missing", "written by `aiayn prepare`"),
    ),
    Case(
        "backtranslate resumed with other options than its partial work",
        resumed_with_another_beam,
        2,
        ("o.partial", "--beam 1 then, 2 now", "rerun the command it was begun with", "delete"),
    ),
    Case(
        "backtranslate --out in a missing directory",
        backtranslate(out="no/such/dir/bt.tsv"),
        2,
        ("bt.tsv", "no/such/dir does not exist", "create it or choose another --out"),
    ),
    Case(
        "backtranslate --out FILE that a finished run wrote",
        finished_output,
        2,
        ("bt.tsv", "exists already", "delete it or choose another --out"),
    ),
    Case(
        "backtranslate --too-long error with a line over --max-input-tokens",
        backtranslate(
            b"Ja.\nDer Hund sieht eine Katze und ein Haus.\n",
            "--max-input-tokens",
            "10",
            "--too-long",
            "error",
        ),
        2,
        ("mono.de: 1 line(s) longer than 10 pieces (line 2)", "raise --max-input-tokens"),
    ),
]
