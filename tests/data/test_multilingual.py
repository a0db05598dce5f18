"""`aiayn prepare --langs`: one directory for many directions, from the real Bible package
(three languages, small sizes): the held-out verses are the same in every language and none is
trained on, tags are single pieces, `.dir.npy` matches the lines, placeholders are dropped."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from aiayn.data.data_dir import DataDir
from aiayn.data.languages import split_tag, tag, tag_languages
from aiayn.data.multilingual.options import MultiOptions, parse_langs, parse_pivot
from aiayn.data.multilingual.pairs import held_out_keys
from aiayn.data.multilingual.pipeline import prepare_multilingual
from aiayn.data.multilingual.report import DropReport
from aiayn.data.multilingual.verses import (
    MERGED,
    PLACEHOLDER,
    REPEATED,
    chapter_name,
    clean_text,
    placeholder,
    read_version,
    strongs_numbered,
)
from aiayn.data.prepare import bible
from aiayn.data.sources import DataError
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import Tokenizer
from tests.data.conftest import make_bible_db

LANGS = ("en", "de", "tr")  # Turkish: 894 placeholder verses "(aynı)"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> DataDir:
    out = tmp_path_factory.mktemp("multi") / "data"
    opts = MultiOptions(
        out=out,
        langs=LANGS,
        valid_size=150,
        test_size=150,
        vocab_size=3000,
        bpe_sentences=20_000,
        progress=False,
    )
    prepare_multilingual(opts)
    return DataDir.open(out)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_meta_names_the_english_centric_directions(data):
    meta = data.meta
    assert (meta.src_lang, meta.tgt_lang) == ("multi", "multi")
    assert meta.directions == ["en-de", "de-en", "en-tr", "tr-en"]
    assert meta.n_refs == {"valid": 1, "test": 1}


def test_held_out_verses_are_the_same_verses_in_every_language(data):
    db = bible.default_db()
    verses = {lang: read_version(db, bible.DEFAULT_VERSION[lang], DropReport()) for lang in LANGS}
    held, _ = held_out_keys(verses, chapter_name(db, "4"), 1, 150, 150)
    for split in ("valid", "test"):
        assert held[split], split
        for lang in LANGS:
            assert lines(data.text(split, lang)) == [verses[lang][k] for k in held[split]]


def test_held_out_pairs_are_the_per_language_files_tagged(data):
    dirs = np.load(data.directions("test"))
    src, tgt = lines(data.text("test", "src")), lines(data.text("test", "tgt"))
    for d, name in enumerate(data.meta.directions):
        s, t = name.split("-")
        rows = np.flatnonzero(dirs == d)
        assert [split_tag(src[i]) for i in rows] == [(t, x) for x in lines(data.text("test", s))]
        assert [tgt[i] for i in rows] == lines(data.text("test", t))


def test_no_held_out_verse_is_trained_on_in_any_language(data):
    dirs = np.load(data.directions("train"))
    src, tgt = lines(data.text("train", "src")), lines(data.text("train", "tgt"))
    trained = {lang: set() for lang in LANGS}
    for i, d in enumerate(dirs):
        s, t = data.meta.directions[d].split("-")
        trained[s].add(split_tag(src[i])[1].casefold())
        trained[t].add(tgt[i].casefold())
    for lang in LANGS:
        held = {x.casefold() for split in ("valid", "test") for x in lines(data.text(split, lang))}
        assert trained[lang] and held
        assert not trained[lang] & held, lang


def test_directions_file_matches_the_lines_and_tags(data):
    for split in ("train", "valid", "test"):
        dirs = np.load(data.directions(split))
        src = lines(data.text(split, "src"))
        assert dirs.dtype == np.int16
        assert len(dirs) == len(src) == len(lines(data.text(split, "tgt")))
        assert len(dirs) == data.meta.sizes[split]
        assert set(np.unique(dirs)) == set(range(len(data.meta.directions)))
        targets = [data.meta.directions[d].split("-")[1] for d in dirs]
        assert [split_tag(line)[0] for line in src] == targets


def test_tags_are_single_pieces_of_the_vocabulary(data):
    tokenizer = Tokenizer(data.tokenizer)
    pieces = tokenizer.pieces(range(tokenizer.vocab_size))
    assert tag_languages(pieces) == sorted(LANGS)
    for lang in LANGS:
        (tag_id,) = tokenizer.piece_ids([tag(lang)])
        assert tag_id != tokenizer.unk_id
        assert tag_id in tokenizer.encode([f"{tag(lang)} In the beginning"])[0]


def test_ids_are_what_encoding_the_text_files_gives(data):
    tokenizer = Tokenizer(data.tokenizer)
    for split in ("train", "test"):
        for side in ("src", "tgt"):
            ids, offsets = load_ids(data.ids(split, side), data.meta.vocab_size)
            text = lines(data.text(split, side))
            rows = list(range(0, len(text), max(1, len(text) // 700)))
            encoded = tokenizer.encode([text[i] for i in rows])
            got = [ids[offsets[i] : offsets[i + 1]].tolist() for i in rows]
            assert got == encoded, (split, side)


def test_placeholder_verses_are_dropped_with_the_verse_they_merge_into(data):
    texts = [x for s in ("valid", "test") for x in lines(data.text(s, "tr"))]
    texts += lines(data.text("train", "tgt")) + lines(data.text("train", "src"))
    assert not [x for x in texts if "(aynı)" in x]
    report = json.loads(data.report_json.read_text(encoding="utf-8"))
    dropped = report["languages"]["tr"]["verses"]["dropped"]
    assert dropped[PLACEHOLDER] == 894 and dropped[MERGED] > 700


def test_known_placeholders_and_editorial_marks():
    for text in ["(aynı)", "-", "...", "[]", "Verszeile ohne Text", "(앞절과 동일)", "상동"]:
        assert placeholder(text) is True, text
    for text in ["[本節欠如]", "(ADDED FROM KJV: The song of songs. => Песня Песней.)"]:
        assert placeholder(text) is False, text
    assert placeholder("In the beginning God created the heavens and the earth.") is None
    assert clean_text("(7:26) L'Éternel dit à Moïse:") == "L'Éternel dit à Moïse:"
    hindi = "आदि में परमेश्‍वर ने सृष्टि की। (इब्रा. 1:10, इब्रा. 11:3)"
    assert clean_text(hindi) == "आदि में परमेश्‍वर ने सृष्टि की।"
    assert strongs_numbered("А Куш 3568 породив 3205 8804 Німрода 5248")
    assert strongs_numbered("Адам 121, Сиф 8352, Енош 583,")
    assert not strongs_numbered("Ayrıca 7 337 erkek ve kadın köle, 200 ezgici, 736 at, 245 katır")


def test_a_repeated_text_that_hides_distinct_verses_is_a_placeholder(tmp_path):
    db = make_bible_db(tmp_path / "bible.db", n_books=1, n_chapters=3, n_verses=8)
    with sqlite3.connect(db) as conn:  # 12 German verses "siehe oben", their English distinct
        conn.execute("UPDATE bible SET vText = 'siehe oben' WHERE bbName = 'e' AND vNumber > 4")
    english = {(1, c, v): f"verse {c}:{v}" for c in range(1, 4) for v in range(1, 9)}
    report = DropReport()
    kept = read_version(db, "e", report, english)
    assert "siehe oben" not in kept.values() and len(kept) == 12 - 3  # and each verse 4
    assert report.dropped[REPEATED] == 12 and report.dropped[MERGED] == 3
    # the same repeated text where the other language repeats too is a real verse
    assert len(read_version(db, "e", DropReport(), dict.fromkeys(english, "And God said,"))) == 24


def test_langs_and_pivot_parse_with_clear_errors():
    assert len(parse_langs("all")) == 22
    assert parse_langs("en, de,fr") == ("en", "de", "fr")
    assert parse_pivot("none") is None
    with pytest.raises(DataError, match=r"unknown language 'xx'.*ar, bn, de, en"):
        parse_langs("en,xx")
    with pytest.raises(DataError, match="at least two"):
        MultiOptions(out=Path("x"), langs=("en",))
    with pytest.raises(DataError, match="--pivot fr: not among --langs"):
        MultiOptions(out=Path("x"), langs=("en", "de"), pivot="fr")
    every = MultiOptions(out=Path("x"), langs=("en", "de", "fr"), pivot=None).directions
    assert len(every) == 6 and "de-fr" in every


def test_the_command_builds_a_directory_from_any_database_of_the_schema(tmp_path, capsys):
    from aiayn.cli import main

    db = make_bible_db(tmp_path / "bible.db", n_books=2, n_chapters=5, n_verses=12)
    argv = ["prepare", "--langs", "de,en", "--bible-db", str(db), "--out", str(tmp_path / "d")]
    small = ["--valid-size", "12", "--test-size", "12", "--vocab-size", "90", "--no-progress"]
    assert main([*argv, *small]) == 0
    printed = capsys.readouterr().out
    assert "directions: 2 (en-de, de-en)" in printed and "ready:" in printed
    data = DataDir.open(tmp_path / "d")
    assert data.meta.directions == ["en-de", "de-en"]  # English-centric: en first
    assert len(lines(data.text("test", "de"))) == len(lines(data.text("test", "en"))) >= 12
    # every ordered pair in --langs order, written over the directory it made
    assert main([*argv, *small, "--pivot", "none"]) == 0
    assert DataDir.open(tmp_path / "d").meta.directions == ["de-en", "en-de"]
