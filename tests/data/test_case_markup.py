"""`prepare --case-markup all|upper|truecase`: words are lower-cased before SentencePiece and
their capitals become marker pieces (every capital, or runs of words in capitals only, those
lower-cased or truecased), so that ALL-CAPS (and with `all` Title-Case) text reads as the pieces
of ordinary text; text -> ids -> text is exact, and the data directory's ids are the
Tokenizer's - with `--langs` too, the language tags kept apart from the markup."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

from aiayn.data.case_markup import (
    BEGIN_TRUECASED,
    BEGIN_UPPER,
    CAPITAL,
    END_UPPER,
    EVERY_MARKER,
    MARKERS,
    mark,
    markup_of,
    unmark,
)
from aiayn.data.casing import title_case, upper_case
from aiayn.data.data_dir import DataDir
from aiayn.data.languages import tag, tagged
from aiayn.data.multilingual.options import MultiOptions
from aiayn.data.multilingual.pipeline import prepare_multilingual
from aiayn.data.token_ids import load_ids
from aiayn.data.tokenizer import UNK_ID, Tokenizer
from tests.data.conftest import prepared_tsv, synthetic_pairs, write_tsv


def round_trip(text: str, mode: str = "all") -> str:
    leading, rest = mark(text, mode)
    return unmark("".join(leading) + rest)


@pytest.mark.parametrize(
    "text",
    [
        "In the beginning God created the HEAVEN AND THE EARTH.",
        'God said, "Arise, go up to Bethel."',
        "I AM THAT I AM",
        "THE LORD'S DAY. McDonald iPhone 3:16",
        "STRAßE Ärger ÄRGER über",
        "中文 ABC <2de> x",
        "",
    ],
)
@pytest.mark.parametrize("mode", ["all", "upper", "truecase"])
def test_marking_and_unmarking_gives_the_text_back(text, mode):
    assert round_trip(text, mode) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["all", "upper", "truecase"]))
def test_any_text_comes_back_but_for_markers_of_its_own(text, mode):
    expected = text
    for m in EVERY_MARKER:
        expected = expected.replace(m, "")
    assert round_trip(text, mode) == expected


def test_capitals_become_markers_placed_before_the_space_of_their_word():
    leading, rest = mark('The HEAVEN AND EARTH, said "Arise" I')
    assert leading == [CAPITAL]
    assert rest == f'the{BEGIN_UPPER} heaven and earth{END_UPPER}, said "{CAPITAL}arise"{CAPITAL} i'
    assert mark("MIXED McCase")[1] == f"mixed{END_UPPER} McCase"
    # upper: only the regions; a capitalised word keeps its own pieces
    assert mark('The HEAVEN, said "Arise" I', "upper") == (
        [],
        f'The{BEGIN_UPPER} heaven{END_UPPER}, said "Arise" I',
    )


def test_truecase_writes_a_region_as_ordinary_text_would_be_written():
    """Each word as `recase` chooses, and a capital where ordinary text begins a sentence: the
    line's start, after a sentence's end, after an opening quote or bracket."""
    chosen = {"god": "God"}
    recase = lambda word: chosen.get(word, word)  # noqa: E731
    assert mark('SAID GOD, "ARISE. GO (UP) TO BETHEL?" AND HE WENT', "truecase", recase) == (
        [BEGIN_TRUECASED],
        f'Said God, "Arise. Go (Up) to bethel?" And he went{END_UPPER}',
    )
    # without a recase (the vocabulary's learning text) the words stay lower-cased
    assert mark("x GOD SAID", "truecase") == ([], f"x{BEGIN_TRUECASED} god said{END_UPPER}")
    assert mark("ordinary Text", "truecase", recase) == ([], "ordinary Text")
    assert unmark(f"{BEGIN_TRUECASED}Said God{END_UPPER}, he") == "SAID GOD, he"


@pytest.mark.parametrize(
    ("pieces", "mode"),
    [
        (MARKERS, "all"),
        ((BEGIN_UPPER, END_UPPER), "upper"),
        ((BEGIN_TRUECASED, END_UPPER), "truecase"),
        ((BEGIN_TRUECASED, BEGIN_UPPER, END_UPPER), ""),
        (("▁the",), ""),
    ],
)
def test_a_vocabularys_markup_is_read_from_its_pieces(pieces, mode):
    assert markup_of(pieces) == mode


def test_a_models_broken_markup_still_reads():
    assert unmark(f"{BEGIN_UPPER}in the beginning") == "IN THE BEGINNING"  # never closed
    assert unmark(f"a{END_UPPER} b{CAPITAL}") == "a b"  # a stray end, a capital at the end
    assert unmark(f"{CAPITAL}{CAPITAL} god") == " God"


@pytest.fixture(scope="module")
def markup_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("case-markup")
    corpus = write_tsv(root / "c.tsv", synthetic_pairs(600))
    return prepared_tsv(corpus, root / "data", case_markup="all")


def sources(data):
    return (data / "test.src.txt").read_text(encoding="utf-8").splitlines()


def test_cased_text_is_the_pieces_of_ordinary_text_and_comes_back_exactly(markup_data):
    tokenizer = Tokenizer(markup_data)
    assert tokenizer.case_markup == "all"
    lines = sources(markup_data)
    plain = tokenizer.encode(lines)
    markers = set(tokenizer.piece_ids(list(MARKERS)))
    for cased in (upper_case, title_case):
        ids = tokenizer.encode([cased(line) for line in lines])
        assert tokenizer.decode(ids) == [cased(line) for line in lines]
        words = [[i for i in row if i not in markers] for row in ids]
        assert words == [[i for i in row if i not in markers] for row in plain]
    assert tokenizer.decode(plain) == lines
    assert sum(row.count(UNK_ID) for row in plain) == 0
    assert tokenizer.join(tokenizer.pieces(plain[0])) == lines[0]


def test_the_directorys_ids_are_the_tokenizers_and_the_report_says_so(markup_data):
    lines = sources(markup_data)
    flat = np.fromfile(markup_data / "test.src.ids", dtype=np.uint16)
    assert flat.tolist() == [i for row in Tokenizer(markup_data).encode(lines) for i in row]
    report = json.loads((markup_data / "report.json").read_text(encoding="utf-8"))
    assert report["vocabulary"]["case_markup"] == "all"
    assert (
        "lower-cased words with their capitals as markers"
        in (markup_data / "report.txt").read_text()
    )


def test_an_ordinary_vocabulary_is_read_as_before(tmp_path):
    data = prepared_tsv(write_tsv(tmp_path / "c.tsv", synthetic_pairs(300)), tmp_path / "d")
    tokenizer = Tokenizer(data)
    lines = [*sources(data), "THE LORD SAID"]
    processor = spm.SentencePieceProcessor(model_file=str(data / "spm.model"))
    assert not tokenizer.case_markup
    assert tokenizer.encode(lines) == processor.encode(lines, out_type=int)


def test_upper_markup_keeps_ordinary_text_and_reads_capitals_as_lower_case(markup_data, tmp_path):
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(600))
    tokenizer = Tokenizer(prepared_tsv(corpus, tmp_path / "d", case_markup="upper"))
    assert tokenizer.case_markup == "upper"
    assert not {CAPITAL} & set(tokenizer.pieces(range(tokenizer.vocab_size)))
    lines = sources(markup_data)
    markers = set(tokenizer.piece_ids([BEGIN_UPPER, END_UPPER]))
    ids = tokenizer.encode([upper_case(line) for line in lines])
    assert tokenizer.decode(ids) == [upper_case(line) for line in lines]
    words = [[i for i in row if i not in markers] for row in ids]
    assert words == tokenizer.encode([line.lower() for line in lines])
    assert tokenizer.decode(tokenizer.encode(lines)) == lines
    assert not markers & {i for row in tokenizer.encode(lines) for i in row}


def test_a_multilingual_directory_marks_capitals_in_every_cased_script(tmp_path):
    """German (umlauts, ß), Russian (Cyrillic) and Turkish (dotted İ, whose lower case does not
    come back): the tags stay single pieces in front, ids are the Tokenizer's, and ALL-CAPS
    sources are their lower case's pieces in a region, in every direction."""
    out = tmp_path / "multi"
    langs = ("en", "de", "ru", "tr")
    prepare_multilingual(
        MultiOptions(
            out=out,
            langs=langs,
            valid_size=60,
            test_size=60,
            vocab_size=4000,
            bpe_sentences=12_000,
            case_markup="upper",
            progress=False,
        )
    )
    data, tokenizer = DataDir.open(out), Tokenizer(out)
    assert tokenizer.case_markup == "upper"
    assert "in capitals lower-cased inside region markers" in (out / "report.txt").read_text()
    lines = data.text("test", "src").read_text(encoding="utf-8").splitlines()
    ids, _ = load_ids(data.ids("test", "src"), data.meta.vocab_size)
    assert ids.tolist() == [i for row in tokenizer.encode(lines) for i in row]
    assert tokenizer.decode(tokenizer.encode(lines)) == lines
    markers = set(tokenizer.piece_ids([BEGIN_UPPER, END_UPPER]))
    for lang in langs:  # the sources that ask for lang, in capitals
        cased = [upper_case(line) for line in lines if line.startswith(tag(lang))][:20]
        assert cased, lang
        ids = tokenizer.encode(cased)
        assert tokenizer.decode(ids) == cased
        head = tokenizer.encode([tag(lang)])[0]
        assert all(row[: len(head)] == head for row in ids), lang
    for lang in ("en", "de", "ru"):
        text = data.text("test", lang).read_text(encoding="utf-8").splitlines()[:20]
        cased = [tagged(upper_case(line), "en" if lang != "en" else "de") for line in text]
        ids = tokenizer.encode(cased)
        assert any(markers & set(row) for row in ids), lang
        words = [[i for i in row if i not in markers] for row in ids]
        assert words == tokenizer.encode([line.lower() for line in cased]), lang


