"""Fuzzed glossary reader (`aiayn translate --glossary terms.tsv`, the API's `glossary`): damaged
and wrongly encoded files, and matching on generated lines. The prefix file is read by the same
reader as the input (tests/fuzz/test_corpus.py)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from aiayn.data.glossary import Glossary
from tests.fuzz.conftest import FUZZ
from tests.fuzz.mutate import huge_line, mutated, read_or_refuse, scratch, wrongly_encoded

TSV = b"God\tGott\nthe earth\tdie Erde\nLORD\tHERR\n\nlight\tLicht\n"
WORDS = st.sampled_from(["God", "god", "GOD", "earth", "the", "Straße", "STRASSE", "İ", "x.y"])
PHRASES = st.lists(WORDS | st.text(max_size=6), min_size=1, max_size=3).map(" ".join)


@FUZZ
@given(
    mutated(TSV)
    | huge_line()
    | st.lists(st.text(max_size=12), max_size=6).flatmap(wrongly_encoded)
    | st.binary(max_size=256)
)
@example(b"\xef\xbb\xbfGod\tGott\n")  # a byte-order mark before the first term
def test_a_glossary_file_reads_or_names_the_line(raw: bytes):
    with scratch() as tmp:
        path = tmp / "terms.tsv"
        path.write_bytes(raw)
        glossary = read_or_refuse(lambda: Glossary.load(path), path)
        if glossary is not None:
            for term in glossary.terms:
                assert term.source == term.source.strip() and term.source
                assert not term.source.startswith("\ufeff")
                assert "\t" not in term.source + term.target


@FUZZ
@given(st.lists(st.tuples(PHRASES, PHRASES), max_size=5), PHRASES, st.booleans())
def test_a_term_is_found_wherever_its_words_stand(pairs, line: str, case: bool):
    glossary = read_or_refuse(lambda: Glossary.of(pairs, case, name="api"), Path("api"))
    if glossary is None:
        return
    found = glossary.terms_for(f"{line} ")
    assert all(term in glossary.terms for term in found)
    fold = str if case else str.casefold
    targets = {fold(t.source): t.target for t in found}
    for term in glossary.terms:  # a term written out in the line, as a whole word, is found
        if f" {term.source} " in f" {line} ":  # (a repeated pair is kept once)
            assert targets.get(fold(term.source)) == term.target, (term, line)
