"""Case markup: words are lower-cased before SentencePiece, and their capitals become markers.

`aiayn prepare --case-markup all` learns the vocabulary on such text plus three marker pieces;
from then on "GOD SAID" and "God said" are the pieces of "god said" with markers beside them: a
capital-letter modifier before a word, an upper-case region around a run of words in capitals.
`--case-markup upper` marks the regions alone, so that ordinary text ("God said") keeps its
own pieces and only "GOD SAID" is read as "god said" in a region. A model so prepared reads
ALL-CAPS input with the pieces it knows, and a case_augment pair differs from its lower-cased
original only in the markers. `--case-markup truecase` marks the same regions but writes each
word inside in the casing the vocabulary knows best ("GOD SAID" -> "God said" in a region,
chosen by the Tokenizer from its own pieces): an upper-cased line is then its ordinary pieces
with markers around them, so case_augment teaches the markers and little else.

This is OpenNMT Tokenizer's `case_markup` with `soft_case_regions` (Marian's case factors are
the same idea). pyonmttok itself was tried first and not kept: its markup comes with its own
pre-tokenization, which cuts words from the punctuation before them, and a word so cut is
given pieces SentencePiece never learned ('"Arise' -> '"', 'arise', where the vocabulary has
only '▁arise' and 'ar' 'ise'): 76 of the 2,154 test lines of the en-de Bible lost a word to an
unknown piece. Here the markers are placed where SentencePiece's own segmentation is kept - a
word that follows a space gets its marker before that space - so every other piece is the one
SentencePiece gives the lower-cased line, and text -> pieces -> text is exact.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from aiayn.data.casing import title_case
from aiayn.data.sources import DataError

CAPITAL, BEGIN_UPPER, END_UPPER = MARKERS = (
    "｟mrk_case_modifier_C｠",
    "｟mrk_begin_case_region_U｠",
    "｟mrk_end_case_region_U｠",
)
# a region whose words are in the vocabulary's own casing, not lower-cased (mode "truecase")
BEGIN_TRUECASED = "｟mrk_begin_case_region_T｠"
EVERY_MARKER = (*MARKERS, BEGIN_TRUECASED)
_LETTERS = re.compile(r"[^\W\d_]+")  # a run of letters: the unit that is cased
# what comes before a word that ordinary text capitalises: nothing, a sentence's end and a
# space, or an opening quote or bracket (each with the quotes and brackets that may follow)
_SENTENCE_START = re.compile(r"""(?:^|[.!?]["'’”)\]]*\s+|(?:^|\s)[("'‘“\[])[("'‘“\[]*$""")
_MARKER = re.compile("(" + "|".join(map(re.escape, EVERY_MARKER)) + ")")


# `prepare --case-markup`: every capital, runs in capitals lower-cased, or runs in capitals
# in the casing the vocabulary knows best
MODES = ("all", "upper", "truecase")


def markup_of(pieces: Iterable[str]) -> str:
    """The markup a vocabulary was prepared with, read from its pieces: "all" (it holds the
    three markers), "upper" or "truecase" (the region markers alone) or "" (none)."""
    held = set(EVERY_MARKER) & set(pieces)
    modes = {mode: set(markers(mode)) for mode in MODES}
    return next((mode for mode, needed in modes.items() if held == needed), "")


def check_markup(mode: str) -> None:
    if mode not in ("", *MODES):
        raise DataError(f"--case-markup {mode!r}: choose one of {', '.join(MODES)}")


def markers(mode: str) -> tuple[str, ...]:
    """The marker pieces a vocabulary of the mode holds."""
    if mode == "all":
        return MARKERS
    return (BEGIN_TRUECASED if mode == "truecase" else BEGIN_UPPER, END_UPPER)


def write_marked(files: Sequence[Path], out: Path, mode: str) -> None:
    """The files' lines as mark() writes them, streamed into one file: the vocabulary's
    learning text (the markers are user symbols, so they are not merged with anything)."""
    with open(out, "w", encoding="utf-8") as marked:
        for path in files:
            with open(path, encoding="utf-8") as f:
                while lines := list(itertools.islice(f, 100_000)):
                    marked.writelines(_joined(*mark(line, mode)) for line in lines)


def mark(
    text: str, mode: str = "all", recase: Callable[[str], str] | None = None
) -> tuple[list[str], str]:
    """The line's leading markers and the rest, lower-cased with markers inside:
    "In the HEAVEN AND EARTH." -> ([CAPITAL], "in the<BEGIN_UPPER> heaven and earth<END_UPPER>.").

    A run of letters in capitals (two or more) is upper, one with only its first letter a
    capital is capital, any other (lower case, mixed "McDonald", no case at all) stays as it
    is. Neighbouring upper runs, with the one-letter capitals between them ("I AM"), form one
    region. A marker goes before the space in front of its word, so that the word keeps its
    word-start piece; markers at the start of the line are returned apart (SentencePiece
    would put a word-start piece of its own in front of them). With mode "upper" only the
    regions are marked: a word with a capital first letter keeps its own pieces. With mode
    "truecase" a region's words are given to `recase` lower-cased and written as it returns
    them (a casing of the same letters: the Tokenizer's best-known form); without it they stay
    lower-cased (the vocabulary's learning text). A word where ordinary text would begin a
    sentence (the line's start, after ". " or an opening quote) gets a capital first letter.
    """
    capitals = mode == "all"
    begin = markers(mode)[-2]  # the region's opening marker
    text = _MARKER.sub("", text)  # input never carries markers of its own
    runs = [(m.start(), m.end(), _kind(m.group())) for m in _LETTERS.finditer(text)]
    region = _regions(runs)
    out, done = [], 0
    for i, (start, end, kind) in enumerate(runs):
        opens = region[i] and (i == 0 or not region[i - 1])
        closes = region[i] and (i + 1 == len(runs) or not region[i + 1])
        capital = capitals and kind == "C" and not region[i]
        marker = begin if opens else (CAPITAL if capital else "")
        anchor = done + len(text[done:start].rstrip()) if marker else start
        out += [text[done:anchor], marker, text[anchor:start]]
        run = text[start:end].lower() if region[i] or capital else text[start:end]
        if region[i] and recase is not None:
            run = capitalised(recase(run)) if _begins_sentence(text, start) else recase(run)
        out += [run, END_UPPER if closes else ""]
        done = end
    rest = "".join(out) + text[done:]
    leading = []
    while match := _MARKER.match(rest):
        leading.append(match.group())
        rest = rest[match.end() :]
    return leading, rest


def _begins_sentence(text: str, start: int) -> bool:
    """Whether ordinary text would capitalise the word at `start` (a look at the 16 characters
    before it; `^` matches at the line's real start only)."""
    return _SENTENCE_START.search(text, max(0, start - 16), start) is not None


def capitalised(word: str) -> str:
    """The word title-cased as casing.title_case does it, where that casing comes back from
    upper case (a region's words are upper-cased again when read back)."""
    capital = title_case(word)
    return capital if capital.upper() == word.upper() else word


def _joined(leading: list[str], rest: str) -> str:
    return "".join(leading) + rest


def unmark(text: str) -> str:
    """The text with its markers turned back into capitals (the inverse of mark, given its
    leading markers in front). A model's output may break the rules: an unclosed region runs
    to the end, a stray end or a capital with no word after it is dropped."""
    out, capital, upper = [], False, False
    for part in _MARKER.split(text):
        if part in EVERY_MARKER:
            capital = capital or part == CAPITAL
            upper = {BEGIN_UPPER: True, BEGIN_TRUECASED: True, END_UPPER: False}.get(part, upper)
            continue
        if upper:
            part = _LETTERS.sub(lambda run: run.group().upper(), part)
        elif capital and (match := _LETTERS.search(part)):
            i = match.start()
            part, capital = part[:i] + part[i].upper() + part[i + 1 :], False
        out.append(part)
    return "".join(out)


def _kind(run: str) -> str:
    """'U' (upper), 'C' (capital first) or '' (as it is) for a run of letters; only a
    casing that comes back exactly from its lower case is marked."""
    lower = run.lower()
    if len(run) > 1 and run.isupper() and lower.upper() == run and len(lower) == len(run):
        return "U"
    first, rest = run[0], run[1:]
    if first.isupper() and first.lower().upper() == first and rest.lower() == rest:
        return "C" if len(first.lower()) == 1 else ""
    return ""


def _regions(runs: list[tuple[int, int, str]]) -> list[bool]:
    """For each run, whether it lies in an upper-case region: a stretch of neighbouring upper
    runs and one-letter capitals that holds at least one upper run."""
    upperish = [kind == "U" or (kind == "C" and end - start == 1) for start, end, kind in runs]
    region = [False] * len(runs)
    i = 0
    while i < len(runs):
        j = i
        while j < len(runs) and upperish[j]:
            j += 1
        if any(runs[k][2] == "U" for k in range(i, j)):
            region[i:j] = [True] * (j - i)
        i = max(j, i + 1)
    return region