def test_truecase_markup_reads_capitals_as_the_pieces_of_ordinary_text(markup_data, tmp_path):
    """A line in capitals becomes the line as ordinary text writes it, inside a region: the
    synthetic lines ("Word word word.") come back as their own pieces plus two markers, where
    `upper`, which lower-cases the region, changes every line's first word."""
    corpus = write_tsv(tmp_path / "c.tsv", synthetic_pairs(600))
    lines = sources(markup_data)
    identical = {}
    for mode, begin in (("truecase", BEGIN_TRUECASED), ("upper", BEGIN_UPPER)):
        tokenizer = Tokenizer(prepared_tsv(corpus, tmp_path / mode, case_markup=mode))
        assert tokenizer.case_markup == mode
        markers = set(tokenizer.piece_ids([begin, END_UPPER]))
        ids = tokenizer.encode([upper_case(line) for line in lines])
        assert tokenizer.decode(ids) == [upper_case(line) for line in lines]
        assert all(markers <= set(row) for row in ids)
        words = [[i for i in row if i not in markers] for row in ids]
        plain = tokenizer.encode(lines)
        identical[mode] = sum(w == p for w, p in zip(words, plain, strict=True)) / len(lines)
    assert identical["truecase"] >= 0.9
    assert identical["upper"] == 0.0


def test_truecase_chooses_the_casing_the_vocabulary_learnt(tmp_path):
    """A name always written with a capital comes back with it, an ordinary word in lower case,
    and one the vocabulary never saw stays lower-cased."""
    pairs = [(f"{src[:-1]} in Zion.", f"{tgt[:-1]} in Zion.") for src, tgt in synthetic_pairs(600)]
    data = prepared_tsv(
        write_tsv(tmp_path / "c.tsv", pairs), tmp_path / "d", case_markup="truecase"
    )
    tokenizer = Tokenizer(data)
    common = sources(data)[0].split()[1].lower()
    assert [tokenizer.truecased(w) for w in ("zion", common, "qxv")] == ["Zion", common, "qxv"]
    begin, end = tokenizer.piece_ids([BEGIN_TRUECASED, END_UPPER])
    assert tokenizer.encode(["IN ZION"]) == [[begin, *tokenizer.encode(["In Zion"])[0], end]]
