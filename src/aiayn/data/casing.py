"""Upper- and title-casing of a line, for case-robust training and evaluation.

Models trained on ordinary text translate ALL-CAPS and Title-Case input badly; the Firefox
translation models (mozilla/translations) train on a share of pairs cased this way on both
sides. Pure Python (str.upper and a per-word first letter), so no system library is needed.

Scripts without case (Chinese, Arabic, Hindi...) come back unchanged. German ß upper-cases to
"SS", as Unicode's full case mapping (and str.upper) has it. Tags such as `<2de>` (a
multilingual model's target-language piece) are left exactly as they are.
"""

from __future__ import annotations

import re

from aiayn.data.sources import DataError

CASES = ("as-is", "upper", "title")  # `aiayn evaluate --case`; training draws upper or title

_TAG = re.compile(r"(<[^<>\s]+>)")  # kept as it is: a model's tag pieces are case-sensitive
_WORD = re.compile(r"\S+")


def upper_case(line: str) -> str:
    """The line in capitals ("Love thy neighbour" -> "LOVE THY NEIGHBOUR")."""
    return _outside_tags(line, str.upper)


def title_case(line: str) -> str:
    """Each word's first letter a capital, the rest as it was: "the LORD's day" -> "The
    LORD's Day". Unlike str.title, the rest of a word is never lowered and a letter after an
    apostrophe or hyphen is not a word start ("don't" -> "Don't", "well-known" ->
    "Well-known"); a word that begins with a digit keeps its letters ("2nd")."""
    return _outside_tags(line, lambda text: _WORD.sub(_capitalise_first, text))


def apply_case(line: str, case: str) -> str:
    """The line in `case`: one of CASES."""
    if case == "upper":
        return upper_case(line)
    if case == "title":
        return title_case(line)
    if case == "as-is":
        return line
    raise ValueError(f"unknown case {case!r}; choose one of {', '.join(CASES)}")


def check_case_copies(p: float) -> None:
    """`prepare --case-copies P`: a fraction of the lines, in [0, 1]."""
    if not 0.0 <= p <= 1.0:
        raise DataError(
            f"--case-copies must be a fraction of the lines in [0, 1] (0.1 is a tenth), got {p}"
        )


def _capitalise_first(match: re.Match[str]) -> str:
    """A word with its first letter title-cased, if no letter or digit comes before it
    ("(and" -> "(And", "'tis" -> "'Tis", "2nd" -> "2nd")."""
    word = match.group(0)
    for i, char in enumerate(word):
        if char.isalpha():
            return word[:i] + char.title() + word[i + 1 :]
        if char.isdigit():
            return word
    return word


def _outside_tags(line: str, change) -> str:
    """`change` applied to the text between tags (split keeps the tags at odd places)."""
    parts = _TAG.split(line)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))
